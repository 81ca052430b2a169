import CSV
import Foundation

// Counts records (and touches every field) like the Python baseline does.
guard CommandLine.arguments.count == 2, let stream = InputStream(fileAtPath: CommandLine.arguments[1]) else {
    fatalError("usage: csvswift-count FILE")
}
let reader = try CSVReader(stream: stream, hasHeaderRow: true)
var rows = 0, bytes = 0
while let row = reader.next() {
    rows += 1
    for field in row { bytes += field.utf8.count }
}
print(rows, bytes)

// poi-bench-store: the PoiKit side of `make bench-store` (scripts/bench-store.sh runs it beside
// scripts/bench-store.py). Encodes N place documents, bulk-upserts them through PoiStore, then
// reads them back through a cursor, decoding every field. Prints one JSON line per phase with
// wall time and this process's user+sys CPU for that phase only.
import Foundation
import PoiStore

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func s(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return s(usage.ru_utime) + s(usage.ru_stime)
}

func wallSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

func measure<R>(_ phase: String, count: Int, _ body: () throws -> R) rethrows -> R {
    let (w0, c0) = (wallSeconds(), cpuSeconds())
    let r = try body()
    let (w1, c1) = (wallSeconds(), cpuSeconds())
    print(#"{"client":"poikit","phase":"\#(phase)","count":\#(count),"wall":\#(w1 - w0),"cpu":\#(c1 - c0)}"#)
    return r
}

/// The same documents bench-store.py builds: a place as PoiJobs maps it.
func place(_ i: Int) -> UpsertItem {
    let key = "bench:\(i)"
    var b = BSONDocumentBuilder(reservingCapacity: 400)
    b.append("importKey", string: key)
    b.append("name", string: "Place \(i)")
    b.append("placename", string: "\(i) High Street, Springfield")
    b.openDocument("location")
    b.append("type", string: "Point")
    b.openArray("coordinates")
    b.append("0", double: Double(i % 36_000) / 100 - 180)
    b.append("1", double: Double(i % 17_000) / 100 - 85)
    b.close(); b.close()
    b.append("details", string: "A benchmark place with a short description, number \(i).")
    b.append("categories", strings: ["cat\(i % 10)", "cat\(i % 7 + 10)"])
    b.openDocument("extra")
    b.append("rating", int32: Int32(i % 5))
    b.append("website", string: "https://example.com/p/\(i)")
    b.close()
    b.openDocument("source")
    b.append("file", string: "bench.csv")
    b.append("line", int64: Int64(i + 2))
    b.close()
    return UpsertItem(key: .string(key), fields: b.finish())
}

let args = CommandLine.arguments
func option(_ name: String, _ fallback: String) -> String {
    if let i = args.firstIndex(of: name), i + 1 < args.count { return args[i + 1] }
    return fallback
}
let uri = option("--uri", ProcessInfo.processInfo.environment["MONGODB_URI"] ?? "mongodb://127.0.0.1:27017")
let dbName = option("--db", "poikit_bench")
let count = Int(option("--count", "100000")) ?? 100_000
let batch = Int(option("--batch", "1000")) ?? 1000

do {
    let connection = try MongoConnection(uri: uri)
    let db = MongoDatabase(connection: connection, name: dbName)
    let collection = db.collection("bench_poikit")
    try collection.drop()
    try collection.createIndexes([IndexModel(name: "importKey_1", keys: ["importKey": 1], unique: true, sparse: true)])

    var options = UpsertOptions()
    options.batchSize = batch
    measure("write", count: count) {
        var inserted = 0
        var start = 0
        // Encode and write batch by batch, as an import streams: memory stays flat.
        while start < count {
            let end = min(start + batch, count)
            let items = (start..<end).map(place)
            do {
                inserted += try collection.upsert(items, options: options).inserted
            } catch {
                FileHandle.standardError.write(Data("poi-bench-store: \(error)\n".utf8))
                exit(3)
            }
            start = end
        }
        precondition(inserted == count, "inserted \(inserted) of \(count)")
    }
    let fields = try measure("read", count: count) { () throws -> Int in
        let cursor = try collection.find(BSONDocument(), batchSize: batch)
        var n = 0, fields = 0
        while let doc = try cursor.next() {
            n += 1
            for (_, value) in doc {
                if case .document(let d) = value { for _ in d { fields += 1 } }
                fields += 1
            }
        }
        precondition(n == count, "read \(n) of \(count)")
        return fields
    }
    _ = fields
    try collection.drop()
} catch {
    FileHandle.standardError.write(Data("poi-bench-store: \(error)\n".utf8))
    exit(3)
}

// A CSV export's rows held as cells (`CSVCell`) and, while the columns are not yet known, in a
// spool file (`CSVRowSpool`); the writer that uses them is CSVExport.swift.
#if canImport(Glibc)
import Glibc
#endif
import PoiFormats
import PoiModel
import PoiStore

/// One cell of a row: its bytes' range in the row's bytes, and what they are.
struct CSVCell {
    enum Kind: UInt8 {
        /// Text as it is (JSON-quoted in a `String(JSON)` column).
        case text
        /// An ISO 8601 date (JSON-quoted in a `String(JSON)` column).
        case date
        /// Nothing (`null` in a `String(JSON)` column).
        case null
        /// A number, boolean, list or object as JSON writes it: the same in every column.
        case json
        /// The categories cell (`CSVPlaceWriter.categoriesCell`), text a person wrote.
        case categories
        /// A coordinate as the export writes it.
        case coordinate
    }
    var kind: Kind
    var start: Int
    var end: Int
}

/// The rows of a CSV export held back until its columns are known: an unnamed temporary file
/// (removed from its folder as soon as it is made, so nothing is left behind whatever ends the
/// process), written and read back in 1 MiB blocks.
///
/// A row is its cells, each `column (UInt32) kind (UInt8) length (UInt32) bytes`, little-endian,
/// then the column `UInt32.max`. Kept in the output's folder: the disk that will hold the
/// export has room for about as much again, where `/tmp` may be a small RAM disk.
struct CSVRowSpool {
    struct Failure: Error { var reason: String }

    /// Closes the file when the spool goes, replayed or not (an export retried after a lost
    /// connection makes a new one).
    private final class Descriptor {
        let fd: Int32
        init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }
    private let descriptor: Descriptor
    private var fd: Int32 { descriptor.fd }
    private var buffer: [UInt8] = []
    private static let block = 1 << 20
    private static let rowEnd = UInt32.max

    init(folder: String?) throws(Failure) {
        let dir = folder ?? (ProcessInfoEnvironment.temporaryFolder)
        var template = Array((dir.hasSuffix("/") ? dir : dir + "/").utf8CString.dropLast()) + Array(".poi-csv-rows-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw Failure(reason: "cannot make a temporary file in \(dir) for the rows: \(String(cString: strerror(errno)))") }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        unlink(path)
        descriptor = Descriptor(fd)
        buffer.reserveCapacity(Self.block + 4096)
    }

    mutating func append(cells: [CSVCell?], bytes: [UInt8]) throws(Failure) {
        for (column, cell) in cells.enumerated() {
            guard let cell else { continue }
            Self.put(UInt32(column), to: &buffer)
            buffer.append(cell.kind.rawValue)
            Self.put(UInt32(cell.end - cell.start), to: &buffer)
            buffer.append(contentsOf: bytes[cell.start..<cell.end])
        }
        Self.put(Self.rowEnd, to: &buffer)
        if buffer.count >= Self.block { try flush() }
    }

    /// Reads every row back, in order, handing each one's cells by column to `row` (which
    /// returns false to stop).
    mutating func replay(columns: Int, _ row: ([CSVCell?], UnsafeBufferPointer<UInt8>) -> Bool) throws(Failure) {
        try flush()
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw Failure(reason: "cannot read back the rows: \(String(cString: strerror(errno)))") }
        var data: [UInt8] = []
        var at = 0
        var ended = false
        var cells = [CSVCell?](repeating: nil, count: columns)
        // Bytes from `at` on hold at least `n`, reading more as needed; false at the end.
        func need(_ n: Int) throws(Failure) -> Bool {
            while data.count - at < n {
                if ended { return false }
                if at > 0 {
                    data.removeFirst(at)
                    at = 0
                }
                let old = data.count
                data.append(contentsOf: repeatElement(0, count: max(Self.block, n)))
                let got = data.withUnsafeMutableBytes { read(fd, $0.baseAddress! + old, $0.count - old) }
                if got < 0 {
                    if errno == EINTR { data.removeLast(data.count - old); continue }
                    throw Failure(reason: "cannot read back the rows: \(String(cString: strerror(errno)))")
                }
                data.removeLast(data.count - old - got)
                if got == 0 { ended = true }
            }
            return true
        }
        while try need(4) {
            // One row: its cells' offsets are relative to where the row starts in `data`, which
            // may move when more is read, so a row is first made whole in `data`.
            for i in cells.indices { cells[i] = nil }
            var scan = 0
            while true {
                guard try need(scan + 4) else { throw Failure(reason: "the rows' temporary file ends inside a row") }
                let column = Self.get(data, at + scan)
                scan += 4
                if column == Self.rowEnd { break }
                guard try need(scan + 5) else { throw Failure(reason: "the rows' temporary file ends inside a row") }
                let kind = CSVCell.Kind(rawValue: data[at + scan]) ?? .text
                let length = Int(Self.get(data, at + scan + 1))
                scan += 5
                guard try need(scan + length) else { throw Failure(reason: "the rows' temporary file ends inside a row") }
                if Int(column) < columns { cells[Int(column)] = CSVCell(kind: kind, start: scan, end: scan + length) }
                scan += length
            }
            let goOn = data.withUnsafeBufferPointer { p in row(cells, UnsafeBufferPointer(rebasing: p[at..<(at + scan)])) }
            at += scan
            if !goOn { return }
        }
    }

    private mutating func flush() throws(Failure) {
        var written = 0
        while written < buffer.count {
            let n = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(reason: "cannot write the rows to a temporary file: \(String(cString: strerror(errno)))")
            }
            written += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    @inline(__always)
    private static func put(_ v: UInt32, to b: inout [UInt8]) {
        b.append(UInt8(truncatingIfNeeded: v))
        b.append(UInt8(truncatingIfNeeded: v >> 8))
        b.append(UInt8(truncatingIfNeeded: v >> 16))
        b.append(UInt8(truncatingIfNeeded: v >> 24))
    }

    @inline(__always)
    private static func get(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }
}

import Foundation
import PoiFormats

/// How far an import run is through its inputs, for the share of work done in its progress
/// reports, when the number of records cannot be known before they are read.
///
/// The share is the records done (written, unchanged, rejected or left to another shard) over
/// the records the input is estimated to hold, never records merely read: the reader runs ahead
/// of the writes. The estimate is the records the reader has scanned over the bytes it has read
/// (both include its read-ahead, so their ratio is sound), times the input's size. 100 % appears
/// only at the end.
struct InputPosition {
    /// Input bytes of all files; nil when one has no size (standard input, a pipe): no share.
    let bytesTotal: Int?
    /// Input bytes of the files already done.
    private var bytesDone = 0
    /// The reader at work, and the records read before its file began.
    private var current: PlaceReader?
    private var rowsReadAtFileStart = 0

    init(files: [String]) {
        bytesTotal = files.reduce(Optional(0)) { sum, file in
            var st = stat()
            guard let sum, stat(file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            return sum + Int(st.st_size)
        }
    }

    mutating func begin(_ reader: PlaceReader, rowsRead: Int) {
        current = reader
        rowsReadAtFileStart = rowsRead
    }

    mutating func end(_ reader: PlaceReader) {
        bytesDone += reader.totalBytes ?? reader.bytesRead
        current = nil
    }

    /// The share of the work `done` records are (nil without a known input size); 1 only when
    /// `final`, below 1 until then.
    func fraction(done: Int, rowsRead: Int, final: Bool) -> Double? {
        guard let total = bytesTotal, total > 0 else { return nil }
        if final { return 1 }
        // Files done count whole; the current one by its bytes per record so far.
        let bytesSeen = current?.bytesRead ?? 0
        let scanned = current?.recordsScanned ?? 0
        let estimated: Double
        if let current, scanned > 0, bytesSeen > 0 {
            let perRecord = Double(bytesSeen) / Double(scanned)
            let remainingBytes = Double(total - bytesDone - min(bytesSeen, current.totalBytes ?? bytesSeen))
            estimated = Double(rowsReadAtFileStart) + Double(scanned) + max(0, remainingBytes) / perRecord
        } else {
            estimated = Double(rowsRead)
        }
        return min(0.999, Double(done) / max(estimated, 1))
    }
}

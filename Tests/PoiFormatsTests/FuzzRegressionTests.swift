import PoiTestSupport
import Testing
@_spi(Fuzzing) @testable import PoiFormats
import PoiModel
#if canImport(Glibc)
import Glibc
#endif

/// Inputs found by `make fuzz-formats` (Tests/PoiFormatsTests/FuzzRegressions/), replayed the way
/// the harness (Fuzz/FormatsFuzz/FormatsFuzz.swift) reads them: each file as CSV and as GeoJSON,
/// once through `PlaceReader` and once through the format's reader over 1–16-byte reads; both must
/// finish, in bounded time and items, and agree item for item.
@Suite(.tags(.unit)) struct FuzzRegressionTests {
    static let dir = repoRoot + "/Tests/PoiFormatsTests/FuzzRegressions"

    static var files: [String] {
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if !name.hasPrefix(".") && !name.hasSuffix(".md") { names.append(name) }
        }
        return names.sorted()
    }

    @Test func regressionInputsReadTheSameWholeAndInPieces() throws {
        let files = Self.files
        #expect(files.count >= 4)
        for file in files {
            let f = try #require(fopen(Self.dir + "/" + file, "rb"))
            var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65536)
            while case let n = fread(&chunk, 1, chunk.count, f), n > 0 { bytes.append(contentsOf: chunk[0..<n]) }
            fclose(f)
            for format in [InputFormat.csv, .geojson] {
                for size in [1, 2, 3, 7, 16] {
                    let clock = ContinuousClock()
                    let start = clock.now
                    let reads = ReadConsistency.read(bytes, as: format, chunkSize: size)
                    #expect(clock.now - start < .seconds(10), "\(file) as \(format), chunks of \(size)")
                    #expect(!reads.stalled, "\(file) as \(format): reader not advancing")
                    #expect(reads.agree, "\(file) as \(format), chunks of \(size): \(reads.difference)")
                }
            }
        }
    }

    // The bugs behind the committed inputs, stated directly.

    @Test func csvDelimiterAndBOMDoNotDependOnTheFirstReadsSize() throws {
        // The header's first 5 bytes hold a comma, the whole header has more semicolons.
        let csv = "\u{FEFF}a,b;name;lat;lon;c;d\n1,2;A;1;2;x;y\n"
        for size in 1...8 {
            let reader = try CSVPlaceReader(source: ByteSource(bytes: Array(csv.utf8), name: "t.csv", chunkSize: size))
            #expect(reader.delimiter == 0x3B, "chunks of \(size)")
            #expect(reader.header == ["a,b", "name", "lat", "lon", "c", "d"], "chunks of \(size)")
            #expect(try reader.next()?.place?.name == "A")
        }
    }

    @Test func aHeaderOverBothLimitsIsDescribedByTheOneCrossedFirst() throws {
        var limits = ReadLimits()
        limits.maxRecordBytes = 512
        limits.maxFields = 32
        let options = ReadOptions(limits: limits)
        func reason(_ header: String, chunkSize: Int) -> String {
            let bytes = Array((header + "\nA,1,2\n").utf8)
            do {
                _ = try CSVPlaceReader(source: ByteSource(bytes: bytes, name: "h.csv", chunkSize: chunkSize), options: options)
                return "read"
            } catch {
                return "\(error)"
            }
        }
        // Bytes first (a 600-byte column, then 40 more): whole or in short reads, the same words.
        let wide = String(repeating: "x", count: 600) + String(repeating: ",y", count: 40)
        // Columns first (40 short ones, then a 600-byte one).
        let many = String(repeating: "y,", count: 40) + String(repeating: "x", count: 600)
        for size in [1, 7, 64, 1 << 16] {
            #expect(reason(wide, chunkSize: size).hasSuffix("no header line within the first 512 bytes "
                + "(a header ends with a line break within the record size limit); reading stopped there"), "chunks of \(size)")
            #expect(reason(many, chunkSize: size) == "h.csv: invalid header: the header has more than 32 columns", "chunks of \(size)")
        }
    }

    @Test func geojsonBOMAndLeadingBlanksSurviveShortReads() throws {
        let doc = "\u{FEFF}  \n {\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[2,1]},\"properties\":{\"name\":\"A\"}}"
        for size in 1...4 {
            let reader = try GeoJSONReader(source: ByteSource(bytes: Array(doc.utf8), name: "t.geojson", chunkSize: size))
            #expect(try reader.next()?.place?.name == "A", "chunks of \(size)")
            #expect(try reader.next() == nil)
        }
        #expect(throws: FormatError.emptyFile(file: "t.geojson")) {
            try GeoJSONReader(source: ByteSource(bytes: Array("\u{FEFF} \n\t ".utf8), name: "t.geojson", chunkSize: 1))
        }
    }

    @Test func overLimitRecordsGiveNoRawBytesWhateverTheChunking() throws {
        var options = ReadOptions(keepRawRecords: true)
        options.limits.maxRecordBytes = 64
        let csv = "name,lat,lon\n" + String(repeating: "x", count: 50) + "," + String(repeating: "y", count: 50) + ",3\nB,1,2\n"
        for size in [1, 5, 13, ByteSource.chunkSize] {
            let reader = try CSVPlaceReader(source: ByteSource(bytes: Array(csv.utf8), name: "t.csv", chunkSize: size), options: options)
            // Rejected for its size and skipped without buffering it: no part of it comes back.
            guard case .reject(let r, let raw)? = try reader.next() else { Issue.record("no reject"); return }
            #expect(r.reason == "record exceeds the limit of 64 bytes or 4096 fields")
            #expect(raw == nil, "chunks of \(size)")
            let next = try reader.next()
            #expect(next?.place?.name == "B")
            #expect(next?.raw == .csv(RawCSVRecord(bytes: Array("B,1,2\n".utf8), lineEndLength: 1, fieldCount: 3)), "chunks of \(size)")
        }
    }
}

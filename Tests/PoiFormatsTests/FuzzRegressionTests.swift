import Testing
@testable import PoiFormats
import PoiModel
#if canImport(Glibc)
import Glibc
#endif

/// Inputs found by `make fuzz-formats` (Tests/PoiFormatsTests/FuzzRegressions/), replayed the way
/// the harness (Fuzz/FormatsFuzz/FormatsFuzz.swift) reads them: each file as CSV and as GeoJSON,
/// once through `PlaceReader` and once through the format's reader over 1–16-byte reads; both must
/// finish, in bounded time and items, and agree item for item.
@Suite struct FuzzRegressionTests {
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

    /// The harness's limits (small, so the over-limit paths are reached).
    static let options: ReadOptions = {
        var limits = ReadLimits()
        limits.maxRecordBytes = 512
        limits.maxFields = 32
        limits.maxFeatureBytes = 2048
        limits.maxDepth = 12
        return ReadOptions(limits: limits)
    }()

    enum Outcome: Equatable {
        case place(Place)
        case reject(Reject, RawRecord?)
        case error(FormatError)
    }

    static func drain(_ next: () throws(FormatError) -> ReadItem?) -> [Outcome] {
        var out: [Outcome] = []
        do {
            while let item = try next() {
                switch item {
                case .place(let p): out.append(.place(p))
                case .reject(let r, let raw): out.append(.reject(r, raw))
                }
                if out.count > 1 << 16 { Issue.record("reader not advancing"); break }
            }
        } catch {
            out.append(.error(error))
        }
        return out
    }

    /// Whole (PlaceReader) and chunked (the format's reader, one worker) outcomes of one input.
    static func readBothWays(_ input: [UInt8], as format: InputFormat, chunk: Int) -> (whole: [Outcome], pieces: [Outcome]) {
        var bytes = input
        switch (format, InputFormat.detect(prefix: bytes[...])) {
        case (.csv, .geojson): bytes.insert(0x78, at: 0)
        case (.geojson, .csv): bytes.insert(0x7B, at: 0)
        default: break
        }
        let name = "fuzz.\(format.rawValue)"
        let whole: [Outcome]
        do {
            let reader = try PlaceReader(source: ByteSource(bytes: bytes, name: name), options: options)
            whole = drain(reader.next)
        } catch {
            whole = [.error(error)]
        }
        let source = ByteSource(bytes: bytes, name: name, chunkSize: chunk)
        let pieces: [Outcome]
        do {
            switch format {
            case .csv: pieces = drain(try CSVPlaceReader(source: source, options: options, parallelism: 1).next)
            case .geojson: pieces = drain(try GeoJSONReader(source: source, options: options).next)
            }
        } catch {
            pieces = [.error(error)]
        }
        return (whole, pieces)
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
                    let (whole, pieces) = Self.readBothWays(bytes, as: format, chunk: size)
                    #expect(clock.now - start < .seconds(10), "\(file) as \(format), chunks of \(size)")
                    #expect(whole == pieces, "\(file) as \(format), chunks of \(size)")
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

    @Test func overLimitRecordsKeepTheSameTruncatedRawFields() throws {
        var options = ReadOptions()
        options.limits.maxRecordBytes = 64
        let csv = "name,lat,lon\n" + String(repeating: "x", count: 50) + "," + String(repeating: "y", count: 50) + ",3\nB,1,2\n"
        var raws: [[String]] = []
        for size in [1, 5, 13, ByteSource.chunkSize] {
            let reader = try CSVPlaceReader(source: ByteSource(bytes: Array(csv.utf8), name: "t.csv", chunkSize: size), options: options)
            guard case .reject(let r, .csv(let raw)?)? = try reader.next() else { Issue.record("no reject"); return }
            #expect(r.reason == "record exceeds the limit of 64 bytes or 4096 fields")
            raws.append(raw)
            #expect(try reader.next()?.place?.name == "B")
        }
        // The first 64 bytes of field content, whatever the chunking.
        #expect(raws[0] == [String(repeating: "x", count: 50), String(repeating: "y", count: 14), ""])
        #expect(Set(raws).count == 1)
    }
}

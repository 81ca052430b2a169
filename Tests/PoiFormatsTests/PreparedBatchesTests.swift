import PoiTestSupport
import Testing
@testable import PoiFormats
import PoiModel

/// `PlaceReader.nextBatch(preparedBy:)` (what `poi convert` reads CSV with) hands out what
/// `next()` does, in the same order, over many batches and several sets of batches in flight,
/// and ends with the same read error after the same items. (`readAll` holds small dumps to it
/// in every reader test; these are big enough for the double buffering.)
@Suite(.tags(.process)) struct PreparedBatchesTests {
    /// `rows` records, every 7th with a latitude out of range, every 11th with a duplicate key.
    static func dump(rows: Int) -> [UInt8] {
        var text = "id,name,lat,lon,tags\n"
        for i in 0..<rows {
            let lat = i % 7 == 3 ? "95" : String(Double(i % 170) - 85 + 0.25)
            let id = i % 11 == 5 ? "dup" : "p\(i)"
            text += "\(id),Place \(i) \"q\",\(lat),\(Double(i % 360) - 180 + 0.5),a;b\n"
        }
        return Array(text.utf8)
    }

    @Test func manyBatchesComeOutAsNextGivesThem() throws {
        let bytes = Self.dump(rows: 30_000)
        // readAll compares the batched read with next() item by item.
        let (places, rejects) = try readAll(bytes: bytes, name: "big.csv")
        #expect(places.count + rejects.count == 30_000)
        #expect(rejects.count == 30_000 / 7 + (30_000 % 7 > 3 ? 1 : 0))
        let reader = try PlaceReader(source: ByteSource(bytes: bytes, name: "big.csv"))
        var batches = 0, items = 0
        while let batch = try reader.nextBatch(preparedBy: CollectingPreparer()) {
            batches += 1
            items += batch.items.count
        }
        #expect(items == 30_000)
        // 2048 records a batch: the double buffering ran over several sets.
        #expect(batches == (30_000 + CSVPlaceReader.batchRecords - 1) / CSVPlaceReader.batchRecords)
    }

    @Test func aReadErrorComesAfterTheItemsBeforeIt() throws {
        let gz = try DumpVariantsTests.gzip(Self.dump(rows: 30_000))
        let truncated = Array(gz[..<(gz.count * 2 / 3)])
        let reader = try PlaceReader(source: ByteSource(bytes: truncated, name: "cut.csv.gz"))
        var expected: [CollectedItem] = []
        var expectedFailure: FormatError?
        do { while let item = try reader.next() { expected.append(CollectedItem(item)) } } catch { expectedFailure = error }
        guard case .damagedCompression? = expectedFailure else {
            Issue.record("expected damagedCompression, got \(String(describing: expectedFailure))"); return
        }
        #expect(expected.count > 10_000)
        let batched = try readInBatches(bytes: truncated, name: "cut.csv.gz", options: ReadOptions())
        #expect(batched?.items == expected)
        #expect(batched?.failure == expectedFailure)
    }

    @Test func geoJSONIsNotReadInPreparedBatches() throws {
        let reader = try PlaceReader(source: ByteSource(bytes: Array(#"{"type":"FeatureCollection","features":[]}"#.utf8), name: "a.geojson"))
        #expect(!reader.preparesBatches)
    }
}

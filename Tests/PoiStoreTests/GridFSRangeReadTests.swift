import Foundation
import PoiTestSupport
import Testing
@testable import PoiStore

/// `GridFSStore.read`: a range a few chunks at a time (what `poi serve --gridfs` streams), and
/// `deleteWithThumbnails` (its `DELETE /files/:id`) on both stores.
@Suite(.tags(.live)) struct GridFSRangeReadTests {
    /// Three chunks of 255 KiB (the last one short), every byte position distinguishable.
    static let payload: [UInt8] = (0..<600_000).map { UInt8(truncatingIfNeeded: $0 ^ ($0 >> 8) ^ ($0 >> 16)) }

    @Test(.liveServer) func rangesComeFromTheChunksThatHoldThem() throws {
        let db = try LiveServer.database("gridfs_ranges")
        defer { LiveServer.drop(db) }
        try LiveServer.require(db.connection.probeGridFS(database: db.name), "GridFS")
        let store = GridFSStore(database: db)
        let file = try store.put(Self.payload, info: FileInfo(contentType: "image/jpeg", role: .original)).file
        let layout = try #require(try store.chunkLayout(of: file))
        #expect(layout == GridFSStore.ChunkLayout(length: 600_000, chunkSize: 261_120))

        var whole: [UInt8] = []
        var reads = 0
        while whole.count < Self.payload.count {
            let pieces = try store.read(file, layout: layout, range: whole.count..<Self.payload.count, maxChunks: 1)
            #expect(pieces.count == 1)
            whole += pieces.joined()
            reads += 1
        }
        #expect(reads == 3)
        #expect(whole == Self.payload)

        let across = try store.read(file, layout: layout, range: 261_000..<261_300, maxChunks: 4)
        #expect(across.map(\.count) == [120, 180])
        #expect(Array(across.joined()) == Array(Self.payload[261_000..<261_300]))
        let capped = try store.read(file, layout: layout, range: 5..<600_000, maxChunks: 2)
        #expect(capped.map(\.count) == [261_115, 261_120])
        #expect(try store.read(file, layout: layout, range: 599_999..<600_000, maxChunks: 1) == [[Self.payload[599_999]]])

        #expect(try db.collection("fs.chunks").deleteOne(["files_id": .objectId(file.id), "n": 1]))
        #expect(throws: StoreError.bytesDamaged(id: file.id, fileName: file.fileName, reason: "GridFS chunk 1 is missing")) {
            try store.read(file, layout: layout, range: 0..<600_000, maxChunks: 3)
        }
        #expect(try store.removeBytes(id: file.id, ext: file.ext))
        #expect(try store.chunkLayout(of: file) == nil)
    }

    @Test(.liveServer, arguments: StoreKind.allCases)
    func deleteWithThumbnailsLeavesNothing(kind: StoreKind) throws {
        try kind.withStore("delete_thumbs") { store, db, _ in
            let original = try store.put(FileStoreTests.jpeg, info: FileInfo(contentType: "image/jpeg", role: .original)).file
            let thumb = try store.add(FileStoreTests.png, info: FileInfo(contentType: "image/png", role: .thumbnail,
                                                                         thumbnailOf: original.id, spec: "256x256 inside png"))
            let other = try store.put(Self.payload, info: FileInfo(contentType: "image/jpeg", role: .original)).file

            #expect(try store.deleteWithThumbnails(original.id))
            #expect(try db.files.count() == 1)
            #expect(try store.loadBytes(id: original.id, ext: original.ext) == nil)
            #expect(try store.loadBytes(id: thumb.id, ext: thumb.ext) == nil)
            #expect(try store.get(other.id) == Self.payload)
            #expect(try store.orphans().isEmpty)
            #expect(try store.deleteWithThumbnails(original.id) == false)
        }
    }
}

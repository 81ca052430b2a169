import Foundation
import PoiTestSupport
import Testing
@testable import PoiStore

/// `FileStore.add`: the one "bytes, then the `files` document" operation, for originals (via
/// `put`) and thumbnails alike, and the file-store errors' own cases.
@Suite(.tags(.live)) struct FileStoreAddTests {
    static let thumbnail: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 9, 8, 7]

    static func thumbnailInfo(of original: ObjectId) -> FileInfo {
        FileInfo(contentType: "image/png", role: .thumbnail, width: 4, height: 3, thumbnailOf: original, spec: "4x4 inside png")
    }

    /// Two originals whose thumbnails come out byte-identical get one thumbnail each: a shared
    /// one would name only one of them in `thumbnailOf`.
    @Test(.liveServer, arguments: StoreKind.allCases)
    func identicalThumbnailsOfTwoOriginalsAreStoredTwice(kind: StoreKind) throws {
        try kind.withStore("add") { store, db, _ in
            let a = ObjectId(), b = ObjectId()
            let first = try store.add(Self.thumbnail, info: Self.thumbnailInfo(of: a))
            let second = try store.add(Self.thumbnail, info: Self.thumbnailInfo(of: b))
            #expect(first.id != second.id)
            #expect(first.sha256 == ContentDigest.sha256Hex(Self.thumbnail))
            #expect(second.sha256 == first.sha256)
            #expect(try store.thumbnails(of: a).map(\.id) == [first.id])
            #expect(try store.thumbnails(of: b).map(\.id) == [second.id])
            #expect(try store.get(second.id) == Self.thumbnail)
            #expect(try db.files.count() == 2)
        }
    }

    /// The drift the issue found: a thumbnail whose document could not be inserted left its bytes
    /// behind. A unique index on `sha256` (not PoiKit's) makes the second insert fail.
    @Test(.liveServer, arguments: StoreKind.allCases)
    func bytesAreRemovedWhenTheDocumentCannotBeInserted(kind: StoreKind) throws {
        let uniqueSHA256 = IndexModel(name: "sha256_unique", keys: ["sha256": 1], unique: true)
        try kind.withStore("addfail", prepare: { db in try db.files.createIndexes([uniqueSHA256]) }) { store, _, _ in
            let kept = try store.add(Self.thumbnail, info: Self.thumbnailInfo(of: ObjectId()))
            #expect {
                _ = try store.add(Self.thumbnail, info: Self.thumbnailInfo(of: ObjectId()))
            } throws: { error in
                guard let e = error as? StoreError, case .server(let code, _, _, _) = e else { return false }
                return code == ServerErrorCode.duplicateKey
            }
            let listing = try store.listStoredBytes()
            #expect(listing.items.map(\.name) == [kept.fileName])
            #expect(listing.temporary == [])
            #expect(try store.orphans().isEmpty)
        }
    }

    @Test(.liveServer) func missingBytesAndBadContentTypesHaveTheirOwnErrors() throws {
        let db = try LiveServer.database("fileerrors")
        let folder = FileStoreTests.tempFolder()
        defer { LiveServer.drop(db); try? FileManager.default.removeItem(atPath: folder) }
        let store = try DiskUploads(database: db, directory: folder)
        let file = try store.add(Self.thumbnail, info: FileInfo(contentType: "image/png", role: .original))
        #expect(try store.bytes(of: file) == Self.thumbnail)
        #expect(try store.removeBytes(id: file.id, ext: ".png"))
        #expect(throws: StoreError.bytesMissing(id: file.id, fileName: file.id.hex + ".png")) { _ = try store.get(file.id) }
        #expect(throws: StoreError.bytesMissing(id: file.id, fileName: file.id.hex + ".png")) { _ = try store.bytes(of: file) }
        #expect(throws: StoreError.unsupportedContentType("jpeg")) {
            _ = try store.add(Self.thumbnail, info: FileInfo(contentType: "jpeg", role: .original))
        }
        #expect(try db.files.count() == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [])
    }
}

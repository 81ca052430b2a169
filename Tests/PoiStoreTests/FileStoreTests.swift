import Foundation
import PoiTestSupport
import Testing
@testable import PoiStore

/// One suite, both implementations: the jobs must not care which store they got.
@Suite(.tags(.live)) struct FileStoreTests {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x42, count: 300_000) + [0xFF, 0xD9]
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]

    static func tempFolder() -> String {
        NSTemporaryDirectory() + "poikit-uploads-" + ObjectId().hex
    }

    @Test(.liveServer, arguments: StoreKind.allCases)
    func putGetDedupeDelete(kind: StoreKind) throws {
        try kind.withStore("files", prepare: { db in try db.ensureIndexes() }) { store, db, folder in

            let info = FileInfo(contentType: "image/jpeg", role: .original, width: 640, height: 480, originalName: "ben.jpg")
            let first = try store.put(Self.jpeg, info: info, createdAt: BSONDate(millisecondsSinceEpoch: 1_700_000_000_000))
            #expect(first.reused == false)
            #expect(first.file.ext == ".jpeg")
            #expect(first.file.length == Self.jpeg.count)
            #expect(first.file.sha256 == ContentDigest.sha256Hex(Self.jpeg))
            #expect(first.file.sha256.count == 64)

            // The backend's fields, exactly.
            let doc = try #require(try db.files.findOne(["_id": .objectId(first.file.id)]))
            #expect(doc["content-type"] == .string("image/jpeg"))
            #expect(doc["ext"] == .string(".jpeg"))
            #expect(doc["created_at"] == .date(BSONDate(millisecondsSinceEpoch: 1_700_000_000_000)))
            #expect(doc["role"] == .string("original"))
            #expect(doc["width"]?.int64Value == 640)
            #expect(doc["originalName"] == .string("ben.jpg"))
            if kind == .disk {
                #expect(FileManager.default.contents(atPath: folder + "/" + first.file.id.hex + ".jpeg") == Data(Self.jpeg))
            }

            // Same content: stored once.
            let again = try store.put(Self.jpeg, info: info)
            #expect(again.reused == true)
            #expect(again.file.id == first.file.id)
            #expect(try db.files.count() == 1)

            // A thumbnail of it, then the lookups the thumbnail job needs.
            let thumb = try store.put(Self.png, info: FileInfo(contentType: "image/png", role: .thumbnail, width: 256, height: 192,
                                                               thumbnailOf: first.file.id, spec: "256x256 inside png"))
            #expect(thumb.file.ext == ".png")
            #expect(try store.get(thumb.file.id) == Self.png)
            #expect(try store.get(first.file.id) == Self.jpeg)
            #expect(try store.file(sha256: first.file.sha256)?.id == first.file.id)
            #expect(try store.thumbnails(of: first.file.id).map(\.id) == [thumb.file.id])
            let originals = try store.files(role: .original)
            #expect(try originals.next()?.id == first.file.id)
            #expect(try originals.next() == nil)
            #expect(try store.orphans().isEmpty)

            // Delete: document and bytes.
            #expect(try store.delete(thumb.file.id) == true)
            #expect(try store.get(thumb.file.id) == nil)
            #expect(try store.loadBytes(id: thumb.file.id, ext: ".png") == nil)
            #expect(try store.delete(thumb.file.id) == false)
            #expect(try db.files.count() == 1)
            #expect(try store.orphans().isEmpty)
        }
    }

    /// `poi gc --delete` asks whether an import found a file lately, then deletes it; an import
    /// that marks the file in between must keep it. The delete itself asks again, and an import's
    /// mark covers the original's thumbnails too.
    @Test(.liveServer, arguments: StoreKind.allCases)
    func aFileAnImportMarkedSinceTheCutoffIsNotDeleted(kind: StoreKind) throws {
        try kind.withStore("reused") { store, _, _ in
            let original = try store.put(Self.jpeg, info: FileInfo(contentType: "image/jpeg", role: .original)).file
            let thumb = try store.put(Self.png, info: FileInfo(contentType: "image/png", role: .thumbnail, thumbnailOf: original.id,
                                                               spec: "256x256 inside png")).file
            let cutoff = BSONDate(millisecondsSinceEpoch: 1_800_000_000_000)
            // Never marked: deleted whatever the cutoff.
            let plain = try store.put(Self.png + [9], info: FileInfo(contentType: "image/png", role: .original)).file
            #expect(try store.delete(plain.id, unlessReusedSince: cutoff) == true)
            #expect(try store.file(plain.id) == nil)

            #expect(try store.markReused(original.id, at: BSONDate(millisecondsSinceEpoch: 1_800_000_000_001)) == true)
            #expect(try store.delete(original.id, unlessReusedSince: cutoff) == false)
            #expect(try store.delete(thumb.id, unlessReusedSince: cutoff) == false)
            #expect(try store.get(original.id) == Self.jpeg)
            #expect(try store.get(thumb.id) == Self.png)
            // Marked before the cutoff: old news, deleted.
            #expect(try store.delete(thumb.id, unlessReusedSince: BSONDate(millisecondsSinceEpoch: 1_800_000_000_002)) == true)
            #expect(try store.get(thumb.id) == nil)
            // A mark on a file already gone says so: the import stores the content anew.
            #expect(try store.delete(original.id, unlessReusedSince: BSONDate(millisecondsSinceEpoch: 1_800_000_000_002)) == true)
            #expect(try store.markReused(original.id) == false)
        }
    }

    /// gc deletes an original (no import had marked it), then an import that found it by
    /// content a moment earlier marks it: the thumbnails are marked first and survive, but the
    /// original is gone. The mark says so, and takes the thumbnails with it instead of leaving
    /// freshly marked thumbnails of nothing that gc would keep.
    @Test(.liveServer, arguments: StoreKind.allCases)
    func aMarkOnAnOriginalGCJustDeletedRemovesItsThumbnails(kind: StoreKind) throws {
        try kind.withStore("reused_gone") { store, db, _ in
            let original = try store.put(Self.jpeg, info: FileInfo(contentType: "image/jpeg", role: .original)).file
            let thumb = try store.put(Self.png, info: FileInfo(contentType: "image/png", role: .thumbnail, thumbnailOf: original.id,
                                                               spec: "256x256 inside png")).file
            let other = try store.put(Self.png + [7], info: FileInfo(contentType: "image/png", role: .original)).file
            #expect(try store.delete(original.id, unlessReusedSince: BSONDate(millisecondsSinceEpoch: 1_800_000_000_000)) == true)

            #expect(try store.markReused(original.id) == false)
            #expect(try store.file(thumb.id) == nil)
            #expect(try store.get(thumb.id) == nil)
            #expect(try db.files.count() == 1)
            #expect(try store.get(other.id) == Self.png + [7])
            #expect(try store.orphans().isEmpty)
        }
    }

    @Test(.liveServer, arguments: StoreKind.allCases)
    func orphansAreFoundBothWays(kind: StoreKind) throws {
        try kind.withStore("orphans") { store, _, _ in
            let kept = try store.put(Self.png, info: FileInfo(contentType: "image/png", role: .original))
            let lostBytes = try store.put(Self.jpeg, info: FileInfo(contentType: "image/jpeg", role: .original))
            #expect(try store.removeBytes(id: lostBytes.file.id, ext: ".jpeg"))
            let stray = ObjectId()
            try store.storeBytes([1, 2, 3], id: stray, ext: ".png")

            let report = try store.orphans()
            #expect(report.documentsWithoutBytes == [lostBytes.file.id])
            #expect(report.bytesWithoutDocument == [stray.hex + ".png"])
            #expect(report.staleTemporaryFiles == [])
            _ = kept
        }
    }

    @Test(.liveServer) func diskWriteInterruptedBeforeRenameLeavesNoFileAndNoDocument() throws {
        let db = try LiveServer.database("interrupted")
        let folder = Self.tempFolder()
        defer { LiveServer.drop(db); try? FileManager.default.removeItem(atPath: folder) }
        let store = try DiskUploads(database: db, directory: folder, beforeRename: { () throws(StoreError) in
            throw StoreError.io(path: folder, reason: "simulated crash before rename")
        })
        #expect(throws: StoreError.io(path: folder, reason: "simulated crash before rename")) {
            _ = try store.put(Self.jpeg, info: FileInfo(contentType: "image/jpeg", role: .original))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [])
        #expect(try db.files.count() == 0)
        // A crash (no cleanup) would leave only a temporary file, which orphans() reports.
        FileManager.default.createFile(atPath: folder + "/." + ObjectId().hex + ".jpeg.tmp-1a2b", contents: Data([1]))
        #expect(try store.orphans().staleTemporaryFiles.count == 1)
        #expect(try store.orphans().bytesWithoutDocument == [])
    }

    @Test func extensionIsDotSubtypeLikeTheBackend() throws {
        #expect(try FileExtension.of(contentType: "image/jpeg") == ".jpeg")
        #expect(try FileExtension.of(contentType: "image/png") == ".png")
        #expect(try FileExtension.of(contentType: "Image/PNG; charset=binary") == ".png")
        #expect(throws: StoreError.self) { try FileExtension.of(contentType: "image/../../etc") }
        #expect(throws: StoreError.unsupportedContentType("jpeg")) { try FileExtension.of(contentType: "jpeg") }
    }
}

@Suite(.tags(.unit)) struct FileExtensionSafetyTests {
    @Test func anExtThatWouldLeaveTheUploadsFolderIsReplaced() throws {
        let id = ObjectId()
        let hostile: BSONDocument = ["_id": .objectId(id), "content-type": "image/png", "ext": "x/../../etc/passwd"]
        #expect(StoredFile(document: hostile)?.ext == ".png")
        #expect(StoredFile(document: hostile)?.fileName == id.hex + ".png")
        let fine: BSONDocument = ["_id": .objectId(id), "content-type": "image/svg+xml", "ext": ".svg+xml"]
        #expect(StoredFile(document: fine)?.ext == ".svg+xml")
        #expect(!FileExtension.isPlain(".."))
        #expect(!FileExtension.isPlain("jpeg"))
        #expect(FileExtension.isPlain(".jpeg"))
    }
}

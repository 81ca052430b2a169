import Foundation
import PoiTestSupport
import Testing
@testable import PoiStore

/// Bytes that are there but damaged are `.bytesDamaged` (never a driver error), and
/// `orphans` finds them: sizes and GridFS chunk counts always, contents with `verify`.
@Suite(.tags(.live)) struct DamagedBytesTests {
    static let payload: [UInt8] = Array(repeating: 0x5A, count: 300_000)  // two GridFS chunks of 255 KiB

    @Test(.liveServer, arguments: StoreKind.allCases)
    func damagedBytesAreTypedAndFound(kind: StoreKind) throws {
        try kind.withStore("damaged") { store, db, folder in
            let cut = try store.add(Self.payload, info: FileInfo(contentType: "image/jpeg", role: .original))
            let changed = try store.add(Self.payload, info: FileInfo(contentType: "image/jpeg", role: .original))
            let fine = try store.add(Self.payload, info: FileInfo(contentType: "image/jpeg", role: .original))
            #expect(try store.hasBytes(fine))
            #expect(try store.orphans(verify: true).isEmpty)

            let expectedCut: String
            switch kind {
            case .disk:
                // Cut short, and one byte changed in place (same size: only --verify sees it).
                #expect(truncate(folder + "/" + cut.fileName, 5000) == 0)
                var bytes = Self.payload
                bytes[1000] ^= 0xFF
                try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + changed.fileName))
                expectedCut = "5000 of 300000 bytes"
                #expect(!(try store.hasBytes(cut)))
            case .gridfs:
                // The first chunk of one file gone; one byte of another's chunk changed.
                let chunks = db.collection("fs.chunks")
                #expect(try chunks.deleteOne(["files_id": .objectId(cut.id), "n": 0]))
                let first = try #require(try chunks.findOne(["files_id": .objectId(changed.id), "n": 0]))
                guard case .binary(let subtype, var data)? = first["data"] else { Issue.record("no chunk data"); return }
                data[1000] ^= 0xFF
                try chunks.updateOne(filter: ["_id": first["_id"]!], set: ["data": .binary(subtype: subtype, data: data)])
                expectedCut = "1 of 2 chunks"
            }
            #expect(throws: StoreError.bytesDamaged(id: cut.id, fileName: cut.fileName,
                                                     reason: kind == .disk ? "5000 of 300000 bytes" : "Missing chunk 0.")) {
                _ = try store.bytes(of: cut)
            }
            let cheap = try store.orphans()
            #expect(cheap.damaged == [DamagedBytes(id: cut.id, fileName: cut.fileName, reason: expectedCut)])
            #expect(cheap.documentsWithoutBytes.isEmpty && cheap.bytesWithoutDocument.isEmpty)
            let verified = try store.orphans(verify: true)
            #expect(verified.damaged == [DamagedBytes(id: cut.id, fileName: cut.fileName, reason: expectedCut),
                                         DamagedBytes(id: changed.id, fileName: changed.fileName, reason: "content does not match its sha256")])
        }
    }
}

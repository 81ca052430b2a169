import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An upload is stored only once its bytes are checked: undecodable images, images too large to
/// check, GIF and WebP containers whose headers do not hold.
@Suite("poi serve: an upload is stored only once its bytes are checked", .tags(.live, .process), .serialized, .liveServer)
struct UploadChecksTests {
    /// The magic bytes are the only check: a body that starts like a JPEG and is not one is
    /// stored (201) with no thumbnail and no size, although the thumbnail step is said to prove
    /// that the image decodes, and `poi import` refuses the same bytes as a damaged JPEG.
    @Test func undecodableImageIsRefused() throws {
        let s = try ServeHarness("t14junk")
        let junk = [0xFF, 0xD8, 0xFF, 0xE0] + Array(" this is not a jpeg at all".utf8)
        let r = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: junk)
        #expect(r.status == 415, "\(r.status) \(r.text)")
        #expect(r.header("content-type") == "application/json; charset=utf-8")
        let reason = (r.json as? [String: Any])?["error"] as? String ?? ""
        #expect(reason == "the upload is not a readable image (damaged JPEG: Premature end of JPEG file)", "\(r.text)")
        #expect(try s.count("files") == 0)
        #expect(s.uploadedNames == [], "left in uploads/ (stored or staged): \(s.uploadedNames)")
    }

    /// Found by a second round of trying `poi serve` by hand: a header declaring more pixels than the server decodes
    /// (20000×20000) skipped the decode, so HTML after a real JPEG header was stored with 201 and
    /// served back. Bytes that cannot be checked are refused (413), and nothing is kept.
    @Test func anImageTooLargeToCheckIsRefused() throws {
        let s = try ServeHarness("t14pixels")
        var jpeg = try ServeHarness.sample("coffee.jpg")
        let sof = try #require((0..<(jpeg.count - 9)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        for offset in [5, 7] { jpeg[sof + offset] = 0x4E; jpeg[sof + offset + 1] = 0x20 }  // 20000 high and wide
        let sos = try #require((0..<(jpeg.count - 4)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA })
        let headerEnd = sos + 2 + Int(jpeg[sos + 2]) << 8 + Int(jpeg[sos + 3])
        let body = Array(jpeg[..<headerEnd]) + Array("<html><script>alert(1)</script></html>".utf8) + [0xFF, 0xD9]
        let r = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: body)
        #expect(r.status == 413, "\(r.status) \(r.text)")
        let reason = (r.json as? [String: Any])?["error"] as? String ?? ""
        #expect(reason.hasPrefix("the upload is not accepted: "), "\(r.text)")
        #expect(try s.count("files") == 0)
        #expect(s.uploadedNames == [], "left in uploads/ (stored or staged): \(s.uploadedNames)")
    }

    /// A 1×1 GIF (header, logical screen, one image, trailer).
    static let gif: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF,
                                                      0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3B]

    /// A WebP container with `chunk` (fourCC) holding `payload`; `riffSize` overrides the header's.
    static func webp(chunk: String = "VP8L", payload: [UInt8] = [0x2F, 0, 0, 0, 0, 0, 0, 0], riffSize: Int? = nil) -> [UInt8] {
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        let body = Array("WEBP".utf8) + Array(chunk.utf8) + le32(payload.count) + payload
        return Array("RIFF".utf8) + le32(riffSize ?? body.count) + body
    }

    /// GIF and WebP uploads were checked by their first bytes only: `GIF89a` with a 0×0 screen,
    /// or a WebP whose RIFF size is not the body's, was stored. Their container headers are
    /// checked now (they are not decoded: README says which types are).
    @Test func gifAndWebPHeadersAreChecked() throws {
        let s = try ServeHarness("gifwebp")
        func upload(_ bytes: [UInt8], _ type: String) throws -> HTTPResult {
            try s.request("POST", "/files", headers: ["Content-Type": type], body: bytes)
        }
        #expect(try upload(Self.gif, "image/gif").status == 201)
        #expect(try upload(Self.webp(), "image/webp").status == 201)

        var flat = Self.gif
        flat[6] = 0; flat[7] = 0
        let zero = try upload(flat, "image/gif")
        #expect(zero.status == 415)
        #expect(zero.text == #"{"error":"the upload is not a readable image (a GIF whose logical screen is 0×1)"}"#)

        let long = try upload(Self.webp(riffSize: 1000), "image/webp")
        #expect(long.status == 415)
        #expect(long.text == #"{"error":"the upload is not a readable image (a WebP whose RIFF header says 1008 bytes, but the body has 28)"}"#)
        let truncated = try upload(Array(Self.webp(payload: [UInt8](repeating: 7, count: 100)).prefix(60)), "image/webp")
        #expect(truncated.status == 415, "\(truncated.text)")
        let notImage = try upload(Self.webp(chunk: "JUNK"), "image/webp")
        #expect(notImage.status == 415, "\(notImage.text)")

        #expect(try s.count("files") == 2)
        #expect(s.uploadedNames.count == 2, "\(s.uploadedNames)")
    }
}

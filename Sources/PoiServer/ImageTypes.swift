/// The image types `POST /files` accepts, and the file extension each is stored under. The
/// extension comes from this table, never from the client's header, so a Content-Type such as
/// `image/../../x` cannot name a path; the bytes must start with the type's magic.
struct AcceptedImageType: Sendable, Equatable {
    /// What the `files` document records as `content-type` (canonical spelling).
    let contentType: String
    /// `"." + subtype`, the backend's convention (`.jpeg`, `.png`).
    let fileExtension: String
    /// Whether PoiImaging decodes it (thumbnails are made for these).
    let thumbnailable: Bool
    let magic: @Sendable ([UInt8]) -> Bool

    static func == (a: Self, b: Self) -> Bool { a.contentType == b.contentType }

    static let jpeg = AcceptedImageType(contentType: "image/jpeg", fileExtension: ".jpeg", thumbnailable: true) {
        $0.count >= 3 && $0[0] == 0xFF && $0[1] == 0xD8 && $0[2] == 0xFF
    }
    static let png = AcceptedImageType(contentType: "image/png", fileExtension: ".png", thumbnailable: true) {
        $0.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }
    static let gif = AcceptedImageType(contentType: "image/gif", fileExtension: ".gif", thumbnailable: false) {
        $0.starts(with: Array("GIF87a".utf8)) || $0.starts(with: Array("GIF89a".utf8))
    }
    static let webp = AcceptedImageType(contentType: "image/webp", fileExtension: ".webp", thumbnailable: false) {
        $0.count >= 12 && $0.starts(with: Array("RIFF".utf8)) && Array($0[8..<12]) == Array("WEBP".utf8)
    }

    /// Bytes needed to check any magic, and the container headers of the types PoiImaging does
    /// not decode (`containerProblem`).
    static let magicLength = 16

    /// For the types that are not decoded (GIF, WebP), the check their container header allows,
    /// on the upload's first `magicLength` bytes and its length: a GIF's logical screen must have
    /// a size, a WebP's RIFF size must be the body's length less 8 and its first chunk an image
    /// (`VP8 `, `VP8L`, `VP8X`). Not a decode: pixel data that is damaged after a good header is
    /// stored as it came. nil when nothing is wrong (and always for JPEG and PNG, which decode).
    func containerProblem(head: [UInt8], length: Int) -> String? {
        switch contentType {
        case "image/gif":
            guard head.count >= 10, length >= 13 else { return "a GIF too short for its header" }
            let width = Int(head[6]) | Int(head[7]) << 8, height = Int(head[8]) | Int(head[9]) << 8
            return width > 0 && height > 0 ? nil : "a GIF whose logical screen is \(width)×\(height)"
        case "image/webp":
            guard head.count >= 16 else { return "a WebP too short for its header" }
            let riff = Int(head[4]) | Int(head[5]) << 8 | Int(head[6]) << 16 | Int(head[7]) << 24
            guard riff + 8 == length else {
                return "a WebP whose RIFF header says \(riff + 8) bytes, but the body has \(length)"
            }
            let chunk = String(decoding: head[12..<16], as: UTF8.self)
            return ["VP8 ", "VP8L", "VP8X"].contains(chunk) ? nil : "a WebP whose first chunk is not an image"
        default:
            return nil
        }
    }

    /// Media types (lowercase essence, parameters dropped) → type. `image/jpg` and `image/pjpeg`
    /// are what some clients send for JPEG.
    static let byMediaType: [String: AcceptedImageType] = [
        "image/jpeg": .jpeg, "image/jpg": .jpeg, "image/pjpeg": .jpeg,
        "image/png": .png, "image/gif": .gif, "image/webp": .webp,
    ]

    static let acceptedList = "image/jpeg, image/png, image/gif, image/webp"

    /// The type a Content-Type header declares, or a 415 naming what is accepted.
    static func declared(by header: String?) throws(APIError) -> AcceptedImageType {
        guard let header, !header.isEmpty else {
            throw .unsupportedMediaType("an upload needs a Content-Type; accepted: \(acceptedList)")
        }
        let essence = MediaType.essence(of: header)
        guard let type = byMediaType[essence] else {
            throw .unsupportedMediaType("\(MediaType.printable(header)) is not an accepted image type; accepted: \(acceptedList)")
        }
        return type
    }
}

enum MediaType {
    /// `type/subtype` lowercased, without parameters or surrounding blanks.
    static func essence(of header: String) -> String {
        // Already an essence (what PoiKit stores: `image/png`): asked on every download.
        if header.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x3B && !($0 >= 0x41 && $0 <= 0x5A) }) { return header }
        let head = header.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return head.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// The `boundary` parameter of a multipart Content-Type.
    static func parameter(_ name: String, of header: String) -> String? {
        for part in header.split(separator: ";").dropFirst() {
            let kv = part.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces).lowercased() == name else { continue }
            var v = kv[1].trimmingCharacters(in: .whitespaces)
            if v.count >= 2, v.hasPrefix("\""), v.hasSuffix("\"") { v = String(v.dropFirst().dropLast()) }
            return v
        }
        return nil
    }

    /// A client string fit for a message: control characters escaped, at most 100 characters.
    static func printable(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars.prefix(100) {
            if scalar.value < 0x20 || scalar.value == 0x7F { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
        }
        return (s.unicodeScalars.count > 100 ? out + "…" : out).debugDescription
    }
}

import Foundation

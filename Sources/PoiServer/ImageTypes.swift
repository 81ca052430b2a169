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

    /// Bytes needed to check any magic.
    static let magicLength = 12

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

import CCodecs

/// Everything that can go wrong turning bytes into a thumbnail. Each case names the reason in
/// words a user can act on; `description` is what `poi` prints after "file: ".
public enum ImageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Zero bytes.
    case empty
    /// The magic bytes are neither JPEG (FF D8 FF) nor PNG; `magic` is the first bytes in hex.
    case unrecognizedFormat(magic: String)
    /// The header declares more pixels than allowed; rejected before any pixel allocation.
    case tooLarge(width: Int, height: Int, maxPixels: Int)
    /// The library gave up on the file (fatal error); `reason` is its own message,
    /// e.g. "Not a JPEG file: starts with 0x89 0x50" or "IDAT: CRC error".
    case decodeFailed(format: ImageFormat, reason: String)
    /// The library decoded the file but warned about corrupt data (e.g. "Premature end of JPEG
    /// file"); rejected unless `DecodeOptions.lenient` is set.
    case corruptData(format: ImageFormat, reason: String)
    case outOfMemory(reason: String)
    case encodeFailed(format: ImageFormat, reason: String)
    /// A thumbnail spec that cannot be honoured (zero size, quality out of range, bad syntax).
    case invalidSpec(String)

    public var description: String {
        switch self {
        case .empty:
            return "empty file (0 bytes)"
        case .unrecognizedFormat(let magic):
            return "not a JPEG or PNG file: starts with 0x\(magic)"
        case .tooLarge(let w, let h, let limit):
            return "image is \(w)x\(h) (\(Self.megapixels(w * h)) MP), over the limit of \(Self.megapixels(limit)) MP"
        case .decodeFailed(let format, let reason):
            return "invalid \(format.displayName): \(reason)"
        case .corruptData(let format, let reason):
            return "damaged \(format.displayName): \(reason)"
        case .outOfMemory(let reason):
            return "out of memory: \(reason)"
        case .encodeFailed(let format, let reason):
            return "\(format.displayName) encoding failed: \(reason)"
        case .invalidSpec(let reason):
            return "invalid thumbnail spec: \(reason)"
        }
    }

    static func megapixels(_ pixels: Int) -> String {
        let tenths = (pixels + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// Maps a CCodecs result to a typed error. `format` is the one the magic bytes named.
    static func from(_ result: cc_result, format: ImageFormat?, bytes: UnsafeRawBufferPointer,
                     maxPixels: Int, info: cc_info) -> ImageError {
        let message = withUnsafeBytes(of: result.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        let fmt = format ?? .jpeg
        switch result.status {
        case CC_ERR_EMPTY: return .empty
        case CC_ERR_UNKNOWN_FORMAT: return .unrecognizedFormat(magic: magicHex(bytes))
        case CC_ERR_TOO_LARGE:
            return .tooLarge(width: Int(info.width), height: Int(info.height), maxPixels: maxPixels)
        case CC_ERR_CORRUPT_DATA: return .corruptData(format: fmt, reason: message)
        case CC_ERR_NOMEM: return .outOfMemory(reason: message)
        case CC_ERR_ENCODE: return .encodeFailed(format: fmt, reason: message)
        case CC_ERR_ARGUMENT: return .invalidSpec(message)
        default: return .decodeFailed(format: fmt, reason: message)
        }
    }

    static func magicHex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in bytes.prefix(8) {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

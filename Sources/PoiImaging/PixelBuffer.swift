import CCodecs

/// Decoded pixels, row-major, tightly packed (`width * channels` samples per row).
/// Channels: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA; alpha is straight (not premultiplied).
/// 16-bit PNGs keep their full precision: `bitDepth == 16` and samples are native-endian UInt16.
public struct PixelBuffer: Sendable, Hashable, CustomStringConvertible {
    public let width: Int
    public let height: Int
    public let channels: Int
    /// 8 or 16.
    public let bitDepth: Int
    /// `width * height * channels * (bitDepth / 8)` bytes.
    public let bytes: [UInt8]

    public init(width: Int, height: Int, channels: Int, bitDepth: Int, bytes: [UInt8]) {
        precondition(bytes.count == width * height * channels * (bitDepth / 8), "pixel byte count mismatch")
        self.width = width
        self.height = height
        self.channels = channels
        self.bitDepth = bitDepth
        self.bytes = bytes
    }

    public var hasAlpha: Bool { channels == 2 || channels == 4 }

    public var description: String { "PixelBuffer(\(width)x\(height), \(channels) channels, \(bitDepth)-bit)" }

    /// Sample value (0–255 or 0–65535).
    public func sample(x: Int, y: Int, channel: Int) -> Int {
        let index = (y * width + x) * channels + channel
        if bitDepth == 8 { return Int(bytes[index]) }
        return bytes.withUnsafeBytes { Int($0.load(fromByteOffset: index * 2, as: UInt16.self)) }
    }

    /// Copies a CCodecs image (which may have row padding) into a packed buffer. Takes the owner,
    /// not the raw struct, so the pixels cannot be freed while they are being copied.
    init(copying image: CImage) {
        self = withExtendedLifetime(image) { PixelBuffer(copyingRaw: image.raw) }
    }

    private init(copyingRaw c: cc_image) {
        let bps = Int(c.bytes_per_sample)
        let w = Int(c.width), h = Int(c.height), ch = Int(c.channels)
        let rowBytes = w * ch * bps
        let stride = Int(c.stride)
        let src = UnsafeRawPointer(c.pixels!)
        let bytes = [UInt8](unsafeUninitializedCapacity: rowBytes * h) { buf, count in
            for y in 0..<h {
                UnsafeMutableRawPointer(buf.baseAddress! + y * rowBytes)
                    .copyMemory(from: src + y * stride, byteCount: rowBytes)
            }
            count = rowBytes * h
        }
        self.init(width: w, height: h, channels: ch, bitDepth: bps * 8, bytes: bytes)
    }
}

/// Owns a `cc_image` between CCodecs calls inside one operation, so pixels are freed on every
/// path (including thrown errors) without copying them into Swift arrays.
final class CImage {
    var raw: cc_image

    init(_ raw: cc_image) { self.raw = raw }
    deinit { cc_image_free(&raw) }

    var width: Int { Int(raw.width) }
    var height: Int { Int(raw.height) }
    var channels: Int { Int(raw.channels) }
}

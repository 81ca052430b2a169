import CCodecs

/// The encoded formats PoiKit reads and writes. Decided by magic bytes, never by file name.
/// JPEG and PNG are read and written; WebP is written only (thumbnails): `detect` never answers
/// `.webp`, so a WebP source is refused as "not a JPEG or PNG file", as before.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, webp

    /// MIME type, as the backend stores it in `files.content-type`.
    public var contentType: String { "image/" + rawValue }
    /// `"." + subtype of content-type`, the backend's convention: `.jpeg`, `.png`, `.webp`.
    public var fileExtension: String { "." + rawValue }
    var displayName: String {
        switch self {
        case .jpeg: return "JPEG"
        case .png: return "PNG"
        case .webp: return "WebP"
        }
    }

    init?(_ c: cc_format) {
        switch c {
        case CC_FORMAT_JPEG: self = .jpeg
        case CC_FORMAT_PNG: self = .png
        default: return nil
        }
    }

    /// Format from the first bytes, or nil when neither JPEG nor PNG (WebP included: not decoded).
    public static func detect(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        guard let base = bytes.baseAddress else { return nil }
        return ImageFormat(cc_detect_format(base.assumingMemoryBound(to: UInt8.self), bytes.count))
    }

    public static func detect(_ bytes: [UInt8]) -> ImageFormat? {
        bytes.withUnsafeBytes { detect($0) }
    }
}

/// What a header says, read without decoding pixels.
/// More than ten stored properties: one per fact a header gives (size, orientation, colour, profile), each read on its own by the thumbnailer.
public struct ImageInfo: Sendable, Hashable {
    public var format: ImageFormat
    /// Stored dimensions (before EXIF orientation).
    public var width: Int
    public var height: Int
    /// Channels as stored: JPEG 1 (gray), 3 (YCbCr/RGB), 4 (CMYK/YCCK); PNG 1–4 counting the
    /// alpha that palette transparency (tRNS) becomes.
    public var channels: Int
    /// Bits per sample: 8 for JPEG; 1, 2, 4, 8 or 16 for PNG.
    public var bitDepth: Int
    public var hasAlpha: Bool
    /// EXIF orientation 1–8 (1 = upright, also when absent).
    public var orientation: Int
    /// Progressive JPEG or Adam7-interlaced PNG.
    public var isProgressive: Bool
    /// The description of the embedded ICC profile ("Adobe RGB (1998)", "Display P3"), nil when
    /// the image has none. Stored on the original's `files` document as `iccProfile`.
    public var iccProfile: String?
    /// Why an embedded profile was not used (damaged, unreadable, for other pixels): the image
    /// was then treated as untagged. Nil when there is none or it was used.
    public var colorWarning: String?
    /// Progressive JPEG: what libjpeg holds for its DCT coefficients until the last scan (from the
    /// sampling factors in the header); 0 otherwise.
    var jpegCoefficientBytes: Int

    /// Dimensions as displayed, after applying `orientation`.
    public var orientedWidth: Int { orientation >= 5 ? height : width }
    public var orientedHeight: Int { orientation >= 5 ? width : height }
    public var pixelCount: Int { width * height }

    init(_ c: cc_info) {
        format = ImageFormat(c.format) ?? .jpeg
        width = Int(c.width)
        height = Int(c.height)
        channels = Int(c.channels)
        bitDepth = Int(c.bit_depth)
        hasAlpha = c.has_alpha != 0
        orientation = Int(c.orientation)
        isProgressive = c.progressive != 0
        jpegCoefficientBytes = Int(clamping: c.jpeg_coefficient_bytes)
        var copy = c
        let description = withUnsafeBytes(of: &copy.icc_description) { Self.text($0) }
        let warning = withUnsafeBytes(of: &copy.icc_warning) { Self.text($0) }
        iccProfile = description.isEmpty ? nil : description
        colorWarning = warning.isEmpty ? nil : warning
    }

    /// A NUL-terminated C buffer (a fixed-size array imported as a tuple) as a String.
    static func text(_ raw: UnsafeRawBufferPointer) -> String {
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Limits and tolerance for decoding untrusted bytes.
public struct DecodeOptions: Sendable, Hashable {
    /// Images whose header declares more pixels are rejected before any pixel buffer exists.
    public var maxPixels: Int
    /// Keep images that decoded with corrupt-data warnings (e.g. truncated JPEG: the missing
    /// part comes out gray) instead of rejecting them.
    public var lenient: Bool

    public static let defaultMaxPixels = 100_000_000

    /// Convert pixels tagged with an ICC profile to sRGB (perceptual intent) before anything
    /// else is done with them: thumbnails are sRGB, without a profile, as browsers assume.
    public var colorManaged: Bool

    /// Progressive JPEGs decoded at 1/8: read every scan instead of stopping once the DC
    /// coefficients are complete (the 1/8 image is the same; tests compare the two).
    var everyScan = false

    /// PNG: the image data is inflated in one libdeflate call when the inflated image plus its
    /// joined IDAT chunks need at most this many bytes, and streamed through zlib otherwise (0).
    /// Set by `ThumbnailBudget`, which reserves those bytes (`Thumbnailer.pngWholeInflateBytes`).
    var pngWholeInflateBytes = 0

    public init(maxPixels: Int = DecodeOptions.defaultMaxPixels, lenient: Bool = false, colorManaged: Bool = true) {
        self.maxPixels = maxPixels
        self.lenient = lenient
        self.colorManaged = colorManaged
    }
}

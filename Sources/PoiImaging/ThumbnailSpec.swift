/// The thumbnail recipe. Its `canonical` string (e.g. `256x256 inside jpeg q85`, `256x256 inside
/// webp q85`) is what PoiStore records in `files.spec`, so "is this thumbnail outdated?" is a
/// string comparison; `init(parsing:)` reads it back.
public struct ThumbnailSpec: Sendable, Hashable, CustomStringConvertible {
    public enum Fit: String, Sendable, Hashable, CaseIterable {
        /// Fit inside the box, keep aspect ratio: one side equals the box, the other is smaller.
        case inside
        /// Fill the box, keep aspect ratio, crop the overflow around the centre.
        case cover
    }

    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// PNG when the source has alpha, otherwise JPEG.
        case auto, jpeg, png
        /// Lossy WebP at `quality`, alpha kept (libwebp).
        case webp
    }

    public var width: Int
    public var height: Int
    public var fit: Fit
    public var format: Format
    /// JPEG and WebP quality 1–100 (kept in the spec for PNG too, so the string is uniform).
    public var quality: Int
    public var progressive: Bool
    /// Off by default: a source smaller than the box is not enlarged.
    public var allowUpscale: Bool

    public init(width: Int = 256, height: Int = 256, fit: Fit = .inside, format: Format = .auto,
                quality: Int = 85, progressive: Bool = false, allowUpscale: Bool = false) throws(ImageError) {
        guard width >= 1, height >= 1, width <= 16384, height <= 16384 else {
            throw .invalidSpec("size must be between 1x1 and 16384x16384, got \(width)x\(height)")
        }
        guard (1...100).contains(quality) else {
            throw .invalidSpec("quality must be 1...100, got \(quality)")
        }
        // Refused here rather than by the encoder after every image has been decoded.
        guard format != .webp || (width <= Self.maxWebPSide && height <= Self.maxWebPSide) else {
            throw .invalidSpec("WebP thumbnails are at most \(Self.maxWebPSide)x\(Self.maxWebPSide), got \(width)x\(height)")
        }
        self.width = width
        self.height = height
        self.fit = fit
        self.format = format
        self.quality = quality
        self.progressive = progressive
        self.allowUpscale = allowUpscale
    }

    /// The WebP format's limit on either side (libwebp's WEBP_MAX_DIMENSION).
    public static let maxWebPSide = 16383

    /// `256x256 inside auto q85`: the defaults of every command, without a `try`.
    public static let `default` = ThumbnailSpec(validated: 256, 256, .inside, .auto, 85)

    private init(validated width: Int, _ height: Int, _ fit: Fit, _ format: Format, _ quality: Int) {
        self.width = width
        self.height = height
        self.fit = fit
        self.format = format
        self.quality = quality
        self.progressive = false
        self.allowUpscale = false
    }

    /// `256x256 inside jpeg q85`, plus ` progressive` / ` upscale` when set.
    public var canonical: String {
        var s = "\(width)x\(height) \(fit.rawValue) \(format.rawValue) q\(quality)"
        if progressive { s += " progressive" }
        if allowUpscale { s += " upscale" }
        return s
    }

    public var description: String { canonical }

    /// Parses `canonical` back. Also accepts a bare size ("256x256") with defaults for the rest.
    public init(parsing text: String) throws(ImageError) {
        let words = text.split(separator: " ").map(String.init)
        guard let first = words.first else { throw .invalidSpec("empty spec") }
        let (w, h) = try Self.parseSize(first)
        var fit = Fit.inside, format = Format.auto, quality = 85, progressive = false, upscale = false
        for word in words.dropFirst() {
            if let f = Fit(rawValue: word) { fit = f }
            else if let f = Format(rawValue: word) { format = f }
            else if word == "progressive" { progressive = true }
            else if word == "upscale" { upscale = true }
            else if word.hasPrefix("q"), let q = Int(word.dropFirst()) { quality = q }
            else { throw .invalidSpec("unknown word '\(word)' in '\(text)'") }
        }
        try self.init(width: w, height: h, fit: fit, format: format, quality: quality,
                      progressive: progressive, allowUpscale: upscale)
    }

    /// "256x256" (or "256" for a square) -> (256, 256).
    public static func parseSize(_ text: String) throws(ImageError) -> (width: Int, height: Int) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        if parts.count == 1, let n = Int(parts[0]), n > 0 { return (n, n) }
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else {
            throw .invalidSpec("size must look like 256x256, got '\(text)'")
        }
        return (w, h)
    }
}

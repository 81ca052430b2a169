import CCodecs

/// Probe and full-size decode of JPEG/PNG bytes. Pure: no I/O, no shared state; safe to call
/// from any number of tasks at once.
public enum ImageCodec {
    /// Reads the header only (dimensions, channels, bit depth, EXIF orientation): no pixel
    /// decode, no pixel allocation, whatever the declared size.
    public static func probe(_ bytes: UnsafeRawBufferPointer) throws(ImageError) -> ImageInfo {
        var info = cc_info()
        let result = cc_probe(base(bytes), bytes.count, 0, &info)
        guard result.status == CC_OK else {
            throw ImageError.from(result, format: ImageFormat.detect(bytes), bytes: bytes, maxPixels: 0, info: info)
        }
        return ImageInfo(info)
    }

    public static func probe(_ bytes: [UInt8]) throws(ImageError) -> ImageInfo {
        try withBytes(bytes) { (raw) throws(ImageError) in try probe(raw) }
    }

    /// Full-size decode as stored (EXIF orientation reported, not applied unless `orient`).
    /// JPEG comes out as 8-bit gray or RGB (CMYK/YCCK converted); PNG keeps its channels and
    /// 16-bit precision, with palettes and tRNS expanded to RGB(A) / gray+alpha.
    public static func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions = DecodeOptions(),
                              orient: Bool = false) throws(ImageError) -> PixelBuffer {
        var info = ImageInfo(cc_info())
        let image = try decodeC(bytes, options: options, scaleDenominator: 1, shrink: 1, info: &info)
        if orient && info.orientation != 1 {
            let eight = try to8Bit(image)
            return PixelBuffer(copying: try oriented(eight, info.orientation))
        }
        return PixelBuffer(copying: image)
    }

    public static func decode(_ bytes: [UInt8], options: DecodeOptions = DecodeOptions(),
                              orient: Bool = false) throws(ImageError) -> PixelBuffer {
        try withBytes(bytes) { (raw) throws(ImageError) in try decode(raw, options: options, orient: orient) }
    }

    // MARK: - internals shared with Thumbnailer

    static func base(_ bytes: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }

    /// `Array.withUnsafeBytes` is rethrows, which loses the typed error; this keeps it.
    static func withBytes<T>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(ImageError) -> T) throws(ImageError) -> T {
        let result: Result<T, ImageError> = bytes.withUnsafeBytes { raw in
            do throws(ImageError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    static func decodeC(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions, scaleDenominator: Int,
                        shrink: Int, arena: DecodeArena? = nil, info: inout ImageInfo) throws(ImageError) -> CImage {
        var opts = cc_decode_options(max_pixels: UInt64(max(0, options.maxPixels)), lenient: options.lenient ? 1 : 0,
                                     scale_denom: Int32(scaleDenominator), shrink: Int32(shrink),
                                     color_manage: options.colorManaged ? 1 : 0,
                                     every_scan: options.everyScan ? CC_SCANS_EVERY : CC_SCANS_NEEDED,
                                     whole_inflate_max: max(0, options.pngWholeInflateBytes), arena: arena?.raw)
        var cinfo = cc_info()
        var out = cc_image()
        let result = cc_decode(base(bytes), bytes.count, &opts, &cinfo, &out)
        guard result.status == CC_OK else {
            throw ImageError.from(result, format: ImageFormat.detect(bytes), bytes: bytes,
                                  maxPixels: options.maxPixels, info: cinfo)
        }
        info = ImageInfo(cinfo)
        return CImage(out)
    }

    static func check(_ result: cc_result, _ out: cc_image, format: ImageFormat = .jpeg) throws(ImageError) -> CImage {
        guard result.status == CC_OK else {
            throw ImageError.from(result, format: format, bytes: UnsafeRawBufferPointer(start: nil, count: 0),
                                  maxPixels: 0, info: cc_info())
        }
        return CImage(out)
    }

    static func to8Bit(_ image: CImage) throws(ImageError) -> CImage {
        if image.raw.bytes_per_sample == 1 { return image }
        var out = cc_image()
        return try check(cc_to_8bit(&image.raw, &out), out)
    }

    static func oriented(_ image: CImage, _ orientation: Int) throws(ImageError) -> CImage {
        if orientation == 1 { return image }
        var out = cc_image()
        return try check(cc_orient(&image.raw, Int32(orientation), &out), out)
    }
}

import CCodecs

/// An encoded thumbnail, ready to store or write.
public struct Thumbnail: Sendable, Hashable {
    /// Encoded bytes (JPEG, PNG or WebP, no EXIF: orientation is already applied).
    public var data: [UInt8]
    public var width: Int
    public var height: Int
    public var format: ImageFormat
    public var contentType: String { format.contentType }
    /// The source's header, as probed (stored size, orientation, ...).
    public var source: ImageInfo
}

/// Bytes in, thumbnail bytes out: probe -> shrink-on-load decode -> Lanczos3 -> orient -> encode.
/// Pure and reentrant; `poi thumb` and PoiJobs call it from many tasks at once.
public enum Thumbnailer {
    public static func make(from bytes: UnsafeRawBufferPointer, spec: ThumbnailSpec,
                            options: DecodeOptions = DecodeOptions()) throws(ImageError) -> Thumbnail {
        try make(from: bytes, info: try probe(bytes, options: options), spec: spec, options: options)
    }

    /// The header, with `options.maxPixels` enforced: what `make(from:info:spec:options:)` needs.
    /// Header first: limits are enforced and the load-time reduction chosen before any pixels.
    public static func probe(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions = DecodeOptions()) throws(ImageError) -> ImageInfo {
        var probeInfo = cc_info()
        let probed = cc_probe(ImageCodec.base(bytes), bytes.count, UInt64(max(0, options.maxPixels)), &probeInfo)
        guard probed.status == CC_OK else {
            throw ImageError.from(probed, format: ImageFormat.detect(bytes), bytes: bytes,
                                  maxPixels: options.maxPixels, info: probeInfo)
        }
        return ImageInfo(probeInfo)
    }

    public static func probe(_ bytes: [UInt8], options: DecodeOptions = DecodeOptions()) throws(ImageError) -> ImageInfo {
        try ImageCodec.withBytes(bytes) { (raw) throws(ImageError) in try probe(raw, options: options) }
    }

    /// `make` for bytes whose header `probe(_:options:)` has already read (`info`), so a caller
    /// that needs the header first (to schedule by memory) does not read it twice.
    public static func make(from bytes: UnsafeRawBufferPointer, info header: ImageInfo, spec: ThumbnailSpec,
                            options: DecodeOptions = DecodeOptions()) throws(ImageError) -> Thumbnail {
        try make(from: bytes, info: header, spec: spec, options: options, arena: nil)
    }

    /// `make`, with the decoder's working memory from `arena` (a worker's, lent by
    /// `ThumbnailBudget`) when there is one.
    static func make(from bytes: UnsafeRawBufferPointer, info header: ImageInfo, spec: ThumbnailSpec,
                     options: DecodeOptions, arena: DecodeArena?) throws(ImageError) -> Thumbnail {
        let plan = ThumbnailPlan(source: header, spec: spec)

        var decodedInfo = header
        let decoded = try ImageCodec.decodeC(bytes, options: options, scaleDenominator: plan.jpegScaleDenominator,
                                             shrink: plan.pngShrink, arena: arena, info: &decodedInfo)
        // Map the crop window from stored-size coordinates into the reduced image's.
        let sx = Double(decoded.width) / Double(header.width)
        let sy = Double(decoded.height) / Double(header.height)
        let crop = plan.storedCrop
        var cx = crop.x * sx, cy = crop.y * sy, cw = crop.width * sx, chh = crop.height * sy
        cx = max(0, cx); cy = max(0, cy)
        cw = min(cw, Double(decoded.width) - cx); chh = min(chh, Double(decoded.height) - cy)

        var resizedRaw = cc_image()
        let resized = try ImageCodec.check(
            cc_resize(&decoded.raw, cx, cy, cw, chh, UInt32(plan.storedOutputWidth), UInt32(plan.storedOutputHeight),
                      &resizedRaw), resizedRaw)
        var image = try ImageCodec.oriented(resized, header.orientation)

        let format: ImageFormat
        switch spec.format {
        case .jpeg: format = .jpeg
        case .png: format = .png
        case .webp: format = .webp
        case .auto: format = header.hasAlpha ? .png : .jpeg
        }
        if format == .jpeg && (image.channels == 2 || image.channels == 4) {
            var flat = cc_image()
            image = try ImageCodec.check(cc_flatten(&image.raw, 255, &flat), flat)
        }
        var out: UnsafeMutablePointer<UInt8>? = nil
        var length = 0
        let result: cc_result
        switch format {
        case .jpeg: result = cc_encode_jpeg(&image.raw, Int32(spec.quality), spec.progressive ? CC_JPEG_PROGRESSIVE : CC_JPEG_BASELINE,
                                            CC_JPEG_HUFFMAN_STANDARD, &out, &length)
        case .png: result = cc_encode_png(&image.raw, 6, &out, &length)
        // Alpha kept: WebP carries it beside lossy colour, so nothing is flattened.
        case .webp: result = cc_encode_webp(&image.raw, Int32(spec.quality), &out, &length)
        }
        defer { cc_free(out) }
        guard result.status == CC_OK, let out else {
            throw ImageError.from(result, format: format, bytes: UnsafeRawBufferPointer(start: nil, count: 0),
                                  maxPixels: 0, info: cc_info())
        }
        let data = Array(UnsafeBufferPointer(start: out, count: length))
        // The header says which profile is embedded; only the decode knows whether it could
        // serve these pixels (a colour profile on a gray image, a transform Little CMS refuses).
        var source = header
        if source.colorWarning == nil { source.colorWarning = decodedInfo.colorWarning }
        return Thumbnail(data: data, width: image.width, height: image.height, format: format, source: source)
    }

    /// Upper estimate of the memory `make` needs for this source and spec, from the header alone
    /// (encoded bytes not included): what an image reserves from a `ThumbnailBudget`. A progressive
    /// JPEG keeps every DCT coefficient until its last scan (2 bytes per sample), an Adam7
    /// PNG without load-time shrink is held whole; everything else is a few rows plus the
    /// reduced image.
    public static func estimatedPeakBytes(source: ImageInfo, spec: ThumbnailSpec) -> Int {
        let plan = ThumbnailPlan(source: source, spec: spec)
        let w = source.width, h = source.height
        let decodedW: Int, decodedH: Int, channels: Int, bytesPerSample: Int
        var extra = 0
        switch source.format {
        case .jpeg:
            let d = plan.jpegScaleDenominator
            (decodedW, decodedH) = ((w + d - 1) / d, (h + d - 1) / d)
            channels = source.channels == 1 ? 1 : 3
            bytesPerSample = 1
            // The coefficients as the header lays them out (3 bytes per pixel for 4:2:0, 6 for
            // 4:4:4); a header without sampling factors counts every sample at 2 bytes.
            if source.isProgressive {
                extra = source.jpegCoefficientBytes > 0 ? source.jpegCoefficientBytes : w * h * source.channels * 2
            }
        case .png:
            let s = plan.pngShrink
            (decodedW, decodedH) = ((w + s - 1) / s, (h + s - 1) / s)
            channels = source.channels
            bytesPerSample = source.bitDepth == 16 ? 2 : 1
            if s == 1 && source.isProgressive { extra = 0 } // the decoded image below is the whole image
            else if s > 1 && source.isProgressive { extra = decodedW * decodedH * channels * 8 } // Adam7 sums
            else { extra = w * channels * (bytesPerSample + 8) + decodedW * channels * 8 }     // row, column sums, band sums
        case .webp:
            // Never a source (probe refuses WebP): if it were, a whole RGBA decode.
            (decodedW, decodedH) = (w, h)
            channels = 4
            bytesPerSample = 1
        }
        let decoded = decodedW * decodedH * channels * bytesPerSample
        let resampleRows = plan.storedOutputWidth * decodedH * channels * 4
        let output = plan.storedOutputWidth * plan.storedOutputHeight * channels * 3
        return decoded + extra + resampleRows + output
    }

    /// What a PNG decode holds on top of `estimatedPeakBytes` to inflate its image data in one
    /// libdeflate call (2-3x zlib's speed, whole buffers only): the filtered image, every row
    /// with its filter byte (every Adam7 pass), plus the IDAT chunks joined (at most the file).
    /// From the header, counting a palette or tRNS image at its expanded channels: an upper
    /// bound, as the C side decides on the exact size. 0 for anything but PNG.
    public static func pngWholeInflateBytes(source: ImageInfo, encodedBytes: Int) -> Int {
        guard source.format == .png, source.width > 0, source.height > 0 else { return 0 }
        let bits = source.channels * max(8, source.bitDepth)
        func filtered(_ w: Int, _ h: Int) -> Int { h * (1 + (w * bits + 7) / 8) }
        var inflated = 0
        if source.isProgressive {
            let passes = [(0, 8, 0, 8), (4, 8, 0, 8), (0, 4, 4, 8), (2, 4, 0, 4), (0, 2, 2, 4), (1, 2, 0, 2), (0, 1, 1, 2)]
            for (x0, dx, y0, dy) in passes where source.width > x0 && source.height > y0 {
                inflated += filtered((source.width - x0 + dx - 1) / dx, (source.height - y0 + dy - 1) / dy)
            }
        } else {
            inflated = filtered(source.width, source.height)
        }
        return inflated + encodedBytes
    }

    public static func make(from bytes: [UInt8], spec: ThumbnailSpec,
                            options: DecodeOptions = DecodeOptions()) throws(ImageError) -> Thumbnail {
        try ImageCodec.withBytes(bytes) { (raw) throws(ImageError) in try make(from: raw, spec: spec, options: options) }
    }

    public static func make(from bytes: [UInt8], info: ImageInfo, spec: ThumbnailSpec,
                            options: DecodeOptions = DecodeOptions()) throws(ImageError) -> Thumbnail {
        try ImageCodec.withBytes(bytes) { (raw) throws(ImageError) in try make(from: raw, info: info, spec: spec, options: options) }
    }
}

/// Geometry of one thumbnail, decided from the header alone. Sizes are computed in displayed
/// (oriented) space, then mapped back to stored space where decoding and resampling happen;
/// orientation is applied last, on the small image.
struct ThumbnailPlan: Equatable {
    /// Output size in stored orientation.
    var storedOutputWidth: Int
    var storedOutputHeight: Int
    /// Source window in stored full-size coordinates.
    var storedCrop: (x: Double, y: Double, width: Double, height: Double)
    var jpegScaleDenominator: Int
    var pngShrink: Int

    static func == (a: ThumbnailPlan, b: ThumbnailPlan) -> Bool {
        a.storedOutputWidth == b.storedOutputWidth && a.storedOutputHeight == b.storedOutputHeight
            && a.storedCrop == b.storedCrop && a.jpegScaleDenominator == b.jpegScaleDenominator
            && a.pngShrink == b.pngShrink
    }

    init(source: ImageInfo, spec: ThumbnailSpec) {
        let w = Double(source.orientedWidth), h = Double(source.orientedHeight)
        let tw = Double(spec.width), th = Double(spec.height)
        var outW: Int, outH: Int
        var crop: (x: Double, y: Double, width: Double, height: Double)
        var factor: Double
        switch spec.fit {
        case .inside:
            factor = min(tw / w, th / h)
            if !spec.allowUpscale { factor = min(factor, 1) }
            outW = max(1, min(Int((w * factor).rounded()), spec.width))
            outH = max(1, min(Int((h * factor).rounded()), spec.height))
            crop = (0, 0, w, h)
        case .cover:
            factor = max(tw / w, th / h)
            if !spec.allowUpscale { factor = min(factor, 1) }
            outW = max(1, min(spec.width, Int((w * factor).rounded())))
            outH = max(1, min(spec.height, Int((h * factor).rounded())))
            let cw = min(w, Double(outW) / factor), ch = min(h, Double(outH) / factor)
            crop = ((w - cw) / 2, (h - ch) / 2, cw, ch)
        }
        if source.orientation >= 5 {
            swap(&outW, &outH)
            crop = (crop.y, crop.x, crop.height, crop.width)
        }
        storedOutputWidth = outW
        storedOutputHeight = outH
        storedCrop = crop

        // Shrink-on-load: the largest JPEG DCT reduction that still leaves Lanczos at least a 2x
        // reduction (vipsthumbnail's rule). DCT scaling acts like a box filter and aliases; the
        // final 2x of proper filtering removes that. A 24 MP photo for a 256 px thumbnail is
        // decoded at 1/8 and never at full size.
        let needW = Double(outW) * (source.width > 0 ? Double(source.width) / crop.width : 1)
        let needH = Double(outH) * (source.height > 0 ? Double(source.height) / crop.height : 1)
        var denom = 1
        for d in [8, 4, 2] {
            let scaledW = Double((source.width + d - 1) / d), scaledH = Double((source.height + d - 1) / d)
            if scaledW >= 2 * needW && scaledH >= 2 * needH { denom = d; break }
        }
        jpegScaleDenominator = denom
        // PNG: an integer box shrink while rows stream in, leaving Lanczos at least a 2x reduction
        // so box artefacts are filtered away.
        let ratio = min(Double(source.width) / needW, Double(source.height) / needH)
        pngShrink = max(1, Int(ratio / 2))
    }
}

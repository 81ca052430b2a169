import PoiTestSupport
import Testing
@testable import CCodecs
@testable import PoiImaging

@Suite(.tags(.unit)) struct ThumbnailSpecTests {
    @Test func canonicalStringRoundTrips() throws {
        let spec = try ThumbnailSpec(width: 256, height: 256, fit: .inside, format: .jpeg, quality: 85)
        #expect(spec.canonical == "256x256 inside jpeg q85")
        #expect(try ThumbnailSpec(parsing: "256x256 inside jpeg q85") == spec)
        let other = try ThumbnailSpec(width: 320, height: 200, fit: .cover, format: .auto, quality: 70, progressive: true)
        #expect(other.canonical == "320x200 cover auto q70 progressive")
        #expect(try ThumbnailSpec(parsing: other.canonical) == other)
        #expect(try ThumbnailSpec(parsing: "128") == ThumbnailSpec(width: 128, height: 128))
        #expect(ThumbnailSpec.default == (try ThumbnailSpec()))
        #expect(ThumbnailSpec.default.canonical == "256x256 inside auto q85")
    }

    /// WebP is a format word like the others: stored specs read back, and a WebP
    /// recipe is never mistaken for the JPEG or auto one (outdated thumbnails are found).
    @Test func webpSpecRoundTrips() throws {
        let webp = try ThumbnailSpec(parsing: "256x256 inside webp q85")
        #expect(webp.format == .webp && webp.quality == 85 && webp.width == 256 && webp.fit == .inside)
        #expect(webp.canonical == "256x256 inside webp q85")
        #expect(webp == (try ThumbnailSpec(format: .webp)))
        #expect(webp.canonical != ThumbnailSpec.default.canonical)
        let cover = try ThumbnailSpec(width: 320, height: 200, fit: .cover, format: .webp, quality: 60, allowUpscale: true)
        #expect(cover.canonical == "320x200 cover webp q60 upscale")
        #expect(try ThumbnailSpec(parsing: cover.canonical) == cover)
    }

    @Test func invalidSpecsNameTheProblem() {
        #expect(throws: ImageError.invalidSpec("size must look like 256x256, got '256x'")) {
            try ThumbnailSpec(parsing: "256x")
        }
        #expect(throws: ImageError.invalidSpec("quality must be 1...100, got 0")) {
            try ThumbnailSpec(quality: 0)
        }
        #expect(throws: ImageError.invalidSpec("size must be between 1x1 and 16384x16384, got 0x10")) {
            try ThumbnailSpec(width: 0, height: 10)
        }
        #expect(throws: ImageError.invalidSpec("unknown word 'sideways' in '64x64 sideways'")) {
            try ThumbnailSpec(parsing: "64x64 sideways")
        }
    }
}

@Suite(.tags(.unit)) struct ThumbnailPlanTests {
    static func info(_ w: Int, _ h: Int, orientation: Int = 1) -> ImageInfo {
        var c = cc_info()
        c.format = CC_FORMAT_JPEG
        c.width = UInt32(w)
        c.height = UInt32(h)
        c.channels = 3
        c.bit_depth = 8
        c.orientation = Int32(orientation)
        return ImageInfo(c)
    }

    @Test func jpegShrinkOnLoadLeavesLanczosAtLeastTwoTimes() throws {
        let spec = try ThumbnailSpec(width: 256, height: 256)
        // 6000x4000 -> 256x171: 1/8 gives 750x500, at least 2x the output.
        let big = ThumbnailPlan(source: Self.info(6000, 4000), spec: spec)
        #expect(big.jpegScaleDenominator == 8)
        #expect(big.storedOutputWidth == 256 && big.storedOutputHeight == 171)
        // 4096x4096 -> 256x256: 1/8 gives 512x512, exactly 2x.
        #expect(ThumbnailPlan(source: Self.info(4096, 4096), spec: spec).jpegScaleDenominator == 8)
        // 1600x1200 -> 256x192: 1/4 gives 400x300 (< 2x), 1/2 gives 800x600.
        #expect(ThumbnailPlan(source: Self.info(1600, 1200), spec: spec).jpegScaleDenominator == 2)
        // 700x500 -> 256x183: even 1/2 (350x250) is under 2x, so full size.
        #expect(ThumbnailPlan(source: Self.info(700, 500), spec: spec).jpegScaleDenominator == 1)
        // Already small: no reduction and no upscaling.
        let small = ThumbnailPlan(source: Self.info(200, 100), spec: spec)
        #expect(small.jpegScaleDenominator == 1)
        #expect(small.storedOutputWidth == 200 && small.storedOutputHeight == 100)
        // PNG box shrink leaves the Lanczos step at least a 2x reduction: 6000/256 = 23.4 -> 11.
        #expect(big.pngShrink == 11)
    }

    @Test func coverCropsTheCentreAndOrientationSwapsAxes() throws {
        let spec = try ThumbnailSpec(width: 100, height: 100, fit: .cover)
        let plan = ThumbnailPlan(source: Self.info(400, 200), spec: spec)
        #expect(plan.storedOutputWidth == 100 && plan.storedOutputHeight == 100)
        #expect(plan.storedCrop == (100, 0, 200, 200))
        let inside = try ThumbnailSpec(width: 100, height: 100)
        // Stored 200x400 with orientation 6 displays as 400x200 -> 100x50 displayed, 50x100 stored.
        let rotated = ThumbnailPlan(source: Self.info(200, 400, orientation: 6), spec: inside)
        #expect(rotated.storedOutputWidth == 50 && rotated.storedOutputHeight == 100)
    }
}

@Suite(.tags(.process)) struct ThumbnailerTests {
    @Test func insideAndCoverProduceTheRequestedSizes() throws {
        let bytes = try Fixtures.load().bytes("jpeg_baseline_420.jpg") // 67x45
        let inside = try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(width: 32, height: 32))
        #expect(inside.width == 32 && inside.height == 21)
        #expect(inside.format == .jpeg && inside.contentType == "image/jpeg")
        #expect(Array(inside.data.prefix(3)) == [0xFF, 0xD8, 0xFF])
        let decoded = try ImageCodec.probe(inside.data)
        #expect(decoded.width == 32 && decoded.height == 21 && decoded.orientation == 1)

        let cover = try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(width: 32, height: 32, fit: .cover, format: .png))
        #expect(cover.width == 32 && cover.height == 32 && cover.format == .png)
        #expect(try ImageCodec.probe(cover.data).width == 32)
    }

    @Test func smallSourcesAreNotUpscaled() throws {
        let bytes = try Fixtures.load().bytes("png_rgb8.png") // 67x45
        let t = try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(width: 256, height: 256))
        #expect(t.width == 67 && t.height == 45)
        // Same size, lossless out: the resampler at scale 1 must be the identity.
        #expect(t.format == .jpeg)
        let png = try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(width: 256, height: 256, format: .png))
        #expect(try ImageCodec.decode(png.data) == ImageCodec.decode(bytes))
    }

    @Test func autoFormatKeepsAlphaInPNG() throws {
        let fx = try Fixtures.load()
        let alpha = try Thumbnailer.make(from: try fx.bytes("png_palette_trns.png"), spec: ThumbnailSpec(width: 32, height: 32))
        #expect(alpha.format == .png)
        #expect(try ImageCodec.probe(alpha.data).hasAlpha)
        let opaque = try Thumbnailer.make(from: try fx.bytes("png_gray16.png"), spec: ThumbnailSpec(width: 32, height: 32))
        #expect(opaque.format == .jpeg)
        #expect(try ImageCodec.probe(opaque.data).channels == 1)
    }

    @Test func alphaIsResampledPremultiplied() throws {
        // Left half fully transparent *red*, right half opaque white. Premultiplied filtering must
        // not let the invisible red bleed into the visible edge pixels.
        let w = 64, h = 16
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                if x < w / 2 { rgba[i] = 255 } else { rgba[i] = 255; rgba[i + 1] = 255; rgba[i + 2] = 255; rgba[i + 3] = 255 }
            }
        }
        // Encoded with CCodecs' PNG writer (Pillow is not needed for a synthetic image).
        var encoded: UnsafeMutablePointer<UInt8>? = nil
        var length = 0
        rgba.withUnsafeMutableBufferPointer { buf in
            var src = cc_image(pixels: buf.baseAddress, width: UInt32(w), height: UInt32(h), channels: 4,
                               bytes_per_sample: 1, stride: w * 4)
            #expect(cc_encode_png(&src, 6, &encoded, &length).status == CC_OK)
        }
        let png = Array(UnsafeBufferPointer(start: encoded, count: length))
        cc_free(encoded)

        let t = try Thumbnailer.make(from: png, spec: ThumbnailSpec(width: 16, height: 16))
        #expect(t.format == .png && t.width == 16 && t.height == 4)
        let p = try ImageCodec.decode(t.data)
        var checked = 0
        for y in 0..<p.height {
            for x in 0..<p.width where p.sample(x: x, y: y, channel: 3) >= 8 {
                #expect(p.sample(x: x, y: y, channel: 1) >= 254, "green at \(x),\(y)")
                #expect(p.sample(x: x, y: y, channel: 2) >= 254, "blue at \(x),\(y)")
                checked += 1
            }
        }
        #expect(checked >= 32)
        #expect(p.sample(x: 0, y: 0, channel: 3) == 0)
        #expect(p.sample(x: 15, y: 0, channel: 3) == 255)
    }

    @Test func sixteenBitSourceThumbnailMatchesItsEightBitReduction() throws {
        // A 16-bit gray image thumbnailed at scale 1 (PNG out) equals the correctly rounded 8-bit
        // reduction of its samples: (v * 255 + 32767) / 65535, not the high or low byte.
        let fx = try Fixtures.load()
        let bytes = try fx.bytes("png_gray16.png")
        let t = try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(width: 256, height: 256, format: .png))
        let out = try ImageCodec.decode(t.data)
        let ref = try fx.bytes("png_gray16.ref")
        var maxErr = 0
        for i in 0..<(67 * 45) {
            let v = Int(ref[2 * i]) | Int(ref[2 * i + 1]) << 8
            maxErr = max(maxErr, abs(Int(out.bytes[i]) - (v * 255 + 32767) / 65535))
        }
        #expect(out.width == 67 && out.bitDepth == 8)
        #expect(maxErr == 0)
    }

    @Test func progressiveJPEGOutput() throws {
        let bytes = try Fixtures.load().bytes("jpeg_444.jpg")
        let t = try Thumbnailer.make(from: bytes, spec: ThumbnailSpec(width: 40, height: 40, format: .jpeg, progressive: true))
        #expect(try ImageCodec.probe(t.data).isProgressive)
    }
}

/// Load-time box shrink of PNGs, streamed for plain PNGs and pass by pass for Adam7 ones.
@Suite(.tags(.process)) struct PNGShrinkOnLoadTests {
    static func shrinkDecode(_ bytes: [UInt8], shrink: Int) throws -> PixelBuffer {
        var opts = cc_decode_options(max_pixels: 0, lenient: 0, scale_denom: 1, shrink: Int32(shrink), color_manage: 0,
                                     every_scan: CC_SCANS_NEEDED, whole_inflate_max: 0, arena: nil)
        var info = cc_info()
        var out = cc_image()
        let r = bytes.withUnsafeBytes { cc_decode($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count, &opts, &info, &out) }
        #expect(r.status == CC_OK)
        return PixelBuffer(copying: CImage(out))
    }

    static func reencode(_ p: PixelBuffer) -> [UInt8] {
        var bytes = p.bytes
        var encoded: UnsafeMutablePointer<UInt8>? = nil
        var length = 0
        bytes.withUnsafeMutableBufferPointer { buf in
            var src = cc_image(pixels: buf.baseAddress, width: UInt32(p.width), height: UInt32(p.height),
                               channels: Int32(p.channels), bytes_per_sample: 1, stride: p.width * p.channels)
            #expect(cc_encode_png(&src, 6, &encoded, &length).status == CC_OK)
        }
        defer { cc_free(encoded) }
        return Array(UnsafeBufferPointer(start: encoded, count: length))
    }

    @Test(arguments: [2, 3, 5, 8])
    func sixteenBitInterlacedBoxShrinkIsTheExactBoxMean(shrink: Int) throws {
        let fx = try Fixtures.load()
        let p = try Self.shrinkDecode(try fx.bytes("png_rgb16_interlaced.png"), shrink: shrink)
        let ref = try fx.bytes("png_rgb16_interlaced.ref") // 67x45 RGB, 16-bit little-endian
        let (w, h) = (67, 45)
        #expect(p.width == (w + shrink - 1) / shrink && p.height == (h + shrink - 1) / shrink && p.bitDepth == 16)
        var mismatches = 0
        for oy in 0..<p.height {
            for ox in 0..<p.width {
                for k in 0..<3 {
                    var sum = 0, n = 0
                    for y in (oy * shrink)..<min(h, (oy + 1) * shrink) {
                        for x in (ox * shrink)..<min(w, (ox + 1) * shrink) {
                            let i = ((y * w + x) * 3 + k) * 2
                            sum += Int(ref[i]) | Int(ref[i + 1]) << 8
                            n += 1
                        }
                    }
                    if p.sample(x: ox, y: oy, channel: k) != (sum + n / 2) / n { mismatches += 1 }
                }
            }
        }
        #expect(mismatches == 0)
    }

    @Test(arguments: ["png_rgba8_interlaced", "png_gray8_interlaced"])
    func interlacedAndPlainGiveIdenticalThumbnails(name: String) throws {
        let fx = try Fixtures.load()
        let interlaced = try fx.bytes(name + ".png")
        let plain = Self.reencode(try ImageCodec.decode(interlaced))
        #expect(try !ImageCodec.probe(plain).isProgressive)
        for shrink in [2, 4, 7] {
            #expect(try Self.shrinkDecode(interlaced, shrink: shrink) == Self.shrinkDecode(plain, shrink: shrink))
        }
        // 67x45 -> 16x11 needs a 4x reduction, so the thumbnail path shrinks on load (by 2).
        let spec = try ThumbnailSpec(width: 16, height: 16, format: .png)
        #expect(ThumbnailPlan(source: try ImageCodec.probe(interlaced), spec: spec).pngShrink == 2)
        let a = try Thumbnailer.make(from: interlaced, spec: spec)
        let b = try Thumbnailer.make(from: plain, spec: spec)
        #expect(try ImageCodec.decode(a.data) == ImageCodec.decode(b.data))
    }
}

/// The whole thumbnail path against Pillow's Lanczos resize of the same picture.
@Suite(.tags(.process)) struct ResamplingQualityTests {
    @Test(arguments: ["resample_src.png", "resample_src.jpg"])
    func thumbnailIsCloseToPillowsLanczos(file: String) throws {
        let fx = try Fixtures.load()
        guard let r = fx.manifest.resample.first(where: { $0.file == file }) else {
            throw FixtureError(description: "\(file) missing from manifest.json")
        }
        let spec = try ThumbnailSpec(width: r.width, height: r.height, format: .png)
        let bytes = try fx.bytes(r.file)
        let plan = ThumbnailPlan(source: try ImageCodec.probe(bytes), spec: spec)
        // 640x480 -> 160x120 exercises the load-time reduction of both formats.
        #expect(file.hasSuffix(".png") ? plan.pngShrink == 2 : plan.jpegScaleDenominator == 2)
        let thumb = try Thumbnailer.make(from: bytes, spec: spec)
        #expect(thumb.width == r.width && thumb.height == r.height)
        let pixels = try ImageCodec.decode(thumb.data)
        let db = psnr(pixels.bytes, try fx.bytes(r.ref))
        // Measured 48.8 dB (PNG) and 49.3 dB (JPEG); vipsthumbnail gets 47.9 and 49.7 dB.
        #expect(db >= 45, "PSNR \(db) dB")
    }

    @Test func thumbnailsRunConcurrentlyWithIdenticalResults() async throws {
        let fx = try Fixtures.load()
        let inputs = try ["resample_src.jpg", "resample_src.png", "png_rgba16.png", "orientation_6.jpg"].map { try fx.bytes($0) }
        let spec = try ThumbnailSpec(width: 50, height: 50, fit: .cover)
        let expected = try inputs.map { try Thumbnailer.make(from: $0, spec: spec).data }
        let results = await withTaskGroup(of: (Int, [UInt8]?).self) { group in
            for round in 0..<24 {
                let i = round % inputs.count
                let bytes = inputs[i]
                group.addTask { (i, try? Thumbnailer.make(from: bytes, spec: spec).data) }
            }
            var out: [(Int, [UInt8]?)] = []
            for await r in group { out.append(r) }
            return out
        }
        #expect(results.count == 24)
        for (i, data) in results { #expect(data == expected[i]) }
    }
}

@Suite(.tags(.process)) struct MemoryEstimateTests {
    static func info(_ format: ImageFormat, _ w: Int, _ h: Int, channels: Int = 3, bitDepth: Int = 8,
                     progressive: Bool = false) -> ImageInfo {
        var c = cc_info()
        c.format = format == .jpeg ? CC_FORMAT_JPEG : CC_FORMAT_PNG
        c.width = UInt32(w)
        c.height = UInt32(h)
        c.channels = Int32(channels)
        c.bit_depth = Int32(bitDepth)
        c.progressive = progressive ? 1 : 0
        c.orientation = 1
        return ImageInfo(c)
    }

    @Test func progressiveJPEGsAndWholeAdam7PNGsAreTheBigOnes() {
        let spec = ThumbnailSpec.default
        // 6000x4000 baseline at 1/8: 750x500x3 decoded + 256x500x3x4 resample rows + 256x171x3x3 out.
        #expect(Thumbnailer.estimatedPeakBytes(source: Self.info(.jpeg, 6000, 4000), spec: spec)
            == 750 * 500 * 3 + 256 * 500 * 3 * 4 + 256 * 171 * 3 * 3)
        // The same progressive: plus every coefficient, 6000x4000x3 samples x 2 bytes.
        #expect(Thumbnailer.estimatedPeakBytes(source: Self.info(.jpeg, 6000, 4000, progressive: true), spec: spec)
            == 750 * 500 * 3 + 6000 * 4000 * 3 * 2 + 256 * 500 * 3 * 4 + 256 * 171 * 3 * 3)
        // 4096x4096 RGBA PNG, shrink 8 on load: 512x512x4 decoded, one row, its column sums (at
        // most 8 bytes a sample), band sums.
        #expect(Thumbnailer.estimatedPeakBytes(source: Self.info(.png, 4096, 4096, channels: 4), spec: spec)
            == 512 * 512 * 4 + 4096 * 4 + 4096 * 4 * 8 + 512 * 4 * 8 + 256 * 512 * 4 * 4 + 256 * 256 * 4 * 3)
        // 600x400 16-bit RGB Adam7 PNG: under 4x, no shrink, decoded whole at 2 bytes per sample.
        #expect(Thumbnailer.estimatedPeakBytes(source: Self.info(.png, 600, 400, bitDepth: 16, progressive: true), spec: spec)
            == 600 * 400 * 3 * 2 + 256 * 400 * 3 * 4 + 256 * 171 * 3 * 3)
    }

    /// A real progressive file: the coefficients libjpeg keeps follow its sampling factors.
    @Test func progressiveCoefficientsAreCountedFromTheHeader() throws {
        let bytes = try Fixtures.load().bytes("jpeg_progressive.jpg")  // 67x45, 4:2:0
        let info = try ImageCodec.probe(bytes)
        // 5x3 MCUs of 16x16 pixels, each four Y blocks + one Cb + one Cr, 64 coefficients of 2 bytes.
        #expect(info.jpegCoefficientBytes == 5 * 3 * 6 * 64 * 2)
        let plain = try ImageCodec.probe(try Fixtures.load().bytes("jpeg_baseline_420.jpg"))
        #expect(plain.jpegCoefficientBytes == 0)
        let spec = try ThumbnailSpec(width: 16, height: 16)
        var uncounted = info
        uncounted.jpegCoefficientBytes = 0
        #expect(Thumbnailer.estimatedPeakBytes(source: info, spec: spec)
            == Thumbnailer.estimatedPeakBytes(source: uncounted, spec: spec) - 67 * 45 * 3 * 2 + 5 * 3 * 6 * 64 * 2)
    }
}

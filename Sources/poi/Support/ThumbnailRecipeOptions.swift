import ArgumentParser
import PoiImaging

/// `--size`, `--fit`, `--format`, `--quality`, `--max-pixels`: the thumbnail recipe and decode
/// limits shared by `import` and `thumbnails`.
struct ThumbnailRecipeOptions: ParsableArguments {
    // Optional so a run can tell a recipe the user chose from the defaults (see `isExplicit`).
    @Option(help: ArgumentHelp("Thumbnail box, WIDTHxHEIGHT (default: 256x256).", valueName: "WxH"))
    var size: String?

    @Option(help: ArgumentHelp("inside: fit in the box, keep the aspect ratio; cover: fill the box, centre crop (default: inside).",
                               valueName: "inside|cover"))
    var fit: String?

    @Option(help: ArgumentHelp("auto: PNG when the image has alpha, JPEG otherwise (default: auto).", valueName: "auto|jpeg|png"))
    var format: String?

    @Option(help: "JPEG quality, 1-100 (default: 85).")
    var quality: Int?

    /// Whether any part of the recipe was given on the command line.
    var isExplicit: Bool { size != nil || fit != nil || format != nil || quality != nil }

    @Option(help: "Refuse images with more pixels than this, before decoding them.")
    var maxPixels: Int = DecodeOptions.defaultMaxPixels

    func spec() throws -> ThumbnailSpec {
        do {
            let (w, h) = try ThumbnailSpec.parseSize(size ?? "256x256")
            guard let fit = ThumbnailSpec.Fit(rawValue: fit ?? "inside") else {
                throw ValidationError("--fit must be inside or cover, got \(fit ?? "")")
            }
            guard let format = ThumbnailSpec.Format(rawValue: format ?? "auto") else {
                throw ValidationError("--format must be auto, jpeg or png, got \(format ?? "")")
            }
            return try ThumbnailSpec(width: w, height: h, fit: fit, format: format, quality: quality ?? 85)
        } catch let error as ImageError {
            throw ValidationError(error.description)
        }
    }

    func decodeOptions() throws -> DecodeOptions {
        guard maxPixels >= 1 else { throw ValidationError("--max-pixels must be at least 1") }
        return DecodeOptions(maxPixels: maxPixels)
    }
}

/// `--jobs N`, default: every core.
struct ParallelOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Worker threads for image work (default: the number of cores).")
    var jobs: Int?

    var resolvedJobs: Int { jobs ?? ProcessInfo.processInfo.activeProcessorCount }

    func validate() throws {
        if let jobs, jobs < 1 || jobs > 256 { throw ValidationError("--jobs must be between 1 and 256") }
    }
}

import Foundation

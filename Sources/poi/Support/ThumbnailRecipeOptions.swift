import ArgumentParser
import Foundation
import PoiFormats
import PoiImaging

/// `--size`, `--fit`, `--format`, `--quality`, `--max-pixels`: the thumbnail recipe and decode
/// limits shared by `import`, `thumbnails` and `thumb`.
struct ThumbnailRecipeOptions: ParsableArguments {
    // Optional so a run can tell a recipe the user chose from the defaults (see `isExplicit`).
    @Option(help: ArgumentHelp("Thumbnail box, WIDTHxHEIGHT (default: 256x256).", valueName: "WxH"))
    var size: ThumbnailSize?

    @Option(help: "cover: crop to fill the box.")
    var fit: ThumbnailSpec.Fit?

    // `--thumbnail-format` too: the name WebP thumbnails were first asked for under, and on
    // `poi import` it says that it is not the input's format (inputs are recognised by their content).
    @Option(name: [.customLong("format"), .customLong("thumbnail-format")],
            help: "auto: PNG if alpha.")
    var format: ThumbnailSpec.Format?

    @Option(help: "JPEG and WebP quality, 1-100 (default: 85).")
    var quality: Int?

    @Option(help: ArgumentHelp("Refuse images with more pixels than this, before decoding them.", visibility: .hidden))
    var maxPixels: Int = DecodeOptions.defaultMaxPixels

    /// Whether any part of the recipe was given on the command line.
    var isExplicit: Bool { size != nil || fit != nil || format != nil || quality != nil }

    func validate() throws {
        _ = try spec()
        guard maxPixels >= 1 else { throw ValidationError("--max-pixels must be at least 1") }
    }

    func spec(progressive: Bool = false) throws -> ThumbnailSpec {
        let d = ThumbnailSpec.default
        do {
            return try ThumbnailSpec(width: size?.width ?? d.width, height: size?.height ?? d.height,
                                     fit: fit ?? d.fit, format: format ?? d.format, quality: quality ?? d.quality,
                                     progressive: progressive)
        } catch {
            throw ValidationError(error.description)
        }
    }

    var decodeOptions: DecodeOptions { DecodeOptions(maxPixels: maxPixels) }
}

/// `--jobs N`, default: every core; `--memory MB`, default 100 MB + 60 MB per job.
struct ParallelOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Image worker threads, 1-256 (default: one a core).")
    var jobs: Int?

    @Option(help: ArgumentHelp("""
        Megabytes the image decodes may use together (default: 100 + 60 per job). Each image \
        waits until its estimated need fits; one needing more than this runs alone. The \
        process's own memory (about 30 MB: code, libraries, files read ahead) comes on top.
        """, valueName: "MB", visibility: .hidden))
    var memory: Int?

    var resolvedJobs: Int { jobs ?? ProcessorCores.available }
    /// Bytes, or nil for the jobs' default (which depends on the number of workers).
    var memoryBytes: Int? { memory.map { $0 << 20 } }

    func validate() throws {
        if let jobs, jobs < 1 || jobs > 256 { throw ValidationError("--jobs must be between 1 and 256, got \(jobs)") }
        if let memory, memory < 1 || memory > 1 << 20 {
            throw ValidationError("--memory must be between 1 and 1048576 (MB), got \(memory)")
        }
    }
}

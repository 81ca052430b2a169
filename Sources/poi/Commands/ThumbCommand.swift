import ArgumentParser
import PoiImaging
import PoiJobs

/// `poi thumb`: thumbnails of local files, no database (like vipsthumbnail).
struct ThumbCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumb",
        abstract: "Make thumbnails of local JPEG/PNG files (no database).",
        discussion: """
        Writes one thumbnail per input into the output folder, named after the input with the \
        output format's extension (photo.jpg -> DIR/photo.jpeg). The output is JPEG, or PNG for an \
        image with alpha, unless --format says jpeg, png or webp (lossy WebP at --quality, alpha \
        kept: photo.jpg -> DIR/photo.webp). The input's format is detected from the bytes, not the \
        name; inputs are JPEG or PNG (a WebP input is refused as not a JPEG or PNG file). JPEGs are decoded at reduced size when the thumbnail allows it, EXIF \
        orientation is applied, and the result carries no metadata. Files that cannot be read or \
        decoded are reported on standard error, one line each ("file: reason"), and the rest are \
        still processed. An embedded colour profile that cannot be used (damaged, truncated, \
        over the size cap, for other pixels) gives a "file: warning: ..." line and a thumbnail \
        made as if untagged (exit status 0; `warning` in --json). Two inputs that would give the same output name: the first one given \
        that makes a thumbnail gets it, the other is reported; the same file given twice (or through a link) is \
        thumbnailed once, with a note (`sameAs` in --json). An input is never overwritten. Files are processed in \
        parallel (--jobs), a bounded number at a time, so memory stays flat however many files \
        there are.

        Exit status: 0 all thumbnails written, 1 some files failed, 2 bad arguments, \
        3 the output folder cannot be created.

        Examples:
          poi thumb photos/*.jpg -o thumbs
          poi thumb IMG_0001.JPG banner.png -o out --size 320x200 --fit cover --format jpeg --quality 80
          poi thumb scans/*.png -o out --format png --jobs 4 --json | jq .failed
          poi thumb photos/*.jpg -o thumbs --format webp --quality 80
        """
    )

    @Argument(help: ArgumentHelp("JPEG or PNG files.", valueName: "file"))
    var files: [String]

    @Option(name: [.customShort("o"), .customLong("output")],
            help: ArgumentHelp("Output folder (created if missing).", valueName: "dir"))
    var output: String

    @OptionGroup var recipe: ThumbnailRecipeOptions
    @OptionGroup var parallel: ParallelOptions
    @OptionGroup var printing: OutputOptions

    @Flag(help: "Write progressive JPEGs.")
    var progressive = false

    @Flag(help: "Keep images that decode with corrupt-data warnings (e.g. truncated JPEGs).")
    var lenient = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one image") }
        guard !output.isEmpty else { throw ValidationError("-o needs a folder; use -o . for the current one") }
    }

    func run() throws {
        var options = LocalThumbnailOptions()
        options.spec = try recipe.spec(progressive: progressive)
        options.decode = DecodeOptions(maxPixels: recipe.maxPixels, lenient: lenient)
        options.jobs = parallel.resolvedJobs
        options.memory = parallel.memoryBytes
        let printer = EventPrinter(options: printing, unit: "images")
        let job = LocalThumbnailJob(files: files, outputFolder: output, options: options, observer: printer.observer)
        let summary = try printer.run { () throws(JobError) in try job.run() }
        for entry in summary.files {
            if let first = entry.sameAs {
                if !printing.quiet {
                    Console.writeError(TerminalText.escaped("\(entry.input): note: the same file as \(first); thumbnailed once") + "\n")
                }
                continue
            }
            // Exactly "file: reason", one line per file, so the list can be grepped or re-fed.
            if let error = entry.error { Console.writeError(TerminalText.escaped("\(entry.input): \(error)") + "\n") }
            if let warning = entry.warning {
                Console.writeError(TerminalText.escaped("\(entry.input): warning: \(warning)") + "\n")
            }
        }
        if printing.json {
            try printJSON(summary)
        } else if !printing.quiet {
            try printOut("\(summary.written) thumbnail\(summary.written == 1 ? "" : "s") written to \(output)"
                + (summary.failed > 0 ? ", \(summary.failed) failed" : "") + " (\(String(format: "%.2f", summary.seconds)) s)")
        }
        if summary.failed > 0 { throw ExitStatus.rejects }
    }
}

import ArgumentParser
import PoiImaging
import PoiJobs

/// `poi thumb`: thumbnails of local files, no database (like vipsthumbnail).
struct ThumbCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumb",
        abstract: "Make thumbnails of local JPEG/PNG files (no database).",
        // Spelled out: with the rarer options hidden, the generated synopsis lists them all, past 80 columns.
        usage: "poi thumb [<options>] <file> ... --output <dir>",
        // The short help: what it does, the essentials, three examples. docs/poi.md has the
        // rest, and every option (`--help-hidden` lists the ones left out here).
        discussion: """
        One thumbnail per input in DIR, named after it (photo.jpg -> DIR/photo.jpeg). \
        Exit status 1: some files failed. All rules and options: docs/poi.md#poi-thumb.

        Examples:
          poi thumb photos/*.jpg -o thumbs
          poi thumb IMG_0001.JPG banner.png -o out --size 320x200 --fit cover
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

    @Flag(help: "Keep images decoded with corrupt-data warnings.")
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

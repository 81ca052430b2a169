import PoiFormats
import PoiModel

/// One file's verdict in `poi check`.
public struct CheckFileResult: Sendable, Encodable, Equatable {
    public var file: String
    /// "csv" or "geojson"; nil when the file could not be read at all.
    public var format: String?
    public var valid = 0
    public var rejected = 0
    /// Why the file could not be read (missing, empty, no name/latitude/longitude column, a read
    /// error midway: the counts are those of the records before it).
    public var error: String?
    /// The same, as the reader reported it: a front end adds its hints from it (not encoded).
    public var failure: FormatError?

    private enum CodingKeys: String, CodingKey { case file, format, valid, rejected, error }
}

/// What `poi check` found over all its files.
public struct CheckSummary: Sendable, Encodable, Equatable {
    public var files: [CheckFileResult] = []
    public var valid = 0
    public var rejected = 0
    /// Files that could not be read to the end.
    public var unreadable = 0
    /// Members of zip archives that are not dumps (a README…), not read.
    public var skippedMembers: [SkippedMember] = []
}

/// `poi check`: reads and validates dumps exactly as the import would, without a database and
/// without building places (`PlaceReader.validateRemaining`). Rejects go to the observer in
/// input order, as they are found, so memory stays flat however many there are.
public struct CheckJob {
    public let files: [String]
    public let options: ReadOptions
    private let observer: JobObserver

    public init(files: [String], options: ReadOptions, observer: @escaping JobObserver = { _ in }) {
        self.files = files
        self.options = options
        self.observer = observer
    }

    /// Never throws: a file that cannot be read is a result of its own (`error`), and the next
    /// file is checked. `onFile` sees each file's result as soon as it is done.
    public func run(onFile: (CheckFileResult) -> Void = { _ in }) -> CheckSummary {
        var summary = CheckSummary()
        for path in files {
            // A zip archive is its dump members, each checked as a file of its own.
            let inputs: [DumpInput]
            do {
                let expanded = try DumpInput.expand(path)
                inputs = expanded.inputs
                summary.skippedMembers += expanded.skipped
            } catch {
                var result = CheckFileResult(file: path)
                result.error = error.description
                result.failure = error
                summary.unreadable += 1
                summary.files.append(result)
                onFile(result)
                continue
            }
            for input in inputs { check(input, into: &summary, onFile: onFile) }
        }
        return summary
    }

    private func check(_ input: DumpInput, into summary: inout CheckSummary, onFile: (CheckFileResult) -> Void) {
        let file = input.name
        var result = CheckFileResult(file: file)
        do {
            let reader = try input.reader(options: options)
            result.format = reader.format.rawValue
            // Counted as they come, so a file that breaks off midway still reports its counts.
            try reader.validateRemaining(valid: &result.valid) { reject, _ in
                result.rejected += 1
                observer(.rejected(reject))
            }
            for note in reader.notes { observer(.note(note)) }
        } catch {
            result.error = error.description
            result.failure = error
            summary.unreadable += 1
        }
        summary.valid += result.valid
        summary.rejected += result.rejected
        summary.files.append(result)
        onFile(result)
    }
}

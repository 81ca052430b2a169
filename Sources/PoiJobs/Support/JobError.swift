import PoiFiles
import PoiFormats
import PoiStore

/// Why a job stopped before finishing. Rejected rows and bad images are not errors: they are
/// reported and the job goes on; these are the failures that end it.
///
/// Each case keeps the structured fact (the `StoreError`, the path that could not be written),
/// so a caller maps it to what it speaks — an exit status, an HTTP status, a hint naming its own
/// options — without parsing text. Descriptions name no command-line flag.
public enum JobError: Error, Sendable, CustomStringConvertible {
    /// An input could not be opened or read at all (the user named a bad file).
    case input(FormatError)
    /// Options that cannot work together, discovered while running.
    case configuration(ConfigurationProblem)
    /// The database or byte store failed; `.refusedQuery` is the user's query or bounding box.
    /// Everything written before it is consistent.
    case store(StoreError)
    /// An output file (rejects, export, copied images) could not be written; `path` is `-` for
    /// standard output.
    case output(path: String, reason: String)
    /// A local file could not be opened, read or written; `FileError.outputIsInput` is the
    /// user's mistake, the rest are I/O failures.
    case file(FileError)
    /// An input read twice (to find the last record of each key) did not read the same the
    /// second time: it changed while the job ran. Nothing of the second read was left half done
    /// (every window written is whole); a run over the settled file completes the job.
    case inputChanged(file: String)
    /// `poi convert`'s input stopped being readable after its output was begun (a truncated gzip,
    /// a corrupt zip member). `output` nil: standard output, which got every place read before
    /// it and a closed collection; a file is not written (an earlier one stays as it was), so a
    /// damaged download never replaces a good conversion.
    case inputCutShort(FormatError, placesWritten: Int, output: String?)

    public var description: String {
        switch self {
        case .input(let e): return e.description
        case .inputCutShort(let e, let written, let output):
            return e.description + (output.map { "; \($0) was not written (left as it was)" }
                                    ?? "; the \(written) places read before it were written to standard output")
        case .configuration(let problem): return problem.description
        case .store(let e): return e.description
        case .output(let path, let reason):
            return path == "-" ? "cannot write to standard output: \(reason)" : "cannot write \(path): \(reason)"
        case .file(let e): return e.description
        case .inputChanged(let file):
            return "\(file) changed while it was being imported (it is read twice to keep the last record of each key)"
        }
    }
}

/// Options a job cannot run with. The named cases are the ones a front end explains in its own
/// terms (the CLI names the flag); anything else is `.other`, which a string literal also makes.
public enum ConfigurationProblem: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// One rejects file was named for several inputs (each input has its own rejects).
    case oneRejectsFileForManyInputs(inputs: Int)
    /// Copying images beside an export needs the byte store (uploads folder or GridFS).
    case imagesNeedFileStore
    /// The database has no such collection (a mistyped database name reads as an empty new
    /// database); `holders`: the databases that have one, when they can be listed.
    case noSuchCollection(database: String, collection: String, holders: [String])
    /// An export found nothing and would replace `path`, which holds an earlier non-empty export
    /// (or anything else), with an empty one.
    case emptyResultWouldReplace(path: String)
    /// Keeping the last record of each key reads the inputs twice; standard input, a pipe or a
    /// device can be read once (`FilePaths.isReadOnce`).
    case lastWinsNeedsFiles(input: String)
    /// A CSV export to `output` would write `sidecar`, which is also the `.csvt` that `other`
    /// (another CSV file beside it) is read with (`CSVTypeSidecar.otherCSV`).
    case sidecarShared(output: String, sidecar: String, other: String)
    case other(String)

    public init(stringLiteral value: String) { self = .other(value) }

    public var description: String {
        switch self {
        case .oneRejectsFileForManyInputs(let inputs):
            return "one rejects file was named, but \(inputs) inputs were given; without it each input gets NAME.rejects.* beside it"
        case .imagesNeedFileStore:
            return "copying images needs the byte store (an uploads folder or GridFS)"
        case .noSuchCollection(let database, let collection, let holders):
            let others = holders.isEmpty ? "no database on this server has one"
                : (holders.count == 1 ? "the database that has one is " : "the databases that have one are ")
                    + holders.joined(separator: ", ")
            return "database \(database) has no \(collection) collection (\(others))"
        case .emptyResultWouldReplace(let path):
            return "no places matched, and the empty result would replace \(path), which is not empty; left as it was"
        case .lastWinsNeedsFiles(let input):
            return "keeping the last record of each key reads the input twice, and "
                + (input == "-" ? "standard input" : "\(input) (a pipe or device)") + " can be read only once"
        case .sidecarShared(let output, let sidecar, let other):
            return "the types of \(output) go to \(sidecar) (GDAL's name for them), which is also what \(other) is read "
                + "with: it would replace \(other)'s types, and \(other) would import with \(output)'s; nothing was written"
        case .other(let text):
            return text
        }
    }
}

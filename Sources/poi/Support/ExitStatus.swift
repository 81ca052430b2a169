import ArgumentParser
import PoiFiles
import PoiFormats
import PoiJobs

/// The exit statuses every `poi` command uses (documented in `poi --help`).
enum ExitStatus {
    /// Finished, but some rows or files were rejected.
    static let rejects = ExitCode(1)
    /// Bad arguments or configuration.
    static let usage = ExitCode(2)
    /// The database or the file system failed.
    static let failure = ExitCode(3)

    /// What a job's failure means for the caller: the user's mistake (2) or a failure (3).
    static func of(_ error: JobError) -> ExitCode {
        switch error {
        case .input(let format), .inputCutShort(let format, _, _): return of(format)
        case .configuration, .store(.refusedQuery), .store(.uploadsFolderMissing): return usage
        case .store, .output, .inputChanged: return failure
        case .file(let e):
            if case .outputIsInput = e { return usage }
            return failure
        }
    }

    /// An input that could not be read: the user's to fix (2), except one that changed while it
    /// was read, which is like `inputChanged`: nothing wrong with the command, run it again (3).
    static func of(_ error: FormatError) -> ExitCode {
        if case .changedWhileRead = error { return failure }
        return usage
    }
}

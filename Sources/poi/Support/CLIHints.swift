import PoiFormats
import PoiJobs
import PoiStore

/// How to fix a failure with this command line. The library's errors say what failed and keep
/// the facts (which store error, which path, which option clash); only `poi` knows its flags and
/// make targets, so the hints naming them live here and are added when the message is printed.
enum CLIHints {
    /// The error's message, followed by the hint when there is one.
    static func message(for error: any Error) -> String {
        let text = String(describing: error)
        guard let hint = hint(for: error) else { return text }
        return text.hasSuffix(".") ? "\(text) \(hint)" : "\(text). \(hint)"
    }

    static func hint(for error: any Error) -> String? {
        switch error {
        case let job as JobError: return hint(for: job)
        case let store as StoreError: return hint(for: store)
        case let format as FormatError: return hint(for: format)
        default: return nil
        }
    }

    static func hint(for error: JobError) -> String? {
        switch error {
        case .store(let store): return hint(for: store)
        case .configuration(.oneRejectsFileForManyInputs): return "--rejects names one file: give one input, or leave it out."
        case .configuration(.imagesNeedFileStore): return "--with-images reads the images from --uploads DIR or --gridfs."
        case .configuration(.noSuchCollection): return "Name the database with --db (or in the URI)."
        case .configuration(.emptyResultWouldReplace): return "Give --allow-empty to replace it with the empty result."
        case .configuration(.sidecarShared): return "Export to a name of its own (another stem), or move the other file away."
        case .configuration(.lastWinsNeedsFiles): return "Save the input to a file and read that, or use --on-duplicate first or reject."
        case .inputChanged: return "Run the import again once the file is complete."
        case .input(let format), .inputCutShort(let format, _, _): return hint(for: format)
        case .configuration, .output, .file: return nil
        }
    }

    static func hint(for error: FormatError) -> String? {
        switch error {
        case .missingColumn(_, let field, _, _):
            return "Name it with --field \(field.rawValue)=COLUMN, or name the columns of a file without a header line with --columns."
        case .invalidHeader(_, let reason) where reason.contains("not valid UTF-8"):
            return "If the file is in another encoding, name it with --encoding (e.g. --encoding cp1252)."
        case .decompressionLimit:
            return "If the dump really is that large, raise the cap with --max-bytes (e.g. --max-bytes 64G)."
        case .columnCountMismatch(_, _, let fields, _):
            return "Name all \(fields) columns with --columns (or --columns-file), in order."
        case .noDumpInArchive:
            return "Check the download; PoiKit reads the archive's .csv, .tsv, .txt, .geojson and .json members."
        case .unreadableArchiveMember:
            return "Unzip it (unzip, or 7z for other methods) and give PoiKit the files."
        case .unmarkedUTF16(_, let bigEndian):
            return "Name its encoding: --encoding \(bigEndian ? "utf-16be" : "utf-16le")."
        case .zipNeedsFile:
            return "Give the archive's file name, or stream one member into poi: unzip -p dump.zip part-a.csv | poi import -"
        case .changedWhileRead:
            return "Run again once the file is complete (write it under another name and rename it when done)."
        case .columnTaken(_, let field, _, let other):
            return "Map \(other.rawValue) to another column, or name the \(field.rawValue) column with --field \(field.rawValue)=COLUMN."
        default:
            return nil
        }
    }

    static func hint(for error: StoreError) -> String? {
        switch error {
        case .tls(_, let reason):
            let r = reason.lowercased()
            if r.contains("mismatch") || r.contains("hostname") {
                return "The server's certificate does not name the host in the URI: connect by a name its certificate holds."
            }
            if r.contains("initialize tls") {
                return "The URI's TLS files could not be used: check that tlsCAFile (and tlsCertificateKeyFile) name "
                    + "readable PEM files."
            }
            if r.contains("certificate verify failed") {
                return "The server's certificate is not signed by a CA this machine trusts: name the CA's certificate with "
                    + "tlsCAFile=/path/to/ca.pem in the URI."
            }
            return "Check the URI's TLS options: tls=true, tlsCAFile, tlsCertificateKeyFile."
        case .retried:
            return "Run it again once the database is healthy (a rerun finishes the job, without duplicates), "
                + "or give it longer with --retry-for."
        case .unreachable:
            return "Check that the server is running and that --uri or MONGODB_URI points at it "
                + "(for the embedded test server: make db-start)."
        case .uploadsFolderMissing(_, let filesListed):
            return "Name the backend's uploads folder with --uploads, or use --gridfs"
                + (filesListed ? "; if those files really are gone, create the folder first." : ".")
        case .bytesMissing:
            return "\(storeHint) poi gc lists every files document whose bytes are missing."
        case .bytesDamaged:
            return "poi gc lists every damaged file (--verify also compares contents)."
        default:
            return nil
        }
    }

    /// Where bytes may be instead when a files document's bytes are not in the store given.
    static let storeHint = "Give --uploads the folder they were stored in, or --gridfs if they were stored in GridFS."

    /// After a run that found `files` documents whose bytes are not in the store it was given:
    /// a folder other than the one they were stored in, or a GridFS database read as a folder.
    static func missingBytes(_ what: String, storage: StorageOptions) -> String {
        let place = storage.gridfs ? "GridFS (bucket fs)" : "the uploads folder \(storage.uploads)"
        let hint = storage.gridfs
            ? "Give --uploads the folder they were stored in (without --gridfs) if they were not stored in GridFS."
            : storeHint
        return "\(what) are listed in the files collection, but their bytes are not in \(place). \(hint)"
    }
}

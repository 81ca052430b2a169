import PoiFiles
import PoiFormats

// Which rejects file each dump of an import run gets, and in what shape.

/// The default rejects files one import run has named so far. Two inputs can map to the same
/// default name (`shops.csv` and `shops.txt` both to `shops.rejects.csv`); the second one's
/// rejects must not replace or delete the first one's, so it gets a name of its own.
struct DefaultRejectsPaths {
    private var taken: Set<String> = []

    /// The default rejects file of `dump`, made unique within the run.
    mutating func unique(for dump: DumpInput, format: InputFormat) -> String {
        let file = dump.name
        var path = dump.memberName.map { RejectsLocation.defaultPath(forMember: $0, of: dump.path, format: format) }
            ?? RejectsLocation.defaultPath(for: file, format: format)
        if taken.contains(path) {
            // Keep the input's whole name: `shops.txt.rejects.csv`, then numbered if need be.
            let suffix = format == .csv ? ".rejects.csv" : ".rejects.geojson"
            let base = FilePaths.join(FilePaths.folder(of: path), FilePaths.lastComponent(of: file == "-" ? "stdin" : file))
            path = base + suffix
            var n = 2
            while taken.contains(path) { path = base + ".\(n)" + suffix; n += 1 }
        }
        taken.insert(path)
        return path
    }
}

// MARK: The rejects file's shape

extension RejectsWriter.Style {
    /// The rejects file is written as its input was: GeoJSON features, or CSV rows under the
    /// input's header line, with its delimiter and quoting.
    init(matching reader: PlaceReader) {
        let delimiter = reader.csvDelimiter ?? UInt8(ascii: ",")
        if reader.format == .geojson { self = .geojson; return }
        if reader.csvHasHeaderLine {
            self = .csv(header: reader.csvRawHeader ?? RawCSVRecord(bytes: [], lineEndLength: 0, fieldCount: 0),
                        delimiter: delimiter, quoting: reader.csvQuoting)
            return
        }
        // Header-less (its columns named by the options): the rejects file names them in a header
        // line all the same (why: RejectsWriter).
        self = .csv(header: RejectsWriter.headerNaming(columns: reader.csvHeader ?? [], delimiter: delimiter,
                                                       quoting: reader.csvQuoting, bom: reader.csvHasBOM),
                    delimiter: delimiter, quoting: reader.csvQuoting)
    }
}

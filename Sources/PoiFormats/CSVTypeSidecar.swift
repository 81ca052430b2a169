#if canImport(Glibc)
import Glibc
#endif

/// GDAL's `.csvt` file: one line naming the type of each column of the CSV file of the same
/// name (`places.csv` → `places.csvt`), e.g. `"String","Integer64","Real","Integer(Boolean)"`.
/// ogr2ogr writes one with `-lco CREATE_CSVT=YES` and reads one when it is there; so do
/// `poi export --format csv` and `poi import`, which is how an export's numbers, booleans,
/// dates and lists come back as they were stored rather than as text.
///
/// Read by hand: a one-line list of names, which no CSV library would make shorter.
public enum CSVTypeSidecar {
    /// The `.csvt` beside a CSV file, named as GDAL names it: the file's last extension
    /// replaced (`x.csv` and `x.tsv` → `x.csvt`, `x.csv.gz` → `x.csv.csvt`), or `.csvt` added
    /// to a name without one. Nil for standard input.
    public static func path(forCSV path: String) -> String? {
        guard path != "-", !path.hasSuffix("/") else { return nil }
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let name = path[slash...]
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return path + ".csvt" }
        return String(path[..<dot]) + ".csvt"
    }

    /// The types a `.csvt` gives each column, in column order: nil where the column is text
    /// (`String`, `Time`) or geometry (`WKT`, `CoordX`, `Point(Y)`), which have their own rules.
    /// Nil when there is no such file, or it is not a one-line type list (over 64 KiB, not UTF-8).
    public static func types(besideCSV path: String) -> [ColumnType?]? {
        read(besideCSV: path)?.types
    }

    /// The `.csvt` to write beside an output CSV at `path`: only for a regular file (or a new
    /// one), never beside standard output, a device (`/dev/null`), a FIFO or a process
    /// substitution (`/dev/fd/63`), where a file of that name would be a stray or fail.
    public static func path(besideOutput path: String?) -> String? {
        guard let path, !path.hasPrefix("/dev/"), !path.hasPrefix("/proc/") else { return nil }
        var st = stat()
        if stat(path, &st) == 0, (st.st_mode & S_IFMT) != S_IFREG { return nil }
        return self.path(forCSV: path)
    }

    /// Another CSV file whose `.csvt` has the same name as `output`'s (`t.csv` beside an export
    /// to `t.tsv`, both read with `t.csvt`), when one is there: writing the export's types would
    /// replace that file's, and it would import with the export's types (a `1100.0` read as
    /// text, a `null` as the word). Names are GDAL's, which PoiKit cannot change without losing
    /// GDAL as a reader, so the export is refused instead (`ConfigurationProblem.sidecarShared`).
    /// Files counted as CSV: the extensions `poi import` reads as CSV (`.csv .tsv .tab .psv
    /// .txt`), gzip'd or not.
    public static func otherCSV(sharingSidecarWith output: String) -> String? {
        guard let sidecar = path(besideOutput: output) else { return nil }
        let folder = output.lastIndex(of: "/").map { String(output[...$0]) } ?? ""
        let ownName = output.lastIndex(of: "/").map { String(output[output.index(after: $0)...]) } ?? output
        // `t.csvt` is the sidecar of `t.EXT`: the stem and one extension.
        let stem = String(sidecar.dropFirst(folder.count).dropLast(".csvt".count))
        var candidates = csvExtensions.map { stem + "." + $0 }
        // `t.csv.csvt` is also `t.csv.gz`'s (GDAL replaces the last extension only).
        if csvExtensions.contains(where: { stem.hasSuffix("." + $0) }) { candidates.append(stem + ".gz") }
        for name in candidates where name != ownName {
            var st = stat()
            if stat(folder + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { return folder + name }
        }
        return nil
    }

    static let csvExtensions = ["csv", "tsv", "tab", "psv", "txt"]

    /// The file's types, and the names in it GDAL does not define (read as text).
    public struct Contents: Sendable, Equatable {
        public var types: [ColumnType?]
        public var unknownNames: [String]
    }

    public static func read(besideCSV path: String) -> Contents? {
        // A regular file only: a FIFO of that name would block the read.
        var st = stat()
        guard let sidecar = self.path(forCSV: path), stat(sidecar, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
              let source = try? ByteSource(path: sidecar) else { return nil }
        var bytes: [UInt8] = []
        while bytes.count <= 64 * 1024, let n = try? source.read(appendingTo: &bytes), n > 0 {}
        guard bytes.count <= 64 * 1024, let text = String(validating: bytes, as: UTF8.self) else { return nil }
        var line = Substring(text)
        if line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
        if let end = line.firstIndex(where: { $0 == "\n" || $0 == "\r" }) {
            guard line[end...].allSatisfy({ $0.isWhitespace }) else { return nil }
            line = line[..<end]
        }
        guard !line.isEmpty else { return nil }
        var contents = Contents(types: [], unknownNames: [])
        for item in line.split(separator: ",", omittingEmptySubsequences: false) {
            var name = item.trimmingCharacters(in: " \t")
            if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") { name = String(name.dropFirst().dropLast()) }
            contents.types.append(columnType(gdalName: name))
            if !isKnown(gdalName: name) { contents.unknownNames.append(name) }
        }
        return contents
    }

    /// Whether GDAL defines the name (case aside; a width or subtype in parentheses allowed).
    static func isKnown(gdalName: String) -> Bool {
        let base = gdalName.lowercased().split(separator: "(", maxSplits: 1).first.map(String.init) ?? ""
        return ["integer", "integer64", "real", "string", "date", "time", "datetime", "wkt", "coordx", "coordy", "point",
                "jsonstringlist", "jsonintegerlist", "jsoninteger64list", "jsonreallist"].contains(base)
    }

    /// PoiKit's type for a GDAL field type name (GDAL compares them without case).
    static func columnType(gdalName: String) -> ColumnType? {
        let name = gdalName.lowercased()
        let base = name.split(separator: "(", maxSplits: 1).first.map(String.init) ?? name
        let subtype = name.contains("(") ? String(name.drop { $0 != "(" }.dropFirst().prefix { $0 != ")" }) : ""
        switch base {
        case "integer", "integer64": return subtype == "boolean" ? .bool : .int
        case "real": return .double
        case "date", "datetime": return .date
        case "string": return subtype == "json" ? .json : nil
        case "jsonstringlist", "jsonintegerlist", "jsoninteger64list", "jsonreallist": return .json
        default: return nil
        }
    }

    /// The GDAL name written for a column of `type` (nil: text).
    public static func gdalName(_ type: ColumnType?) -> String {
        switch type {
        case nil, .string?: return "String"
        case .int?: return "Integer64"
        case .double?: return "Real"
        case .bool?: return "Integer(Boolean)"
        case .date?: return "DateTime"
        case .json?: return "String(JSON)"
        }
    }

    /// The file's text for these column types: one line, each name quoted, as GDAL writes it.
    public static func text(_ types: [ColumnType?]) -> String {
        types.map { "\"\(gdalName($0))\"" }.joined(separator: ",") + "\n"
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        return String(s)
    }
}

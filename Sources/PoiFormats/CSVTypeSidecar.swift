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
    /// The `.csvt` beside a CSV (or TSV) file, compressed or not: `x.csv`, `x.csv.gz`, `x.tsv`
    /// and `x.txt` all have `x.csvt`. Nil for standard input.
    public static func path(forCSV path: String) -> String? {
        guard path != "-" else { return nil }
        var base = path
        if base.lowercased().hasSuffix(".gz") { base.removeLast(3) }
        for ext in [".csv", ".tsv", ".txt"] where base.lowercased().hasSuffix(ext) {
            base.removeLast(ext.count)
            break
        }
        return base + ".csvt"
    }

    /// The types a `.csvt` gives each column, in column order: nil where the column is text
    /// (`String`, `Time`) or geometry (`WKT`, `CoordX`, `Point(Y)`), which have their own rules.
    /// Nil when there is no such file, or it is not a one-line type list (over 64 KiB, not UTF-8).
    public static func types(besideCSV path: String) -> [ColumnType?]? {
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
        return line.split(separator: ",", omittingEmptySubsequences: false).map { item in
            var name = item.trimmingCharacters(in: " \t")
            if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") { name = String(name.dropFirst().dropLast()) }
            return columnType(gdalName: name)
        }
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

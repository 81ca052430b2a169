import PoiModel

/// A problem that stops reading a whole file (as opposed to a `Reject`, which skips one record).
/// `poi check` exits 2 on these. Messages say what is wrong, not which option fixes it: the CLI
/// adds that (e.g. how to name a missing column's field).
public enum FormatError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotOpen(file: String, reason: String)
    case readFailed(file: String, reason: String)
    /// A file that changed between its opening and its end (still being downloaded, truncated,
    /// rewritten): what was read is not the file as it is. Sizes in bytes: when opened, at the
    /// end, and read.
    case changedWhileRead(file: String, openedBytes: Int, endBytes: Int, readBytes: Int)
    case writeFailed(file: String, reason: String)
    case emptyFile(file: String)
    case invalidHeader(file: String, reason: String)
    /// `header`: the columns the header was read as (what tells a wrong delimiter).
    case missingColumn(file: String, field: PlaceField, looked: [String], header: [String] = [])
    case unknownFormat(file: String)
    /// The column `field` would be read from (by name or by its mapping) is mapped to another
    /// field, `by` (a mapping such as name=lat took the latitude's column).
    case columnTaken(file: String, field: PlaceField, column: String, by: PlaceField)
    /// The compressed input is damaged at `offset` (a byte offset in the compressed file): the
    /// bytes decoded before it were read.
    case damagedCompression(file: String, offset: Int, reason: String)
    /// Decompressing stopped (or never started) at a cap on decompressed bytes or on the
    /// compression ratio (`ReadLimits.maxInflatedBytes`, `maxInflateRatio`): a decompression
    /// bomb, or a dump over the cap. The bytes decoded before it were read.
    case decompressionLimit(file: String, reason: String)
    /// A zip member that cannot be read to its end: corrupt (CRC, sizes), truncated, encrypted or
    /// compressed with a method other than stored/deflate. `file` is `ARCHIVE:MEMBER`; the bytes
    /// decoded before the damage was found were read.
    case damagedArchive(file: String, reason: String)
    /// The first record of a file without a header line has more fields than the column names
    /// given for it (`ReadOptions.columns`): the names do not fit the file.
    case columnCountMismatch(file: String, line: Int, fields: Int, names: Int)
    /// A zip archive holding no CSV or GeoJSON member (empty, or only a README): nothing to read.
    /// `skipped`: the members there are, with why each is not a dump.
    case noDumpInArchive(file: String, skipped: [String])
    /// A zip member that is not damaged but cannot be read here: encrypted, or compressed with
    /// a method other than stored and deflate. Nothing of it was read.
    case unreadableArchiveMember(file: String, reason: String)
    /// Text with a NUL byte every other byte and no byte-order mark: UTF-16 (`bigEndian` or
    /// little) that did not say so. Read as UTF-8 every record would be refused for its NULs.
    case unmarkedUTF16(file: String, bigEndian: Bool)
    /// A zip archive on standard input or a pipe: its directory is at its end, so it is read from
    /// a file only.
    case zipNeedsFile(file: String)
    /// A GeoJSON file whose `crs` member names a coordinate system other than WGS 84
    /// longitude/latitude (a pre-RFC 7946 file in a projected CRS, such as `EPSG::2154`).
    case foreignCRS(file: String, name: String)
    /// A `--types` name this file cannot type: a column the header lacks, or one PoiKit reads
    /// as a place field (`reason` says which).
    case typedColumn(file: String, name: String, reason: String)

    /// What went wrong without the file's name, for a message that names the file itself:
    /// `JobError.output` said "cannot write out.geojson: out.geojson: write failed: File too large".
    public var reasonWithoutFile: String {
        if case .writeFailed(_, let reason) = self { return reason }
        return description
    }

    public var description: String {
        switch self {
        case .cannotOpen(let f, let r): return "\(f): cannot open: \(r)"
        case .readFailed(let f, let r): return "\(f): read failed: \(r)"
        case .changedWhileRead(let f, let opened, let end, let read):
            let sizes = opened == end ? "\(end) bytes" : "\(opened) bytes when opened, \(end) at its end"
            return "\(f): changed while it was read (\(sizes), \(read) read): another program was writing or "
                + "truncating it, so what was read is not the file"
        case .writeFailed(let f, let r): return "\(f): write failed: \(r)"
        case .emptyFile(let f): return "\(f): file is empty (no header row)"
        case .invalidHeader(let f, let r): return "\(f): invalid header: \(r)"
        case .missingColumn(let f, let field, let looked, let header):
            var text = "\(f): no \(field.rawValue) column (looked for \(looked.joined(separator: ", "))"
            if !header.isEmpty {
                let shown = header.prefix(8).map { "\"\($0.prefix(40))\"" }.joined(separator: ", ") + (header.count > 8 ? ", …" : "")
                text += "; the header was read as \(header.count) column\(header.count == 1 ? "" : "s"): \(shown)"
                // One column holding another delimiter: the likely cause, said with its fix.
                if header.count == 1, let d = [(";", ";"), ("\t", "tab"), ("|", "|"), (",", ",")].first(where: { header[0].contains($0.0) }) {
                    text += ", which holds '\(d.1 == "tab" ? "\\t" : d.1)': is that the delimiter? (--delimiter \(d.1 == "tab" ? "tab" : "'" + d.1 + "'"))"
                }
            }
            return text + ")"
        case .unknownFormat(let f): return "\(f): neither CSV nor GeoJSON"
        case .columnTaken(let f, let field, let column, let other):
            return "\(f): no \(field.rawValue) column: column \(column) is mapped to \(other.rawValue)"
        case .damagedCompression(let f, let offset, let r):
            return "\(f): damaged gzip data at byte \(offset) of the compressed file: \(r); "
                + "everything before it was read"
        case .decompressionLimit(let f, let r):
            return "\(f): decompression refused (a decompression bomb?): \(r)"
        case .damagedArchive(let f, let r):
            return "\(f): damaged zip data: \(r); everything before it was read"
        case .columnCountMismatch(let f, let line, let fields, let names):
            return "\(f): line \(line) has \(fields) fields, but \(names) column names were given for this file "
                + "without a header line; nothing was read"
        case .noDumpInArchive(let f, let skipped):
            return "\(f): no CSV or GeoJSON member in this zip archive ("
                + (skipped.isEmpty ? "it is empty" : "only " + skipped.joined(separator: ", ")) + ")"
        case .unreadableArchiveMember(let f, let r):
            return "\(f): not read: \(r)"
        case .unmarkedUTF16(let f, let bigEndian):
            return "\(f): looks like UTF-16 \(bigEndian ? "BE" : "LE") text without a byte-order mark "
                + "(a NUL byte every other byte); it was not read as UTF-8"
        case .zipNeedsFile(let f):
            return "\(f == "-" ? "standard input" : f): is a zip archive, which is read from a file only (its directory is at its end)"
        case .typedColumn(let f, let name, let reason):
            return "\(f): --types \(name): \(reason); nothing was read"
        case .foreignCRS(let f, let name):
            return "\(f): coordinates are in \(name) (the file's crs member), not WGS 84 longitude/latitude as "
                + "RFC 7946 requires; reproject first: ogr2ogr -t_srs EPSG:4326 -f GeoJSON out.geojson \(Self.ogrSource(f))"
        }
    }
}

extension FormatError {
    /// `file` as ogr2ogr opens it, quoted for a shell, so the command a message gives runs as
    /// pasted: a zip member (`dumps.zip:a.geojson`) through `/vsizip/`, a `.gz` file through
    /// `/vsigzip/`, a name starting with `-` as `./-name` (not an option).
    static func ogrSource(_ file: String) -> String {
        if file == "-" { return "in.geojson" }
        var path = file
        let lower = Array(file.lowercased().utf8)
        if lower.count == file.utf8.count, let at = (0..<max(0, lower.count - 4)).first(where: { lower[$0..<($0 + 5)].elementsEqual(".zip:".utf8) }) {
            let bytes = Array(file.utf8)
            path = "/vsizip/" + String(decoding: bytes[..<(at + 4)], as: UTF8.self) + "/" + String(decoding: bytes[(at + 5)...], as: UTF8.self)
        } else if file.lowercased().hasSuffix(".gz") {
            path = "/vsigzip/" + file
        } else if file.hasPrefix("-") {
            path = "./" + file
        }
        let plain = path.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || "_./:+,@=%-".utf8.contains(b)
        }
        return plain ? path : "'" + path.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }
}

/// Size limits that keep hostile input from exhausting memory. Exceeding one rejects the record
/// (the reader skips to the next one), it never aborts the file.
public struct ReadLimits: Sendable, Equatable {
    /// Largest CSV record, in bytes (all fields together).
    public var maxRecordBytes: Int = 1 << 20
    /// Most fields in one CSV record.
    public var maxFields: Int = 4096
    /// Largest single GeoJSON Feature (or top-level member), in bytes.
    public var maxFeatureBytes: Int = 16 << 20
    /// Deepest JSON nesting inside a feature (objects + arrays).
    public var maxDepth: Int = 64
    /// Most bytes one compressed input (a gzip stream, a zip member) may inflate to; past it
    /// reading stops with `decompressionLimit`. A zip member declaring more is refused unread.
    /// 16 GiB: ten times GeoNames' allCountries.txt, and about a minute of zlib.
    public var maxInflatedBytes: Int = 16 << 30
    /// Most decompressed bytes per compressed byte of a zip member, declared or actual, once it
    /// has inflated past `inflateRatioFloor` bytes. deflate's own ceiling is about 1032:1 (runs of
    /// one byte), text dumps compress 3:1 to 20:1: over 1000:1 is a bomb of zeros.
    public var maxInflateRatio: Int = 1000
    public var inflateRatioFloor: Int = 1 << 20

    public init() {}
}

import Foundation
import PoiFiles
import PoiFormats

/// Where an import puts its rejects by default, and how it recognises its own rejects files
/// among its inputs (a cron line importing `dumps/*.csv` must not import yesterday's
/// `places.rejects.csv` as a dump, nor stack `.rejects.rejects.csv` night after night).
public enum RejectsLocation {
    /// The default rejects file of `input`: `NAME.rejects.csv` / `.rejects.geojson` beside it when
    /// it is a regular file in a folder this process may write. Otherwise (standard input, a pipe
    /// such as `<(cat x.csv)` or `/dev/fd/N`, a device, a read-only dumps folder) the same name —
    /// `stdin` for standard input, `fdN` for `/dev/fd/N` — in the current folder, else in
    /// `$TMPDIR` (or /tmp); never `/dev/stdin.rejects.csv`. The summary names the file either way.
    public static func defaultPath(for input: String, format: InputFormat) -> String {
        let suffix = format == .csv ? ".rejects.csv" : ".rejects.geojson"
        let standardInput = ["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"].contains(input)
        var st = stat()
        if !standardInput, stat(input, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG {
            let beside = ImportOptions.defaultRejectsPath(for: input, format: format)
            if access(FilePaths.folder(of: beside), W_OK) == 0 { return beside }
        }
        var name: String
        if standardInput {
            name = "stdin"
        } else {
            name = FilePaths.lastComponent(of: input)
            if FilePaths.lastComponent(of: FilePaths.folder(of: input)) == "fd" { name = "fd" + name }  // /dev/fd/63
            if name.lowercased().hasSuffix(".gz"), name.count > 3 { name.removeLast(3) }
            if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = String(name[..<dot]) }
        }
        let environment = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let current = FileManager.default.currentDirectoryPath
        let folder = access(".", W_OK) == 0 ? current : environment
        return FilePaths.join(folder, name + suffix)
    }

    /// The default rejects file of a zip member: beside the archive (when its folder is
    /// writable, else where `defaultPath(for:format:)` would put it), named after both:
    /// `dumps/dump.zip` member `dump/part-a.csv` → `dumps/dump.part-a.rejects.csv`, and when the
    /// member is named like its archive (GeoNames' `allCountries.zip` holding
    /// `allCountries.txt`), `allCountries.rejects.csv`. One file per member, each recognised as a
    /// rejects file among inputs like any other.
    public static func defaultPath(forMember member: String, of archive: String, format: InputFormat) -> String {
        func stem(_ name: String) -> String {
            var last = FilePaths.lastComponent(of: name)
            if last.lowercased().hasSuffix(".gz"), last.count > 3 { last.removeLast(3) }
            if let dot = last.lastIndex(of: "."), dot != last.startIndex { last = String(last[..<dot]) }
            return last
        }
        let archiveStem = stem(archive), memberStem = stem(member)
        let name = archiveStem == memberStem ? archiveStem : archiveStem + "." + memberStem
        let suffix = format == .csv ? ".rejects.csv" : ".rejects.geojson"
        let beside = FilePaths.join(FilePaths.folder(of: archive), name + suffix)
        if access(FilePaths.folder(of: beside), W_OK) == 0 { return beside }
        let environment = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let folder = access(".", W_OK) == 0 ? FileManager.default.currentDirectoryPath : environment
        return FilePaths.join(folder, name + suffix)
    }

    /// Whether `path` is a rejects file a PoiKit import wrote: its name ends in `.rejects.csv` or
    /// `.rejects.geojson` AND its content is one (a CSV header ending in `_line,_field,_reason`
    /// with the file's delimiter, also in UTF-16/UTF-32 after a BOM; a FeatureCollection whose
    /// features carry `_feature`). Only
    /// regular files are looked at: a pipe's bytes are never consumed here.
    /// `options` for reading `dump`: one of PoiKit's own rejects files (a fixed one, imported or
    /// converted alone) has its reason columns ignored, so a fixed row is the place the dump's
    /// row is (`ReadOptions.isRejectsFile`).
    static func readOptions(_ options: ReadOptions, for dump: DumpInput) -> ReadOptions {
        var options = options
        options.isRejectsFile = dump.memberName == nil && isOwnRejectsFile(dump.path)
        // Column types a GDAL `.csvt` beside the file gives (what `poi export --format csv` and
        // `ogr2ogr -lco CREATE_CSVT=YES` write): read here, where the path is known, for every
        // job that reads dumps, so `check` and `import` see the same types.
        if dump.memberName == nil, let sidecar = CSVTypeSidecar.read(besideCSV: dump.path) {
            options.sidecarTypes = sidecar.types
            options.sidecarUnknownNames = sidecar.unknownNames
            options.sidecarName = CSVTypeSidecar.path(forCSV: dump.path)
        }
        return options
    }

    public static func isOwnRejectsFile(_ path: String) -> Bool {
        let name = FilePaths.lastComponent(of: path).lowercased()
        let isCSV = name.hasSuffix(".rejects.csv")
        guard isCSV || name.hasSuffix(".rejects.geojson") else { return false }
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 1 << 16)
        let n = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return false }
        var bytes = Array(head[..<n])
        // A rejects file of a UTF-16/UTF-32 input is written in its encoding, BOM first — or
        // without one, as its input was (`--encoding utf-16le`): NUL bytes in the head, where a
        // UTF-8 rejects file has none, say to try the wide encodings (the header decides).
        if let encoding = TextEncoding.fromBOM(bytes[...]) {
            bytes = encoding.decode(bytes)
        } else if bytes.contains(0) {
            for name in ["UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"] {
                guard let encoding = TextEncoding(name: name) else { continue }
                // Whole code units only: a 64 KiB read may end inside one.
                let unit = name.hasPrefix("UTF-16") ? 2 : 4
                if isRejectsContent(encoding.decode(Array(bytes[..<(bytes.count / unit * unit)])), isCSV: isCSV) { return true }
            }
            return false
        }
        return isRejectsContent(bytes, isCSV: isCSV)
    }

    /// UTF-8 text that starts like one of the import's rejects files.
    private static func isRejectsContent(_ bytes: [UInt8], isCSV: Bool) -> Bool {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        if isCSV {
            let firstLine = text.prefix { $0 != "\n" && $0 != "\r" && $0 != "\r\n" }
            return [",", ";", "\t", "|"].contains { d in firstLine.hasSuffix("\(d)_line\(d)_field\(d)_reason") }
        }
        return text.hasPrefix(#"{"type":"FeatureCollection","features":["#) && text.contains(#""_feature":"#)
    }
}

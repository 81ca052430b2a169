import PoiFiles
import PoiFormats
import PoiModel

/// Writes rejected records in the input's own format plus the reason, so a user can fix the file
/// and import just it. Records come back as the reader's raw bytes (`RawRecord`), never rebuilt
/// from parsed values: CSV rows are their input bytes, then the delimiter and `_line`, `_field`,
/// `_reason`, then their own line end; GeoJSON gets a FeatureCollection of the features as
/// written, with `_feature`, `_field`, `_reason` spliced into their properties. Written
/// atomically when the run ends; nothing is written without rejects.
///
/// A CSV input in another encoding (`PlaceReader.encoding`: given, or a UTF-16/UTF-32 BOM) gets
/// its rejects back in that encoding, BOM included when the input had one, so the rows are the
/// input's bytes. A CSV input without a header line (its columns named by `ReadOptions.columns`)
/// gets a rejects file with one all the same, naming the columns given plus the reason columns
/// (`headerNaming(columns:delimiter:bom:)`): it is then recognised as a rejects file (skipped
/// among a run's inputs, removed by a later run without rejects, as any other) and reads back
/// without the names being given again. GeoJSON rejects are UTF-8, as RFC 8259 wants JSON.
final class RejectsWriter {
    enum Style {
        /// `header` as the reader found it (`PlaceReader.csvRawHeader`).
        /// `quoting`: the input's; without it, a cell PoiKit adds cannot be quoted either.
        case csv(header: RawCSVRecord, delimiter: UInt8, quoting: CSVQuoting = .doubleQuote)
        case geojson
    }

    static let reasonColumns = CSVPlaceReader.rejectsReasonColumns

    let path: String
    /// The run's inputs: the rejects file may never be one of them (nor replace or delete one).
    private let inputs: [String]
    private let style: Style
    /// False for a dry run without `--rejects`: rejects are counted, nothing touches the disk.
    private let enabled: Bool
    private var file: AtomicFile?
    private var buffer: [UInt8] = []
    /// The line end rows take when the input's header has none (a header-less input): the one
    /// the header line was written with, so the file never mixes line ends.
    private var fileLineEnd: ArraySlice<UInt8> = [0x0D, 0x0A]
    private(set) var count = 0
    /// Converts the UTF-8 rows back to the input's encoding (CSV in another encoding only).
    private let encoder: TextEncoding.Encoder?

    /// The input's column types (its `.csvt`): the rejects file gets a `.csvt` of its own, so a
    /// fixed row of a typed CSV export reads back with its types.
    private let columnTypes: [ColumnType?]?

    init(path: String, style: Style, enabled: Bool = true, inputs: [String] = [], encoding: TextEncoding? = nil,
         columnTypes: [ColumnType?]? = nil) {
        self.columnTypes = columnTypes
        self.path = path
        self.style = style
        self.enabled = enabled
        self.inputs = inputs
        if case .csv = style, let encoding { encoder = TextEncoding.Encoder(encoding) } else { encoder = nil }
    }

    func add(_ reject: Reject, raw: RawRecord?) throws(FormatError) {
        guard enabled else { count += 1; return }
        if file == nil {
            do { file = try AtomicFile(path: path, refusing: inputs) } catch { throw .writeFailed(file: path, reason: error.reason) }
            writeHeader(first: raw)
        }
        switch style {
        case .csv(let header, let delimiter, let quoting):
            var lineEnd: ArraySlice<UInt8> = header.lineEnd.isEmpty ? fileLineEnd : header.lineEnd
            if case .csv(let record)? = raw {
                var content = record.content
                if record.unterminatedQuote {
                    // The one byte added to a record: its quote closed, or the reasons and every
                    // row after it would read as part of its last field. Before the file's last
                    // line break (inside the quotes), which ends the row instead: not a line of
                    // its own holding `"`.
                    if content.last == 0x0A {
                        let crlf = content.count >= 2 && content[content.endIndex - 2] == 0x0D
                        lineEnd = crlf ? [0x0D, 0x0A] : [0x0A]
                        content = content.dropLast(crlf ? 2 : 1)
                    }
                    buffer.append(contentsOf: content)
                    buffer.append(UInt8(ascii: "\""))
                } else {
                    buffer.append(contentsOf: content)
                    if record.fieldCount < header.fieldCount {
                        // Empty fields for the missing ones, so the reasons line up with their columns.
                        buffer.append(contentsOf: repeatElement(delimiter, count: header.fieldCount - record.fieldCount))
                    }
                    // The last line of a file may have no line end: it takes the header's.
                    if record.lineEndLength > 0 { lineEnd = record.lineEnd }
                }
            } else {
                // No raw bytes (the record was over the size limits): empty fields, and the
                // reason and `_line` say which record it was.
                buffer.append(contentsOf: repeatElement(delimiter, count: max(0, header.fieldCount - 1)))
            }
            for field in [reject.source.line.map(String.init) ?? "", reject.field ?? "", reject.reason] {
                buffer.append(delimiter)
                appendCSVField(field, delimiter: delimiter, quoting: quoting)
            }
            buffer.append(contentsOf: lineEnd)
        case .geojson:
            if count > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer.append(contentsOf: "\n".utf8)
            appendAnnotatedFeature(raw: raw, reject: reject)
        }
        count += 1
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Completes the file and renames it into place; with no rejects, removes a stale rejects file
    /// an earlier run left at this path, so what is there always describes the latest run. Only a
    /// regular file that is recognisably a rejects file and none of the inputs is removed: never
    /// a device (`--rejects /dev/null`), a FIFO, a symlink, or a file that happens to be there.
    func finish() throws(FormatError) {
        guard enabled else { return }
        guard let file else {
            var st = stat()
            if lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, RejectsLocation.isOwnRejectsFile(path),
               !inputs.contains(where: { FileIdentity.same($0, path) }) {
                unlink(path)
            }
            return
        }
        if case .geojson = style { buffer.append(contentsOf: "\n]}\n".utf8) }
        try flush()
        // The types first, as an export writes them: a reader that finds the file finds them.
        if let columnTypes, case .csv = style, let sidecar = CSVTypeSidecar.path(besideOutput: path) {
            let text = CSVTypeSidecar.text(columnTypes + Self.reasonColumns.map { _ in nil })
            do { try AtomicFile.write(Array(text.utf8), to: sidecar) } catch { throw .writeFailed(file: sidecar, reason: error.reason) }
        }
        do { try file.commit() } catch { throw .writeFailed(file: path, reason: error.reason) }
        self.file = nil
    }

    func abandon() {
        file?.abandon()
        file = nil
    }

    private func writeHeader(first: RawRecord?) {
        switch style {
        case .csv(let header, let delimiter, _):
            buffer.append(contentsOf: header.content)
            for name in Self.reasonColumns {
                buffer.append(delimiter)
                buffer.append(contentsOf: name.utf8)
            }
            // A header without a line end (made for a header-less input) takes the first
            // rejected row's, so the file does not mix line ends; CRLF (RFC 4180) failing that.
            // (A record cut off by the end of the file has none: the first line break inside it.)
            var lineEnd: ArraySlice<UInt8> = header.lineEnd
            if lineEnd.isEmpty, case .csv(let record)? = first {
                if record.lineEndLength > 0 {
                    lineEnd = record.lineEnd
                } else if let lf = record.bytes.firstIndex(of: 0x0A) {
                    lineEnd = lf > 0 && record.bytes[lf - 1] == 0x0D ? [0x0D, 0x0A] : [0x0A]
                }
            }
            if lineEnd.isEmpty { lineEnd = [0x0D, 0x0A] }
            fileLineEnd = lineEnd
            buffer.append(contentsOf: lineEnd)
        case .geojson:
            buffer.append(contentsOf: #"{"type":"FeatureCollection","features":["#.utf8)
        }
    }

    /// The header line of a header-less input's rejects file: the names its columns were given,
    /// quoted where CSV needs it, after the input's BOM if it had one. No line end of its own:
    /// it takes the first rejected row's (`writeHeader`).
    static func headerNaming(columns: [String], delimiter: UInt8, quoting: CSVQuoting, bom: Bool) -> RawCSVRecord {
        let writer = RejectsWriter(path: "", style: .geojson, enabled: false)
        for (i, name) in columns.enumerated() {
            if i > 0 { writer.buffer.append(delimiter) }
            writer.appendCSVField(name, delimiter: delimiter, quoting: quoting)
        }
        return RawCSVRecord(bytes: (bom ? [0xEF, 0xBB, 0xBF] : []) + writer.buffer, lineEndLength: 0, fieldCount: columns.count)
    }

    private func flush() throws(FormatError) {
        guard let file, !buffer.isEmpty else { return }
        var sink = FileDescriptorSink(fd: file.fd, name: path)
        var failure: FormatError?
        // The buffer holds whole rows, so whole characters: each flush converts on its own.
        let bytes = encoder.map { $0.encode(buffer) } ?? buffer
        bytes.withUnsafeBytes { raw in
            do throws(FormatError) { try sink.write(raw) } catch { failure = error }
        }
        if let failure { throw failure }
        buffer.removeAll(keepingCapacity: true)
    }

    /// The reason members, as JSON text: `"_feature":N,"_field":"…","_reason":"…"`.
    private func reasonMembers(_ reject: Reject) -> [UInt8] {
        var out: [UInt8] = []
        let values: [JSONValue] = [reject.source.feature.map { .integer(Int64($0)) } ?? .null,
                                   reject.field.map(JSONValue.string) ?? .null, .string(reject.reason)]
        for (k, (name, value)) in zip(["_feature", "_field", "_reason"], values).enumerated() {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            JSONEncoding.appendString(name, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONEncoding.append(value, to: &out)
        }
        return out
    }

    /// The feature's own bytes with the reasons spliced in: after the last member of its
    /// `properties` object (replacing earlier reason members, as when a rejects file is rejected
    /// again), in place of a `null` properties, or as a new `properties` member after its last
    /// member. Bytes that are not a JSON object with usable properties (invalid JSON, a feature
    /// that is not an object, properties of another type) go whole into `_original` of a new
    /// feature: verbatim when they are JSON, as a string when they are not.
    private func appendAnnotatedFeature(raw: RawRecord?, reject: Reject) {
        let reasons = reasonMembers(reject)
        var original: [UInt8]?
        if case .feature(let bytes)? = raw {
            if (try? JSONParser.parse(bytes)) != nil {
                if let spliced = RawJSON.splice(reasons, intoPropertiesOf: bytes) {
                    buffer.append(contentsOf: spliced)
                    return
                }
                original = bytes
            } else {
                original = []
                JSONEncoding.appendString(String(decoding: bytes, as: UTF8.self), to: &original!)
            }
        }
        buffer.append(contentsOf: #"{"type":"Feature","geometry":null,"properties":{"#.utf8)
        buffer.append(contentsOf: reasons)
        if let original {
            buffer.append(contentsOf: #","_original":"#.utf8)
            buffer.append(contentsOf: original)
        }
        buffer.append(contentsOf: "}}".utf8)
    }

    private func appendCSVField(_ field: String, delimiter: UInt8, quoting: CSVQuoting) {
        let utf8 = field.utf8
        if quoting == .none {
            // Nothing can be quoted: a delimiter or line end would split the cell, so it becomes a
            // space (these cells are PoiKit's reasons and the names given for the columns).
            buffer.append(contentsOf: utf8.map { $0 == delimiter || $0 == 10 || $0 == 13 ? 0x20 : $0 })
            return
        }
        guard utf8.contains(where: { $0 == delimiter || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }) else {
            buffer.append(contentsOf: utf8)
            return
        }
        buffer.append(UInt8(ascii: "\""))
        for c in utf8 {
            if c == UInt8(ascii: "\"") { buffer.append(c) }
            buffer.append(c)
        }
        buffer.append(UInt8(ascii: "\""))
    }
}

/// Byte positions in JSON text already known to be valid (it parsed): enough structure to add
/// members to an object without re-encoding anything around them.
enum RawJSON {
    struct Member {
        var key: String
        /// From the key's opening quote to the end of the value.
        var span: Range<Int>
        var value: Range<Int>
    }

    /// `feature` with `members` (JSON text of object members) added to its properties; nil when
    /// it is not an object or its properties are neither an object nor null.
    static func splice(_ members: [UInt8], intoPropertiesOf feature: [UInt8]) -> [UInt8]? {
        guard let top = object(feature, at: skipSpace(feature, 0)) else { return nil }
        guard let properties = top.members.first(where: { $0.key == "properties" }) else {
            // No properties: add the member after the last one.
            let at = top.members.last?.span.upperBound ?? top.open + 1
            return Array(feature[..<at]) + (top.members.isEmpty ? [] : Array(",".utf8))
                + Array(#""properties":{"#.utf8) + members + [UInt8(ascii: "}")] + feature[at...]
        }
        let v = properties.value
        if feature[v].elementsEqual("null".utf8) {
            return Array(feature[..<v.lowerBound]) + [UInt8(ascii: "{")] + members + [UInt8(ascii: "}")] + feature[v.upperBound...]
        }
        guard let props = object(feature, at: v.lowerBound) else { return nil }
        let reasonKeys: Set<String> = ["_feature", "_field", "_reason"]
        if props.members.contains(where: { reasonKeys.contains($0.key) }) {
            // Earlier reasons are replaced; the other members keep their bytes, not the space
            // between them.
            var out = Array(feature[..<v.lowerBound]) + [UInt8(ascii: "{")]
            for m in props.members where !reasonKeys.contains(m.key) {
                out += feature[m.span]
                out.append(UInt8(ascii: ","))
            }
            return out + members + [UInt8(ascii: "}")] + feature[v.upperBound...]
        }
        let at = props.members.last?.span.upperBound ?? props.open + 1
        return Array(feature[..<at]) + (props.members.isEmpty ? [] : [UInt8(ascii: ",")]) + members + feature[at...]
    }

    /// The members of the object whose `{` is at `open`; nil when there is no object there.
    static func object(_ b: [UInt8], at open: Int) -> (open: Int, members: [Member])? {
        guard open < b.count, b[open] == UInt8(ascii: "{") else { return nil }
        var members: [Member] = []
        var i = skipSpace(b, open + 1)
        while i < b.count, b[i] != UInt8(ascii: "}") {
            if b[i] == UInt8(ascii: ",") { i = skipSpace(b, i + 1) }
            let keyStart = i
            let keyEnd = valueEnd(b, keyStart)
            guard case .string(let key)? = try? JSONParser.parse(Array(b[keyStart..<keyEnd])) else { return nil }
            i = skipSpace(b, keyEnd)
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
            let valueStart = skipSpace(b, i + 1)
            let end = valueEnd(b, valueStart)
            members.append(Member(key: key, span: keyStart..<end, value: valueStart..<end))
            i = skipSpace(b, end)
        }
        return (open, members)
    }

    static func skipSpace(_ b: [UInt8], _ from: Int) -> Int {
        var i = from
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
        return i
    }

    /// The end of the value (string, object, array or scalar) starting at `start`.
    static func valueEnd(_ b: [UInt8], _ start: Int) -> Int {
        var i = start, depth = 0, inString = false, escape = false
        while i < b.count {
            let c = b[i]
            if inString {
                if escape { escape = false }
                else if c == 0x5C { escape = true }
                else if c == 0x22 { inString = false; if depth == 0 { return i + 1 } }
            } else {
                switch c {
                case 0x22: inString = true
                case 0x7B, 0x5B: depth += 1
                case 0x7D, 0x5D:
                    if depth == 0 { return i }  // the end of an enclosing scalar's container
                    depth -= 1
                    if depth == 0 { return i + 1 }
                case 0x2C, 0x20, 0x0A, 0x0D, 0x09: if depth == 0 { return i }
                default: break
                }
            }
            i += 1
        }
        return i
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import PoiFormats
import PoiModel

/// Writes rejected records in the input's own format plus the reason, so a user can fix the file
/// and import just it: CSV gets the original columns then `_line`, `_field`, `_reason`; GeoJSON
/// gets a FeatureCollection of the original features with `_feature`, `_field`, `_reason` added
/// to their properties. Written atomically when the run ends; nothing is written without rejects.
final class RejectsWriter {
    enum Style {
        case csv(header: [String], delimiter: UInt8)
        case geojson
    }

    let path: String
    private let style: Style
    /// False for a dry run without `--rejects`: rejects are counted, nothing touches the disk.
    private let enabled: Bool
    private var file: AtomicFile?
    private var buffer: [UInt8] = []
    private(set) var count = 0

    init(path: String, style: Style, enabled: Bool = true) {
        self.path = path
        self.style = style
        self.enabled = enabled
    }

    func add(_ reject: Reject, raw: RawRecord?) throws(FormatError) {
        guard enabled else { count += 1; return }
        if file == nil {
            file = try AtomicFile(path: path)
            writeHeader()
        }
        switch style {
        case .csv(let header, let delimiter):
            var fields: [String]
            if case .csv(let original)? = raw { fields = original } else { fields = [] }
            // Ragged rows are padded or cut to the header so the file re-imports cleanly.
            if fields.count < header.count { fields += Array(repeating: "", count: header.count - fields.count) }
            if fields.count > header.count { fields = Array(fields.prefix(header.count)) }
            fields += [reject.source.line.map(String.init) ?? "", reject.field ?? "", reject.reason]
            appendCSVRow(fields, delimiter: delimiter)
        case .geojson:
            if count > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer.append(contentsOf: "\n".utf8)
            JSONEncoding.append(.object(annotatedFeature(raw: raw, reject: reject)), to: &buffer)
        }
        count += 1
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Completes the file and renames it into place; with no rejects, removes a stale rejects file
    /// an earlier run left at this path, so what is there always describes the latest run.
    func finish() throws(FormatError) {
        guard enabled else { return }
        guard let file else {
            unlink(path)
            return
        }
        if case .geojson = style { buffer.append(contentsOf: "\n]}\n".utf8) }
        try flush()
        try file.commit()
        self.file = nil
    }

    func abandon() {
        file?.abandon()
        file = nil
    }

    private func writeHeader() {
        switch style {
        case .csv(let header, let delimiter):
            appendCSVRow(header + ["_line", "_field", "_reason"], delimiter: delimiter)
        case .geojson:
            buffer.append(contentsOf: #"{"type":"FeatureCollection","features":["#.utf8)
        }
    }

    private func flush() throws(FormatError) {
        guard let file, !buffer.isEmpty else { return }
        var sink = file.sink
        var failure: FormatError?
        buffer.withUnsafeBytes { raw in
            do throws(FormatError) { try sink.write(raw) } catch { failure = error }
        }
        if let failure { throw failure }
        buffer.removeAll(keepingCapacity: true)
    }

    private func annotatedFeature(raw: RawRecord?, reject: Reject) -> JSONObject {
        var feature: JSONObject
        if case .feature(.object(let original))? = raw {
            feature = original
        } else {
            feature = JSONObject([JSONMember("type", .string("Feature")), JSONMember("geometry", .null)])
            if case .feature(let other)? = raw { feature.members.append(JSONMember("_original", other)) }
        }
        var properties: JSONObject
        if let index = feature.members.firstIndex(where: { $0.key == "properties" }),
           case .object(let p) = feature.members[index].value {
            properties = p
            feature.members.remove(at: index)
        } else {
            properties = JSONObject()
            feature.members.removeAll { $0.key == "properties" }
        }
        properties.members.removeAll { ["_feature", "_field", "_reason"].contains($0.key) }
        properties.members.append(JSONMember("_feature", reject.source.feature.map { .integer(Int64($0)) } ?? .null))
        properties.members.append(JSONMember("_field", reject.field.map(JSONValue.string) ?? .null))
        properties.members.append(JSONMember("_reason", .string(reject.reason)))
        feature.members.append(JSONMember("properties", .object(properties)))
        return feature
    }

    private func appendCSVRow(_ fields: [String], delimiter: UInt8) {
        for (i, field) in fields.enumerated() {
            if i > 0 { buffer.append(delimiter) }
            let utf8 = field.utf8
            let needsQuotes = utf8.contains { $0 == delimiter || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }
            if needsQuotes {
                buffer.append(UInt8(ascii: "\""))
                for c in utf8 {
                    if c == UInt8(ascii: "\"") { buffer.append(c) }
                    buffer.append(c)
                }
                buffer.append(UInt8(ascii: "\""))
            } else {
                buffer.append(contentsOf: utf8)
            }
        }
        buffer.append(contentsOf: "\r\n".utf8)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

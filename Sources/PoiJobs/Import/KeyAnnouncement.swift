import PoiFormats
import PoiModel

/// Says once per file where the keys come from (ARCHITECTURE.md §4: a key appears once per run, so the
/// user must know what the key is): the column found by its name when none was mapped
/// explicitly, or, at the first place without any id, that keys come from name + coordinates,
/// naming the columns that look like ids.
struct KeyAnnouncement {
    let file: String
    let format: InputFormat
    let header: [String]?
    let plan: [ColumnRole]?
    let explicit: Bool
    private var derivedAnnounced = false

    init(file: String, reader: PlaceReader, mapping: FieldMapping) {
        self.file = file
        format = reader.format
        header = reader.csvHeader
        plan = reader.csvHeader.map { mapping.plan(header: $0) }
        explicit = mapping.overrides[.id] != nil || mapping.overrides[.importKey] != nil
    }

    /// CSV: the column the keys come from, when it was found by its name.
    func atStart() -> KeyNotice? {
        guard !explicit, let header, let plan else { return nil }
        for field in [PlaceField.importKey, .id] {
            if let i = plan.firstIndex(of: .field(field)) { return KeyNotice(file: file, source: .column(header[i])) }
        }
        return nil
    }

    mutating func on(_ place: Place) -> KeyNotice? {
        guard place.keySource == .derived, !derivedAnnounced else { return nil }
        derivedAnnounced = true
        if let header, let plan, let i = plan.firstIndex(of: .field(.importKey)) ?? plan.firstIndex(of: .field(.id)) {
            return KeyNotice(file: file, source: .blankID(column: header[i], line: place.source.line))
        }
        let names: [String]
        if let header, let plan {
            names = zip(header, plan).compactMap { name, role in
                if case .extra = role { return name } else { return nil }
            }
        } else {
            names = place.extra.members.map(\.key)
        }
        return KeyNotice(file: file, source: .derived(idLikeColumns: names.filter(ImportKey.looksLikeID)))
    }
}

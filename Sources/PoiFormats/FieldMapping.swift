import PoiModel

/// Maps input column/property names to place fields: explicit `--field FIELD=COLUMN` overrides
/// first, then the common names of `PlaceField.aliases`, compared case- and space-insensitively.
/// Anything unmapped goes to `Place.extra`.
public struct FieldMapping: Sendable, Equatable {
    /// field → column name, from `--field`.
    public private(set) var overrides: [PlaceField: String] = [:]

    public init() {}

    public init(overrides: [PlaceField: String]) { self.overrides = overrides }

    /// Why a `--field` argument is refused (user-facing).
    public struct ArgumentError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Parses repeated `FIELD=COLUMN` arguments (`--field name=Title --field id=source_id`).
    public init(arguments: [String]) throws(ArgumentError) {
        for arg in arguments {
            guard let eq = arg.firstIndex(of: "=") else {
                throw ArgumentError(description: "--field \(arg): expected FIELD=COLUMN, e.g. name=Title")
            }
            let f = String(arg[..<eq]), column = String(arg[arg.index(after: eq)...])
            guard let field = PlaceField(argument: f) else {
                let known = PlaceField.allCases.map(\.rawValue).joined(separator: ", ")
                throw ArgumentError(description: "--field \(arg): unknown field '\(f)' (fields: \(known))")
            }
            guard !trimWhitespace(column).isEmpty else {
                throw ArgumentError(description: "--field \(arg): empty column name")
            }
            if let old = overrides[field], old != column {
                throw ArgumentError(description: "--field \(arg): \(field.rawValue) is already mapped to '\(old)'")
            }
            overrides[field] = column
        }
    }

    /// The field a column/property name maps to before first-come-first-served conflicts are
    /// resolved, or nil for `extra`. An overridden field is no longer matched by its aliases.
    public func field(forColumn column: String) -> PlaceField? {
        let n = PlaceField.normalizeColumnName(column)
        for (field, col) in overrides where col == column || PlaceField.normalizeColumnName(col) == n {
            return field
        }
        for field in PlaceField.allCases where overrides[field] == nil && field.aliases.contains(n) {
            return field
        }
        return nil
    }

    /// What each column of a header becomes: the first column claiming a field gets it, later
    /// ones go to `extra`. Extra keys are made unique ("a", "a#2") and blank names become
    /// "column N" so no value is lost.
    public func plan(header: [String]) -> [ColumnRole] {
        var taken = Set<PlaceField>()
        var keys = Set<String>()
        var roles: [ColumnRole] = []
        for (i, raw) in header.enumerated() {
            let name = trimWhitespace(raw)
            if let f = field(forColumn: name), !taken.contains(f) {
                taken.insert(f)
                roles.append(.field(f))
                continue
            }
            var key = name.isEmpty ? "column \(i + 1)" : name
            if keys.contains(key) {
                var k = 2
                while keys.contains("\(key)#\(k)") { k += 1 }
                key = "\(key)#\(k)"
            }
            keys.insert(key)
            roles.append(.extra(key))
        }
        return roles
    }
}

/// What a column becomes.
public enum ColumnRole: Sendable, Equatable {
    case field(PlaceField)
    case extra(String)
}

/// The raw form of a rejected record, so PoiJobs can write a rejects file in the input's format.
public enum RawRecord: Sendable, Hashable {
    /// CSV fields as text (invalid UTF-8 replaced by U+FFFD).
    case csv([String])
    /// The feature as parsed, when it parsed at all.
    case feature(JSONValue)
}

/// One result of a reader: a valid place or a reject. Readers keep going after rejects.
public enum ReadItem: Sendable {
    case place(Place)
    case reject(Reject, raw: RawRecord?)

    public var place: Place? { if case .place(let p) = self { return p } else { return nil } }
    public var reject: Reject? { if case .reject(let r, _) = self { return r } else { return nil } }
}

/// Options shared by every reader (and by `poi check`, `convert`, `import`).
public struct ReadOptions: Sendable, Equatable {
    public var mapping: FieldMapping
    /// CSV delimiter; nil detects it from the header among `,` `;` tab `|`.
    public var delimiter: UInt8?
    public var limits: ReadLimits

    public init(mapping: FieldMapping = FieldMapping(), delimiter: UInt8? = nil, limits: ReadLimits = ReadLimits()) {
        self.mapping = mapping
        self.delimiter = delimiter
        self.limits = limits
    }
}

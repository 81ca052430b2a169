import ArgumentParser
import PoiFormats
import PoiImaging
import PoiJobs
import PoiModel
import PoiStore

// Option values parsed once, by swift-argument-parser: `--help` lists the accepted values and a
// bad one is a usage error (exit 2) naming the option, before any work starts.

extension ThumbnailSpec.Fit: ExpressibleByArgument {}
extension ThumbnailSpec.Format: ExpressibleByArgument {}
extension DuplicatePolicy: ExpressibleByArgument {}

extension Shard: ExpressibleByArgument {
    /// `I/N` with 0 ≤ I < N.
    public init?(argument: String) { self.init(parsing: argument) }
}

/// `--size WIDTHxHEIGHT`.
struct ThumbnailSize: ExpressibleByArgument, Sendable, Equatable {
    var width: Int
    var height: Int

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    init?(argument: String) {
        guard let size = try? ThumbnailSpec.parseSize(argument) else { return nil }
        self.init(width: size.0, height: size.1)
    }

    var defaultValueDescription: String { "\(width)x\(height)" }
}

/// `--bbox W,S,E,N`: four plain decimal numbers (no hex, no `nan`, no exponent tricks), a valid box.
extension BoundingBox: ExpressibleByArgument {
    public init?(argument: String) {
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var values: [Double] = []
        for part in parts {
            guard let v = PlainDecimal.parse(part) else { return nil }
            values.append(v)
        }
        guard let box = try? BoundingBox(west: values[0], south: values[1], east: values[2], north: values[3]) else {
            return nil
        }
        self = box
    }
}

/// `--since`: a day (`2026-11-23`, midnight UTC) or a date-time with a zone
/// (`2026-11-23T06:00:00Z`, `2026-11-23T08:00:00.250+02:00`). Nothing else: a time without a
/// zone, a space instead of `T`, `T25:00`, `2026-02-30` or trailing text are refused, never read
/// as their prefix.
struct SinceDate: ExpressibleByArgument, Sendable, Equatable {
    var date: BSONDate

    init?(argument: String) {
        guard let ms = ISO8601.milliseconds(parsing: argument) else { return nil }
        date = BSONDate(millisecondsSinceEpoch: ms)
    }
}

/// `--field FIELD=COLUMN`.
struct FieldAssignment: ExpressibleByArgument, Sendable, Equatable {
    var field: PlaceField
    var column: String

    init?(argument: String) {
        guard let eq = argument.firstIndex(of: "=") else { return nil }
        let column = String(argument[argument.index(after: eq)...])
        guard let field = PlaceField(argument: String(argument[..<eq])),
              !column.allSatisfy({ $0.isWhitespace }) else { return nil }
        self.field = field
        self.column = column
    }
}

/// Strict decimal text: `[+-]digits[.digits]` or `[+-].digits`, the way people write degrees.
enum PlainDecimal {
    static func parse<S: StringProtocol>(_ text: S) -> Double? {
        let t = text.trimmingCharacters(in: .whitespaces)
        var digits = 0, dots = 0
        for (i, c) in t.enumerated() {
            if c.isASCII && c.isNumber { digits += 1 } else if c == "." { dots += 1 } else if (c == "-" || c == "+") && i == 0 {
                continue
            } else {
                return nil
            }
        }
        guard digits > 0, dots <= 1 else { return nil }
        return Double(t)
    }
}

import Foundation

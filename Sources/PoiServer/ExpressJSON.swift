import Foundation
import PoiFormats
import PoiStore

/// BSON documents as the reference server's JSON: what Express's `res.send` makes of what the
/// Node driver read (ObjectIds as 24 hex digits, dates as ISO 8601 with milliseconds and `Z`,
/// numbers as JavaScript prints them, fields in stored order), so clients see no difference.
enum ExpressJSON {
    /// A parsed body as `JSON.parse` gives it to the reference: a key given twice keeps its first
    /// place and its last value, at every depth (libbson keeps both, and MongoDB would store both).
    static func lastValueWins(_ document: BSONDocument) -> BSONDocument {
        deduplicated(document) ?? document
    }

    /// nil when no key repeats (the usual body is not copied).
    private static func deduplicated(_ document: BSONDocument) -> BSONDocument? {
        var order: [String] = []
        var values: [String: BSONValue] = [:]
        var changed = false
        for (key, value) in document {
            var kept = value
            if let inner = deduplicated(value) {
                kept = inner
                changed = true
            }
            if values.updateValue(kept, forKey: key) == nil { order.append(key) } else { changed = true }
        }
        guard changed else { return nil }
        return BSONDocument(order.map { ($0, values[$0]!) })
    }

    private static func deduplicated(_ value: BSONValue) -> BSONValue? {
        switch value {
        case .document(let d): return deduplicated(d).map { .document($0) }
        case .array(let items):
            var changed = false
            let out = items.map { item -> BSONValue in
                guard let inner = deduplicated(item) else { return item }
                changed = true
                return inner
            }
            return changed ? .array(out) : nil
        default: return nil
        }
    }

    static func append(_ document: BSONDocument, to out: inout [UInt8]) {
        out.append(0x7B)
        var first = true
        for (key, value) in document {
            if !first { out.append(0x2C) }
            first = false
            appendString(key, to: &out)
            out.append(0x3A)
            append(value, to: &out)
        }
        out.append(0x7D)
    }

    static func append(_ value: BSONValue, to out: inout [UInt8]) {
        switch value {
        case .double(let d): out.append(contentsOf: javaScriptNumber(d).utf8)
        case .string(let s): appendString(s, to: &out)
        case .document(let d): append(d, to: &out)
        case .array(let items):
            out.append(0x5B)
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(0x2C) }
                append(item, to: &out)
            }
            out.append(0x5D)
        // The Node driver's Binary serialises as base64 of its bytes.
        case .binary(_, let data): appendString(Data(data).base64EncodedString(), to: &out)
        case .objectId(let id): appendString(id.hex, to: &out)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .date(let d):
            if let iso = isoString(d) { appendString(iso, to: &out) } else { out.append(contentsOf: "null".utf8) }
        case .null: out.append(contentsOf: "null".utf8)
        case .int32(let i): out.append(contentsOf: String(i).utf8)
        // The driver promotes longs to numbers; beyond 2^53 JavaScript would round, digits do not.
        case .int64(let i): out.append(contentsOf: String(i).utf8)
        // The Node driver's Decimal128.toJSON: `{"$numberDecimal": "<digits>"}`.
        case .decimal128(let d):
            out.append(contentsOf: #"{"$numberDecimal":"#.utf8)
            appendString(d.description, to: &out)
            out.append(0x7D)
        // Regex, timestamps, code…: types the app never stores; JSON has no form for them.
        case .unsupported: out.append(contentsOf: "null".utf8)
        }
    }

    static func appendString(_ s: String, to out: inout [UInt8]) {
        JSONEncoding.appendString(s, to: &out)
    }

    /// `Date.prototype.toISOString` (ms precision, UTC), or nil where JavaScript's date range ends
    /// (`toJSON` gives null there).
    static func isoString(_ date: BSONDate) -> String? {
        let ms = date.millisecondsSinceEpoch
        // `abs(Int64.min)` would trap: magnitude does not.
        guard ms.magnitude <= 8_640_000_000_000_000 else { return nil }
        var days = ms / 86_400_000
        var rem = ms % 86_400_000
        if rem < 0 { rem += 86_400_000; days -= 1 }
        let (y, m, d) = ISO8601.civil(fromDays: days)
        func pad(_ v: Int64, _ w: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, w - s.count)) + s
        }
        let year: String
        if y >= 0 && y <= 9999 { year = pad(y, 4) } else { year = (y < 0 ? "-" : "+") + pad(abs(y), 6) }
        let h = rem / 3_600_000, mi = rem / 60_000 % 60, s = rem / 1000 % 60, milli = rem % 1000
        return "\(year)-\(pad(m, 2))-\(pad(d, 2))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)).\(pad(milli, 3))Z"
    }

    /// ECMAScript `Number::toString` from the shortest round-trip digits (Swift's `description`
    /// finds the same digits; only the layout differs: `1e-7` not `1e-07`, `100` not `100.0`).
    static func javaScriptNumber(_ d: Double) -> String {
        if d.isNaN || d.isInfinite { return "null" }  // JSON.stringify's answer
        if d == 0 { return "0" }
        let text = d.magnitude.description
        let parts = text.split(separator: "e", maxSplits: 1)
        var exponent = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        let mantissa = parts[0].split(separator: ".", maxSplits: 1)
        let intPart = String(mantissa[0])
        let fracPart = mantissa.count > 1 ? String(mantissa[1]) : ""
        var digits = Array(intPart + fracPart)
        exponent += intPart.count  // value = 0.digits × 10^exponent
        while let f = digits.first, f == "0", digits.count > 1 { digits.removeFirst(); exponent -= 1 }
        while let l = digits.last, l == "0", digits.count > 1 { digits.removeLast() }
        let k = digits.count, n = exponent
        let ds = String(digits)
        var out = d < 0 ? "-" : ""
        if k <= n && n <= 21 {
            out += ds + String(repeating: "0", count: n - k)
        } else if 0 < n && n <= 21 {
            out += String(digits[0..<n]) + "." + String(digits[n...])
        } else if -6 < n && n <= 0 {
            out += "0." + String(repeating: "0", count: -n) + ds
        } else {
            let e = n - 1
            out += String(digits[0]) + (k > 1 ? "." + String(digits[1...]) : "") + "e" + (e < 0 ? "-" : "+") + String(abs(e))
        }
        return out
    }

    /// An HTML table of documents (what a browser gets from `GET /:collection`).
    static func htmlTable(_ documents: [BSONDocument], collection: String) -> [UInt8] {
        var columns: [String] = []
        var seen = Set<String>()
        for doc in documents { for key in doc.keys where seen.insert(key).inserted { columns.append(key) } }
        var html = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>\(escape(collection))</title></head><body>"
        html += "<h1>\(escape(collection))</h1>"
        // The same places drawn where they are (MapRoutes).
        if collection == StoreLayout.locations { html += "<p><a href=\"/map\">The places on a map</a></p>" }
        html += "<table border=\"1\"><tr>"
        for c in columns { html += "<th>\(escape(c))</th>" }
        html += "</tr>"
        for doc in documents {
            html += "<tr>"
            for c in columns {
                var cell = ""
                if let v = doc[c] {
                    if case .string(let s) = v { cell = s } else {
                        var bytes: [UInt8] = []
                        append(v, to: &bytes)
                        cell = String(decoding: bytes, as: UTF8.self)
                    }
                }
                html += "<td>\(escape(cell))</td>"
            }
            html += "</tr>"
        }
        html += "</table></body></html>"
        return Array(html.utf8)
    }

    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}

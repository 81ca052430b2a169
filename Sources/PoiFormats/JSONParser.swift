import PoiModel

/// Why a JSON text was refused; `offset` is relative to the parsed bytes.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var message: String
    public var description: String { "\(message) (at byte \(offset))" }
}

/// A strict RFC 8259 parser over bytes already in memory (one feature at a time; the streaming
/// framing lives in `GeoJSONReader`). Hostile input is refused with a message, never a crash:
/// nesting is capped (no unbounded recursion), invalid UTF-8, lone surrogates, raw control
/// characters, NUL in keys, duplicate keys and numbers that overflow a Double (`1e400`) are
/// errors.
public struct JSONParser: ~Copyable {
    private let p: UnsafeBufferPointer<UInt8>
    private var i = 0
    private let maxDepth: Int
    private var scratch: [UInt8] = []
    private var lastStringHadEscapes = false

    /// Parses exactly one JSON value (surrounding whitespace allowed).
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(p: bytes, maxDepth: maxDepth)
        parser.skipWS()
        let v = try parser.value(depth: 0)
        parser.skipWS()
        if parser.i != bytes.count { throw parser.fail("unexpected data after the JSON value") }
        return v
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (b) throws(JSONParseError) -> JSONValue in try parse(b, maxDepth: maxDepth) }
    }

    private init(p: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.p = p
        self.maxDepth = maxDepth
    }

    private func fail(_ message: String) -> JSONParseError { JSONParseError(offset: i, message: message) }

    @inline(__always)
    private mutating func skipWS() {
        while i < p.count {
            let b = p[i]
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { i += 1 } else { return }
        }
    }

    private mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard i < p.count else { throw fail("unexpected end of JSON") }
        switch p[i] {
        case 0x7B: // {
            guard depth < maxDepth else { throw fail("nesting deeper than \(maxDepth) levels") }
            i += 1
            var obj = JSONObject()
            var seen: Set<String>? = nil
            skipWS()
            if i < p.count && p[i] == 0x7D { i += 1; return .object(obj) }
            while true {
                skipWS()
                guard i < p.count, p[i] == 0x22 else { throw fail("expected a string key") }
                let keyStart = i
                let key = try string()
                // Raw NULs are refused as control characters; only a \u0000 escape can make one.
                if lastStringHadEscapes && key.utf8.contains(0) { i = keyStart; throw fail("object key contains NUL") }
                // Linear check for small objects, a set once they grow (hostile key floods).
                if obj.count < 16 {
                    if obj.contains(key) { i = keyStart; throw fail("duplicate key \"\(key.prefix(60))\"") }
                } else {
                    if seen == nil { seen = Set(obj.members.map(\.key)) }
                    if seen!.contains(key) { i = keyStart; throw fail("duplicate key \"\(key.prefix(60))\"") }
                    seen!.insert(key)
                }
                skipWS()
                guard i < p.count, p[i] == 0x3A else { throw fail("expected ':'") }
                i += 1
                skipWS()
                let v = try value(depth: depth + 1)
                obj.append(key, v)
                skipWS()
                guard i < p.count else { throw fail("unexpected end of JSON in object") }
                if p[i] == 0x2C { i += 1; continue }
                if p[i] == 0x7D { i += 1; return .object(obj) }
                throw fail("expected ',' or '}'")
            }
        case 0x5B: // [
            guard depth < maxDepth else { throw fail("nesting deeper than \(maxDepth) levels") }
            i += 1
            var arr: [JSONValue] = []
            skipWS()
            if i < p.count && p[i] == 0x5D { i += 1; return .array(arr) }
            while true {
                skipWS()
                arr.append(try value(depth: depth + 1))
                skipWS()
                guard i < p.count else { throw fail("unexpected end of JSON in array") }
                if p[i] == 0x2C { i += 1; continue }
                if p[i] == 0x5D { i += 1; return .array(arr) }
                throw fail("expected ',' or ']'")
            }
        case 0x22:
            return .string(try string())
        case 0x74: try literal("true"); return .bool(true)
        case 0x66: try literal("false"); return .bool(false)
        case 0x6E: try literal("null"); return .null
        case 0x2D, 0x30...0x39:
            return try number()
        default:
            throw fail("unexpected character '\(Unicode.Scalar(p[i]).escaped(asASCII: true))'")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= p.count else { throw fail("invalid literal") }
        let w = UnsafeBufferPointer(start: word.utf8Start, count: n)
        for k in 0..<n where p[i + k] != w[k] { throw fail("invalid literal") }
        i += n
    }

    private mutating func number() throws(JSONParseError) -> JSONValue {
        let start = i
        var negative = false
        if p[i] == 0x2D { negative = true; i += 1 }
        let intStart = i
        guard i < p.count, p[i] >= 0x30 && p[i] <= 0x39 else { throw fail("invalid number") }
        if p[i] == 0x30 {
            i += 1
        } else {
            while i < p.count && p[i] >= 0x30 && p[i] <= 0x39 { i += 1 }
        }
        let intDigits = i - intStart
        var isInteger = true
        var fracDigits = 0
        if i < p.count && p[i] == 0x2E {
            isInteger = false
            i += 1
            let f = i
            while i < p.count && p[i] >= 0x30 && p[i] <= 0x39 { i += 1 }
            fracDigits = i - f
            if fracDigits == 0 { throw fail("invalid number: digits expected after '.'") }
        }
        var hasExp = false
        if i < p.count && (p[i] == 0x65 || p[i] == 0x45) {
            isInteger = false
            hasExp = true
            i += 1
            if i < p.count && (p[i] == 0x2B || p[i] == 0x2D) { i += 1 }
            let e = i
            while i < p.count && p[i] >= 0x30 && p[i] <= 0x39 { i += 1 }
            if i == e { throw fail("invalid number: digits expected in exponent") }
        }
        if isInteger && intDigits <= 18 {
            var v: Int64 = 0
            for k in intStart..<i { v = v * 10 + Int64(p[k] &- 0x30) }
            return .integer(negative ? -v : v)
        }
        if isInteger && intDigits == 19 {
            // 19 digits may still fit: Int64 covers -9223372036854775808...9223372036854775807.
            var v: UInt64 = 0
            for k in intStart..<i { v = v &* 10 &+ UInt64(p[k] &- 0x30) }
            if v <= UInt64(Int64.max) { return .integer(negative ? -Int64(v) : Int64(v)) }
            if negative && v == UInt64(Int64.max) + 1 { return .integer(Int64.min) }
        }
        if isInteger && intDigits <= JSONValue.maxBigIntegerDigits {
            // Beyond Int64 a double would change the number; Decimal128 keeps up to 34 digits.
            return .bigInteger(String(decoding: UnsafeBufferPointer(rebasing: p[start..<i]), as: UTF8.self))
        }
        // Fast exact path (Clinger): ≤ 15 significant digits and a power of ten ≤ 22 divide exactly.
        if !hasExp && intDigits + fracDigits <= 15 {
            var m: Int64 = 0
            for k in intStart..<i where p[k] != 0x2E { m = m * 10 + Int64(p[k] &- 0x30) }
            let d = Double(m) / JSONParser.pow10[fracDigits]
            return .double(negative ? -d : d)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: p[start..<i]), as: UTF8.self)
        guard let d = Double(text), d.isFinite else {
            i = start
            throw fail("number \(text.prefix(40)) is out of range")
        }
        // Underflow (`1e-400` reads as 0) is refused like overflow: never a silently different number.
        if d == 0, p[start..<i].prefix(while: { $0 != 0x65 && $0 != 0x45 }).contains(where: { $0 >= 0x31 && $0 <= 0x39 }) {
            i = start
            throw fail("number \(text.prefix(40)) is out of range (too small, it would read as 0)")
        }
        return .double(d)
    }

    private static let pow10: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { r, _ in r * 10 } }

    /// Parses a string at `p[i] == '"'`.
    private mutating func string() throws(JSONParseError) -> String {
        i += 1
        let start = i
        var ascii = true
        lastStringHadEscapes = false
        // Fast path: no escapes.
        while i < p.count {
            let b = p[i]
            if b == 0x22 {
                let slice = UnsafeBufferPointer(rebasing: p[start..<i])
                i += 1
                if ascii { return String(decoding: slice, as: UTF8.self) }
                guard let s = String(validating: slice, as: UTF8.self) else {
                    i = start
                    throw fail("string is not valid UTF-8")
                }
                return s
            }
            if b == 0x5C { break }
            if b < 0x20 { throw fail("raw control character in string (must be escaped)") }
            if b >= 0x80 { ascii = false }
            i += 1
        }
        // Slow path: unescape into scratch.
        lastStringHadEscapes = true
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: p[start..<i]))
        while i < p.count {
            let b = p[i]
            if b == 0x22 {
                i += 1
                guard let s = String(validating: scratch, as: UTF8.self) else {
                    throw fail("string is not valid UTF-8")
                }
                return s
            }
            if b < 0x20 { throw fail("raw control character in string (must be escaped)") }
            if b != 0x5C { scratch.append(b); i += 1; continue }
            i += 1
            guard i < p.count else { break }
            let e = p[i]
            i += 1
            switch e {
            case 0x22: scratch.append(0x22)
            case 0x5C: scratch.append(0x5C)
            case 0x2F: scratch.append(0x2F)
            case 0x62: scratch.append(0x08)
            case 0x66: scratch.append(0x0C)
            case 0x6E: scratch.append(0x0A)
            case 0x72: scratch.append(0x0D)
            case 0x74: scratch.append(0x09)
            case 0x75:
                var code = try hex4()
                if code >= 0xD800 && code < 0xDC00 {
                    guard i + 1 < p.count, p[i] == 0x5C, p[i + 1] == 0x75 else {
                        throw fail("lone surrogate \\u escape")
                    }
                    i += 2
                    let low = try hex4()
                    guard low >= 0xDC00 && low < 0xE000 else { throw fail("lone surrogate \\u escape") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if code >= 0xDC00 && code < 0xE000 {
                    throw fail("lone surrogate \\u escape")
                }
                for u in UTF8.encode(Unicode.Scalar(code)!)! { scratch.append(u) }
            default:
                throw fail("invalid escape in string")
            }
        }
        throw fail("unterminated string")
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= p.count else { throw fail("invalid \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = p[i]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw fail("invalid \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }
}

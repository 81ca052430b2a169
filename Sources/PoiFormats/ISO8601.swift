/// UTC timestamps for GeoJSON properties (`created_at`, `updated_at`), formatted without
/// Foundation so exports are deterministic and cheap: `2026-11-22T07:03:04.123Z`.
public enum ISO8601 {
    /// Formats milliseconds since 1970-01-01T00:00:00Z (a BSON date) with millisecond precision.
    /// Covers years 0000–9999; outside that range the instant is clamped to its first or last
    /// millisecond (BSON allows ±292 My, and `ms - 86_399_999` would overflow near Int64.min).
    public static func string(millisecondsSince1970 ms: Int64) -> String {
        let ms = min(max(ms, -62_167_219_200_000), 253_402_300_799_999)
        let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        var rem = ms - days * 86_400_000
        let millis = rem % 1000
        rem /= 1000
        let (h, m, s) = (rem / 3600, (rem / 60) % 60, rem % 60)
        let (year, mo, d) = civil(fromDays: days)
        let y = min(max(year, 0), 9999)
        var out: [UInt8] = []
        out.reserveCapacity(24)
        func pad(_ v: Int64, _ width: Int) {
            var digits: [UInt8] = []
            var x = v
            for _ in 0..<width { digits.append(UInt8(0x30 + x % 10)); x /= 10 }
            out.append(contentsOf: digits.reversed())
        }
        pad(y, 4); out.append(0x2D); pad(mo, 2); out.append(0x2D); pad(d, 2)
        out.append(0x54); pad(h, 2); out.append(0x3A); pad(m, 2); out.append(0x3A); pad(s, 2)
        out.append(0x2E); pad(millis, 3); out.append(0x5A)
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses exactly `YYYY-MM-DD` (midnight UTC) or `YYYY-MM-DDTHH:MM[:SS[.fraction]]` followed
    /// by `Z` or `±HH:MM`, into milliseconds since 1970 (a BSON date). Anything else is nil: no
    /// time without a zone, no space for `T`, no out-of-range field (`T25:00`, `2026-02-30`), no
    /// trailing text, years 0001–9999 only. The one parser behind every date a user types.
    public static func milliseconds(parsing text: String) -> Int64? {
        let b = Array(text.utf8)
        var i = 0
        func number(_ width: Int) -> Int64? {
            guard i + width <= b.count else { return nil }
            var v: Int64 = 0
            for k in i..<(i + width) {
                guard b[k] >= 0x30 && b[k] <= 0x39 else { return nil }
                v = v * 10 + Int64(b[k] - 0x30)
            }
            i += width
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let y = number(4), expect(0x2D), let mo = number(2), expect(0x2D), let d = number(2),
              (1...9999).contains(y), (1...12).contains(mo), d >= 1, d <= daysIn(month: mo, year: y) else { return nil }
        let day = daysFromCivil(year: y, month: mo, day: d)
        if i == b.count { return day * 86_400_000 }
        guard expect(0x54), let h = number(2), expect(0x3A), let mi = number(2), h <= 23, mi <= 59 else { return nil }
        var sec: Int64 = 0, millis: Int64 = 0
        if expect(0x3A) {
            guard let s = number(2), s <= 59 else { return nil }
            sec = s
            if expect(0x2E) {
                var scale: Int64 = 100
                let start = i
                while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                    millis += Int64(b[i] - 0x30) * scale
                    scale /= 10
                    i += 1
                }
                guard i > start, i - start <= 9 else { return nil }
            }
        }
        var offset: Int64 = 0
        if expect(0x5A) {
            offset = 0
        } else if i < b.count, b[i] == 0x2B || b[i] == 0x2D {
            let sign: Int64 = b[i] == 0x2D ? -1 : 1
            i += 1
            guard let oh = number(2), expect(0x3A), let om = number(2), oh <= 23, om <= 59 else { return nil }
            offset = sign * (oh * 60 + om)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        return ((day * 24 + h) * 60 + mi - offset) * 60_000 + sec * 1000 + millis
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Year, month, day of a day counted from 1970-01-01 (Howard Hinnant's civil_from_days): no
    /// libc `time_t` limits, any year BSON can hold.
    public static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil, the inverse of the formatter's).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

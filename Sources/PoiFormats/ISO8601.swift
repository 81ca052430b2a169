/// UTC timestamps for GeoJSON properties (`created_at`, `updated_at`), formatted without
/// Foundation so exports are deterministic and cheap: `2026-11-22T07:03:04.123Z`.
public enum ISO8601 {
    /// Formats milliseconds since 1970-01-01T00:00:00Z (a BSON date) with millisecond precision.
    /// Covers years 0000–9999; outside that range the year is clamped (BSON allows ±292 My).
    public static func string(millisecondsSince1970 ms: Int64) -> String {
        var days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        var rem = ms - days * 86_400_000
        let millis = rem % 1000
        rem /= 1000
        let (h, m, s) = (rem / 3600, (rem / 60) % 60, rem % 60)
        // Howard Hinnant's civil_from_days.
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        var y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let mo = mp < 10 ? mp + 3 : mp - 9
        if mo <= 2 { y += 1 }
        y = min(max(y, 0), 9999)
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
}

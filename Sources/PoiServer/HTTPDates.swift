import Foundation

/// IMF-fixdate (RFC 9110 §5.6.7), for Last-Modified and If-Modified-Since.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(secondsSince1970 s: Int64) -> String {
        var t = time_t(s)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(parts.tm_wday)]), \(pad(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)) GMT"
    }

    /// Seconds since 1970 of an IMF-fixdate; nil for anything else (then the header is ignored).
    static func parse(_ text: String) -> Int64? {
        let f = text.split(separator: " ")
        guard f.count == 6, f[5] == "GMT", let day = Int32(f[1]), let monthIndex = months.firstIndex(of: String(f[2])),
              let year = Int32(f[3]), (1900...9999).contains(year) else { return nil }  // year - 1900 must not overflow
        let hms = f[4].split(separator: ":").compactMap { Int32($0) }
        guard hms.count == 3 else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(monthIndex)
        parts.tm_mday = day
        parts.tm_hour = hms[0]
        parts.tm_min = hms[1]
        parts.tm_sec = hms[2]
        return Int64(timegm(&parts))
    }
}

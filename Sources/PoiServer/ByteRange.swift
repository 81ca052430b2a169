/// A `Range` header against a representation of `length` bytes (RFC 9110 §14), done here rather
/// than with Hummingbird's FileMiddleware, which answers `bytes=-5` with the first bytes and an
/// out-of-range start with 206.
enum RangeRequest: Equatable {
    /// No usable Range: send everything with 200 (no header, another unit, bad syntax, or several
    /// ranges, which a server may answer in full).
    case full
    /// One satisfiable range: 206 with these bytes (inclusive).
    case partial(ClosedRange<Int>)
    /// 416 with `Content-Range: bytes */length`.
    case unsatisfiable

    init(header: String?, length: Int) {
        guard let header else { self = .full; return }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes=") else { self = .full; return }
        let specs = trimmed.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard specs.count == 1, let spec = specs.first, !spec.isEmpty else { self = .full; return }
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { self = .full; return }
        func number(_ s: Substring) -> Int? {
            guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(s)
        }
        if parts[0].isEmpty {
            // Suffix range: the last N bytes (all of them when N exceeds the length).
            guard let n = number(parts[1]) else { self = .full; return }
            guard n > 0, length > 0 else { self = .unsatisfiable; return }
            self = .partial(max(0, length - n)...(length - 1))
            return
        }
        guard let first = number(parts[0]) else { self = .full; return }
        let last: Int
        if parts[1].isEmpty {
            last = length - 1
        } else {
            guard let l = number(parts[1]), l >= first else { self = .full; return }  // invalid: ignored
            last = min(l, length - 1)
        }
        guard first < length else { self = .unsatisfiable; return }
        self = .partial(first...last)
    }
}

import Foundation

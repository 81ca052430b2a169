import PoiModel

/// The bytes under `GeoJSONReader`: a buffer over the source, read in chunks and compacted as it
/// is consumed, and a small resumable scanner that finds where a JSON value ends (brackets and
/// strings only) without parsing it. The reader walks the top-level structure with it and hands
/// each framed value to `JSONParser`. With raw records asked for, it also gathers the bytes of the
/// top-level object being read, across compactions. Kept apart from the reader's state machine
/// so the byte loops sit together, on locals and buffer pointers.
final class GeoJSONFramer {
    private let source: ByteSource
    /// `ReadLimits.maxFeatureBytes`: a value, or a captured top-level object, over it is skipped
    /// (its size counted) instead of held.
    private let maxValueBytes: Int
    private(set) var buf: [UInt8] = []
    /// The next byte to look at in `buf`.
    var pos = 0
    private(set) var eof = false
    /// Bytes dropped from the front of `buf` so far (for byte offsets in messages).
    private var dropped = 0
    /// With `keepRawRecords`, the bytes of the top-level object being read (a single Feature, or
    /// one of a sequence): `topRaw` holds what compaction has already moved out of `buf`, and
    /// `topRawFrom` is where the rest starts in `buf`. Nil when not capturing: not asked, a
    /// FeatureCollection (its features are framed one by one), or over `maxFeatureBytes`.
    private var topRaw: [UInt8] = []
    private var topRawFrom: Int?

    init(source: ByteSource, maxValueBytes: Int) {
        self.source = source
        self.maxValueBytes = maxValueBytes
    }

    /// Where `pos` is in the whole input, in bytes.
    var offset: Int { dropped + pos }

    /// Makes at least `n` bytes available after `pos`, unless the file ends first.
    func ensure(_ n: Int) throws(FormatError) {
        while buf.count - pos < n && !eof {
            if pos > 0 && pos >= buf.count / 2 {
                if let from = topRawFrom {
                    if topRaw.count + (pos - from) > maxValueBytes {
                        topRawFrom = nil
                        topRaw = []
                    } else {
                        topRaw.append(contentsOf: buf[from..<pos])
                        topRawFrom = 0
                    }
                }
                buf.removeSubrange(0..<pos)
                dropped += pos
                pos = 0
            }
            if try source.read(appendingTo: &buf) == 0 { eof = true }
        }
    }

    /// Skips whitespace; RS (0x1E) too when `rsIsSpace` (between top-level texts only).
    private func skipWhitespace(rsIsSpace: Bool) throws(FormatError) {
        while true {
            while pos < buf.count {
                let b = buf[pos]
                if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 || (b == 0x1E && rsIsSpace) { pos += 1 } else { return }
            }
            if eof { return }
            try ensure(1)
        }
    }

    /// The next byte after whitespace (RS counted as whitespace when `rsIsSpace`); nil at the end.
    func peek(rsIsSpace: Bool) throws(FormatError) -> UInt8? {
        try skipWhitespace(rsIsSpace: rsIsSpace)
        return pos < buf.count ? buf[pos] : nil
    }

    enum Scanned {
        case value(Range<Int>)
        case tooLarge(Int)
        case broken(String)
    }

    /// Finds the extent of the JSON value starting at `pos` (after whitespace), reading more as
    /// needed. Over the size limit it keeps scanning but discards bytes, so memory stays bounded.
    /// A value is never scanned between top-level texts, so RS is not whitespace here.
    func scanValue() throws(FormatError) -> Scanned {
        try skipWhitespace(rsIsSpace: false)
        guard pos < buf.count else { return .broken("unexpected end of file") }
        let limit = maxValueBytes
        var depth = 0
        var inString = false
        var escape = false
        var skipped = 0
        let first = buf[pos]
        let scalar = first != 0x7B && first != 0x5B && first != 0x22
        var i = pos
        while true {
            var end = -1
            buf.withUnsafeBufferPointer { p in
                while i < p.count {
                    let b = p[i]
                    if inString {
                        if escape { escape = false }
                        else if b == 0x5C { escape = true }
                        else if b == 0x22 {
                            inString = false
                            if depth == 0 { end = i + 1; return }
                        }
                    } else if scalar {
                        if b == 0x2C || b == 0x5D || b == 0x7D || b == 0x20 || b == 0x0A || b == 0x0D
                            || b == 0x09 || b == 0x1E { end = i; return }
                    } else {
                        switch b {
                        case 0x22: inString = true
                        case 0x7B, 0x5B: depth += 1
                        case 0x7D, 0x5D:
                            depth -= 1
                            if depth == 0 { end = i + 1; return }
                            if depth < 0 { end = i; return }
                        default: break
                        }
                    }
                    i += 1
                }
            }
            if end >= 0 {
                if skipped > 0 || end - pos > limit {
                    let total = skipped + (end - pos)
                    pos = end
                    return .tooLarge(total)
                }
                let r = pos..<end
                pos = end
                return .value(r)
            }
            if eof {
                if scalar && i > pos { let r = pos..<i; pos = i; return .value(r) }
                pos = i
                return .broken("unexpected end of file inside a value")
            }
            // Over the limit: drop what was scanned, remember we are skipping.
            if i - pos > limit {
                skipped += i - pos
                pos = i
            }
            let rel = i - pos
            try ensure(rel + 1)
            i = pos + rel
        }
    }

    /// Parses the scanned value at `r` in `buf`.
    func parse(_ r: Range<Int>, maxDepth: Int) -> Result<JSONValue, JSONParseError> {
        buf.withUnsafeBufferPointer { p in
            do throws(JSONParseError) {
                return .success(try JSONParser.parse(UnsafeBufferPointer(rebasing: p[r]), maxDepth: maxDepth))
            } catch {
                return .failure(error)
            }
        }
    }

    // MARK: raw bytes of a top-level object

    /// Starts gathering the raw bytes of the top-level object that starts at `pos`.
    func startCapture() {
        topRaw.removeAll(keepingCapacity: true)
        topRawFrom = pos
    }

    /// Stops gathering raw bytes, dropping what was gathered.
    func stopCapture() {
        topRawFrom = nil
        topRaw = []
    }

    /// The object's raw bytes up to `pos` (its closing `}`), unless over the size limit or not
    /// gathered; gathering stops.
    func takeCapture() -> [UInt8]? {
        guard let from = topRawFrom else { return nil }
        var raw: [UInt8]?
        if topRaw.count + (pos - from) <= maxValueBytes {
            raw = topRaw + buf[from..<pos]
        }
        topRawFrom = nil
        topRaw.removeAll(keepingCapacity: true)
        return raw
    }

    // MARK: resuming after broken framing

    /// The last byte before `pos` that is not a space, tab or CR is a line feed: a value cut
    /// short broke at the start of the next line.
    var followsLineBreak: Bool {
        var back = pos - 1
        while back >= 0, buf[back] == 0x20 || buf[back] == 0x09 || buf[back] == 0x0D { back -= 1 }
        return back >= 0 && buf[back] == 0x0A
    }

    /// Skips past the next line feed: true, or false when the input ends (or fails) first.
    func skipLine() -> Bool {
        while true {
            if pos >= buf.count {
                if eof { return false }
                do { try ensure(1) } catch { return false }
                continue
            }
            let b = buf[pos]
            pos += 1
            if b == 0x0A { return true }
            if pos > 1 << 16 { buf.removeSubrange(0..<pos); dropped += pos; pos = 0 }
        }
    }

    /// Skips to the next record separator (RS, left at `pos`): true, or false when the input
    /// ends (or fails) first.
    func skipToRecordSeparator() -> Bool {
        while true {
            if pos >= buf.count {
                if eof { return false }
                do { try ensure(1) } catch { return false }
                continue
            }
            if buf[pos] == 0x1E { return true }
            pos += 1
            if pos > 1 << 16 { buf.removeSubrange(0..<pos); dropped += pos; pos = 0 }
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A text encoding other than UTF-8 that a dump may come in, converted to UTF-8 as the bytes
/// stream (`TranscodingStage`) and back for rejects files (`TextEncoding.Encoder`).
///
/// glibc's iconv rather than a hand-written table or Foundation's `String.Encoding`: iconv knows
/// every name users type (`cp1252`, `windows-1252`, `latin1`, `iso-8859-15`, `utf-16le`, …),
/// converts a stream in place without building Strings, and is part of the C library every
/// machine already has; Foundation knows a fixed handful of encodings by its own names and
/// converts whole Strings.
public struct TextEncoding: Sendable, Equatable, CustomStringConvertible {
    /// The iconv name used to open converters (for a BOM: `UTF-16LE`, `UTF-16BE`, `UTF-32LE`, `UTF-32BE`).
    public let iconvName: String
    /// As the user gave it, for messages.
    public let name: String

    /// nil when iconv does not know `name`. UTF-8 itself (any spelling) is nil too: it needs no
    /// conversion — check `isUTF8(name:)` first.
    public init?(name: String) {
        let trimmed = name.trimmingSpaces
        guard !trimmed.isEmpty, !Self.isUTF8(name: trimmed) else { return nil }
        // The BOM-dependent names (UTF-16, UTF-32, UCS-2) would let iconv eat the BOM on input and
        // write one of its choosing in every rejects chunk: fix the byte order here instead
        // (`resolved(bom:)` takes the BOM's), so a BOM passes through as U+FEFF both ways.
        let upper = trimmed.uppercased()
        let fixed = ["UTF-16": "UTF-16BE", "UTF16": "UTF-16BE", "UTF-32": "UTF-32BE", "UTF32": "UTF-32BE",
                     "UCS-2": "UTF-16BE", "UCS2": "UTF-16BE"][upper] ?? trimmed
        let cd = iconv_open("UTF-8", fixed)
        if cd == iconv_t(bitPattern: -1) { return nil }
        iconv_close(cd)
        iconvName = fixed
        self.name = trimmed
    }

    private init(bom iconvName: String) {
        self.iconvName = iconvName
        name = iconvName
    }

    /// UTF-8 under any of its usual names.
    public static func isUTF8(name: String) -> Bool {
        ["UTF-8", "UTF8"].contains(name.trimmingSpaces.uppercased())
    }

    /// Whether iconv knows `name` (UTF-8 included).
    public static func isKnown(name: String) -> Bool { isUTF8(name: name) || TextEncoding(name: name) != nil }

    /// A few names to suggest when one is unknown.
    public static let examples = ["utf-8", "cp1252", "windows-1252", "latin1", "iso-8859-15", "utf-16le", "utf-16be", "utf-32"]

    /// The encoding a UTF-16 or UTF-32 byte-order mark at the start of `prefix` says; nil for
    /// none (or a UTF-8 BOM, which needs no conversion). UTF-32 LE is checked before UTF-16 LE:
    /// its BOM starts with UTF-16 LE's.
    public static func fromBOM(_ prefix: ArraySlice<UInt8>) -> TextEncoding? {
        if prefix.starts(with: [0xFF, 0xFE, 0x00, 0x00]) { return TextEncoding(bom: "UTF-32LE") }
        if prefix.starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return TextEncoding(bom: "UTF-32BE") }
        if prefix.starts(with: [0xFF, 0xFE]) { return TextEncoding(bom: "UTF-16LE") }
        if prefix.starts(with: [0xFE, 0xFF]) { return TextEncoding(bom: "UTF-16BE") }
        return nil
    }

    /// Whether `prefix` looks like UTF-16 text without a byte-order mark: nil when not, else
    /// whether big-endian. Text that is mostly ASCII (CSV delimiters, digits, JSON punctuation)
    /// has a NUL in every other byte in UTF-16, and UTF-8 text has no NUL at all: nine pairs in
    /// ten of that pattern, over at least 8 pairs, is UTF-16.
    public static func unmarkedUTF16(_ prefix: ArraySlice<UInt8>) -> Bool? {
        let bytes = Array(prefix.prefix(1024))
        let pairs = bytes.count / 2
        guard pairs >= 8 else { return nil }
        var little = 0, big = 0
        for i in 0..<pairs {
            let a = bytes[2 * i], b = bytes[2 * i + 1]
            if a != 0 && b == 0 { little += 1 } else if a == 0 && b != 0 { big += 1 }
        }
        if little * 10 >= pairs * 9 { return false }
        if big * 10 >= pairs * 9 { return true }
        return nil
    }

    public var description: String { name }

    /// `bytes` converted to UTF-8 at once (a file's first kilobytes, to recognise it); bytes this
    /// encoding cannot decode are passed through, as when streaming.
    public func decode(_ bytes: [UInt8]) -> [UInt8] {
        guard let cd = iconv_open("UTF-8", iconvName), cd != iconv_t(bitPattern: -1) else { return bytes }
        defer { iconv_close(cd) }
        var out: [UInt8] = [], scratch = [UInt8](repeating: 0, count: Transcode.scratchSize)
        var pending = bytes[...]
        while !pending.isEmpty {
            if Transcode.step(cd, input: &pending, output: &out, scratch: &scratch, final: true) == .invalid {
                out.append(pending.removeFirst())
            }
        }
        return out
    }

    /// Converts UTF-8 back to this encoding: rejects files give rows back in the input's own
    /// bytes. A byte that is not valid UTF-8 is one the input's encoding could not decode
    /// (`TranscodingStage` passed it through as it was), so it goes back as it was too: a
    /// single-byte encoding's rows come back byte for byte even when they hold such a byte.
    public final class Encoder {
        private let cd: iconv_t
        private var scratch = [UInt8](repeating: 0, count: Transcode.scratchSize)

        public init(_ encoding: TextEncoding) {
            cd = iconv_open(encoding.iconvName, "UTF-8")
            precondition(cd != iconv_t(bitPattern: -1), "iconv knew \(encoding.iconvName) when it was chosen")
        }

        deinit { iconv_close(cd) }

        /// `utf8` (whole characters) in the target encoding.
        public func encode(_ utf8: [UInt8]) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(utf8.count * 2 + 16)
            var pending = utf8[...]
            iconv(cd, nil, nil, nil, nil)
            while !pending.isEmpty {
                let r = Transcode.step(cd, input: &pending, output: &out, scratch: &scratch, final: true)
                if r == .invalid {
                    out.append(pending.removeFirst())
                }
            }
            return out
        }
    }
}

/// One iconv call over as much of `input` as converts.
enum Transcode {
    enum Result { case done, invalid, incomplete }

    /// Converts from the front of `input` into `output` until it is all converted or iconv stops
    /// at an invalid sequence (`invalid`) or at one cut by the end of `input` (`incomplete`; with
    /// `final` such a sequence is `invalid`). iconv writes into `scratch` (allocated once by the
    /// caller), so an input full of invalid bytes — one call each — costs no buffer per byte.
    static func step(_ cd: iconv_t, input: inout ArraySlice<UInt8>, output: inout [UInt8], scratch: inout [UInt8],
                     final: Bool) -> Result {
        while !input.isEmpty {
            var err: Int32 = 0
            let (consumed, written): (Int, Int) = input.withUnsafeBytes { inRaw in
                scratch.withUnsafeMutableBytes { outRaw in
                    var inPtr: UnsafeMutablePointer<CChar>? =
                        UnsafeMutablePointer(mutating: inRaw.baseAddress!.assumingMemoryBound(to: CChar.self))
                    var inLeft = inRaw.count
                    var outPtr: UnsafeMutablePointer<CChar>? = outRaw.baseAddress!.assumingMemoryBound(to: CChar.self)
                    var outLeft = outRaw.count
                    if iconv(cd, &inPtr, &inLeft, &outPtr, &outLeft) == -1 { err = errno }
                    return (inRaw.count - inLeft, outRaw.count - outLeft)
                }
            }
            output.append(contentsOf: scratch[0..<written])
            input = input.dropFirst(consumed)
            switch err {
            case 0, E2BIG: continue
            case EINVAL: return final ? .invalid : .incomplete
            default: return .invalid
            }
        }
        return .done
    }

    /// Scratch size: a chunk's worth of UTF-8 per few calls, small enough to stay in cache.
    static let scratchSize = 64 * 1024
}

/// Converts a source in another encoding to UTF-8 as it streams, on the reader's thread (iconv
/// converts hundreds of MB/s: no thread is worth its hand-over here).
///
/// A byte sequence the encoding cannot decode (cp1252's 0x81, a lone UTF-16 surrogate) is passed
/// through as it is: it is then invalid UTF-8, so its record is rejected for that like any
/// invalid text, and `TextEncoding.Encoder` gives it back unchanged in the rejects file.
final class TranscodingStage: ByteStage {
    private let source: ByteSource
    private let cd: iconv_t
    private var raw: [UInt8] = []
    private var pending: ArraySlice<UInt8> = []
    private var eof = false
    private var scratch = [UInt8](repeating: 0, count: Transcode.scratchSize)

    init(source: ByteSource, encoding: TextEncoding) {
        self.source = source
        cd = iconv_open("UTF-8", encoding.iconvName)
        precondition(cd != iconv_t(bitPattern: -1), "iconv knew \(encoding.iconvName) when it was chosen")
    }

    deinit { iconv_close(cd) }

    var inputBytesRead: Int { source.bytesRead }
    var inputTotalBytes: Int? { source.totalBytes }

    func read(appendingTo buffer: inout [UInt8]) throws(FormatError) -> Int {
        let start = buffer.count
        while buffer.count == start {
            if eof && pending.isEmpty { return 0 }
            if !eof {
                raw.removeAll(keepingCapacity: true)
                raw.append(contentsOf: pending)
                if try source.read(appendingTo: &raw) == 0 { eof = true }
                pending = raw[...]
            }
            while !pending.isEmpty {
                let r = Transcode.step(cd, input: &pending, output: &buffer, scratch: &scratch, final: eof)
                if r == .incomplete { break }
                if r == .invalid { buffer.append(pending.removeFirst()) }
            }
        }
        return buffer.count - start
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}

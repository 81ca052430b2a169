#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CZlib
import Dispatch

/// Zip archives, as dumps are often published: `allCountries.zip` and friends. Each CSV/GeoJSON
/// member is read as if it were a file of its own, named `ARCHIVE:MEMBER` in places, rejects and
/// messages; the members are inflated on a thread of their own, streaming, exactly like gzip
/// (`GzipStage`).
///
/// Why by hand over zlib rather than ZIPFoundation (mirrored here, 0.9.20): on Linux its inflate
/// loop (`Data.decode`) sets `avail_in` to the buffer size even when the last read was shorter,
/// so zlib reads past the chunk it was given on a truncated or crafted member; when the file ends
/// before the deflate stream does it spins forever (an empty read leaves `result` as it was);
/// it reads on past the member's compressed size into the next member and the directory; and its
/// module map declares a clang module `CZlib`, the name of ours. A hostile dump must end with a
/// message, so the local headers and the central directory (with ZIP64) are read here, and
/// members inflate through zlib's raw inflate, bounded by their compressed size.
///
/// Only a file is read: the central directory is at the end, so a zip on standard input or a
/// pipe is refused (`FormatError.zipNeedsFile`) rather than spooled to disk — `unzip -p` already
/// streams one, and a spool would need as much temporary space as the archive.
public final class ZipArchive: @unchecked Sendable {
    /// A local file header's signature, what every non-empty zip starts with.
    public static let magic: [UInt8] = [0x50, 0x4B, 0x03, 0x04]
    /// An empty archive is its end-of-central-directory record alone.
    static let emptyMagic: [UInt8] = [0x50, 0x4B, 0x05, 0x06]

    public static func isZip(_ prefix: ArraySlice<UInt8>) -> Bool { prefix.starts(with: magic) }

    /// Whether `path` is a regular file holding a zip archive (its first four bytes). Pipes and
    /// standard input are never looked at here: that would consume their bytes.
    public static func isZip(path: String) -> Bool {
        guard path != "-" else { return false }
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 4)
        let n = head.withUnsafeMutableBytes { sysRead(fd, $0.baseAddress!, 4) }
        return n == 4 && (head == magic || head == emptyMagic)
    }

    /// The archive as named by the user (members are named `path:member`).
    public let path: String
    /// Every file member (not folders), in name order (byte order of their UTF-8 names).
    public let members: [ZipMember]
    let bytes: ZipBytes

    public init(path: String) throws(FormatError) {
        self.path = path
        bytes = try ZipBytes(path: path)
        members = try Self.readDirectory(bytes, name: path)
    }

    /// An archive in memory (tests, the fuzzer).
    public init(bytes: [UInt8], name: String) throws(FormatError) {
        path = name
        self.bytes = ZipBytes(memory: bytes)
        members = try Self.readDirectory(self.bytes, name: name)
    }

    /// How the member is named in places, rejects and messages: `dump.zip:dump/part-a.csv`.
    public func name(of member: ZipMember) -> String { "\(path):\(member.name)" }

    /// The member's decoded bytes, inflated on a thread of its own as they are read, capped by
    /// `limits` (`maxInflatedBytes`, `maxInflateRatio`). A problem found before any byte (an
    /// encrypted member, a declared size over the caps) is the source's first read error.
    public func source(for member: ZipMember, limits: ReadLimits = ReadLimits()) -> ByteSource {
        let name = name(of: member)
        let bytes = self.bytes
        let stage = ThreadedStage(label: "poi.unzip", inputTotalBytes: member.compressedSize) { channel in
            ZipMemberInflater(bytes: bytes, member: member, name: name, limits: limits).run(into: channel)
        }
        return ByteSource(name: name, stage: stage)
    }

    // MARK: The central directory

    private static func readDirectory(_ bytes: ZipBytes, name: String) throws(FormatError) -> [ZipMember] {
        func bad(_ reason: String) -> FormatError { .damagedArchive(file: name, reason: reason) }
        let size = bytes.count
        // The end record is the last 22 bytes plus a comment of up to 65535.
        let tailStart = max(0, size - (22 + 0xFFFF))
        let tail = try bytes.read(at: tailStart, count: size - tailStart)
        var endAt: Int?
        var i = tail.count - 22
        while i >= 0 {
            if tail[i] == 0x50, tail[i + 1] == 0x4B, tail[i + 2] == 0x05, tail[i + 3] == 0x06,
               i + 22 + Int(tail.u16(i + 20)) <= tail.count {
                endAt = i
                break
            }
            i -= 1
        }
        guard let end = endAt else { throw bad("no central directory at its end (not a zip archive, or a truncated one)") }
        var entries = Int(tail.u16(end + 10))
        var directorySize = Int(tail.u32(end + 12))
        var directoryOffset = Int(tail.u32(end + 16))
        if tail.u16(end + 4) != 0 || tail.u16(end + 6) != 0 { throw bad("archives split over several files are not read") }
        // ZIP64: a locator just before the end record points at the 64-bit end record.
        if end >= 20, tail[end - 20] == 0x50, tail[end - 19] == 0x4B, tail[end - 18] == 0x06, tail[end - 17] == 0x07 {
            let at = tail.u64(end - 20 + 8)
            guard at <= UInt64(size - 56) else { throw bad("the ZIP64 end record is outside the file") }
            let record = try bytes.read(at: Int(at), count: 56)
            guard record.count == 56, record.u32(0) == 0x06064B50 else { throw bad("no ZIP64 end record where its locator says") }
            let total = record.u64(32), cdSize = record.u64(40), cdOffset = record.u64(48)
            guard total <= UInt64(size), cdSize <= UInt64(size), cdOffset <= UInt64(size) else {
                throw bad("the ZIP64 end record gives sizes beyond the file")
            }
            entries = Int(total)
            directorySize = Int(cdSize)
            directoryOffset = Int(cdOffset)
        }
        guard directoryOffset + directorySize <= size else { throw bad("the central directory runs past the end of the file (truncated file?)") }
        // Each entry is at least 46 bytes: the count cannot exceed what the directory holds.
        guard entries <= directorySize / 46 + 1 else { throw bad("the end record counts more members than the directory holds") }
        let directory = try bytes.read(at: directoryOffset, count: directorySize)
        var members: [ZipMember] = []
        members.reserveCapacity(entries)
        var at = 0
        for _ in 0..<entries {
            guard at + 46 <= directory.count, directory.u32(at) == 0x02014B50 else {
                throw bad("damaged central directory (entry \(members.count + 1))")
            }
            let flags = directory.u16(at + 8)
            let method = directory.u16(at + 10)
            let crc = directory.u32(at + 16)
            var compressed = UInt64(directory.u32(at + 20))
            var uncompressed = UInt64(directory.u32(at + 24))
            let nameLength = Int(directory.u16(at + 28))
            let extraLength = Int(directory.u16(at + 30))
            let commentLength = Int(directory.u16(at + 32))
            var offset = UInt64(directory.u32(at + 42))
            let nameStart = at + 46
            let next = nameStart + nameLength + extraLength + commentLength
            guard next <= directory.count else { throw bad("damaged central directory (entry \(members.count + 1))") }
            let rawName = Array(directory[nameStart..<(nameStart + nameLength)])
            // ZIP64 extra field: the 64-bit values of the fields set to 0xFFFFFFFF, in this order.
            var e = nameStart + nameLength
            let extraEnd = e + extraLength
            while e + 4 <= extraEnd {
                let id = directory.u16(e), length = Int(directory.u16(e + 2))
                var v = e + 4
                let fieldEnd = min(extraEnd, v + length)
                if id == 0x0001 {
                    if uncompressed == 0xFFFF_FFFF, v + 8 <= fieldEnd { uncompressed = directory.u64(v); v += 8 }
                    if compressed == 0xFFFF_FFFF, v + 8 <= fieldEnd { compressed = directory.u64(v); v += 8 }
                    if offset == 0xFFFF_FFFF, v + 8 <= fieldEnd { offset = directory.u64(v); v += 8 }
                }
                e += 4 + length
            }
            at = next
            // UTF-8 when the flag says so or the bytes are; otherwise the old DOS code page's
            // ASCII half is all a dump's member name needs, the rest shown as U+FFFD.
            let memberName = String(validating: rawName, as: UTF8.self)
                ?? String(decoding: rawName.map { $0 < 0x80 ? $0 : 0x3F }, as: UTF8.self)
            if memberName.hasSuffix("/") { continue }  // a folder
            guard compressed <= UInt64(size), offset <= UInt64(size) else {
                throw bad("\(memberName): sizes beyond the file in the central directory")
            }
            members.append(ZipMember(name: memberName, compressedSize: Int(compressed),
                                     uncompressedSize: uncompressed > UInt64(Int.max) ? Int.max : Int(uncompressed),
                                     crc32: crc, method: method, flags: flags, localHeaderOffset: Int(offset)))
        }
        return members.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }
}

/// One member of a zip archive, as its central directory describes it.
public struct ZipMember: Sendable, Equatable {
    /// The path inside the archive (`dump/part-a.csv`).
    public let name: String
    public let compressedSize: Int
    /// As declared (a bomb may lie: the inflated bytes are counted too).
    public let uncompressedSize: Int
    public let crc32: UInt32
    /// 0 stored, 8 deflate: the two read.
    public let method: UInt16
    public let flags: UInt16
    let localHeaderOffset: Int

    /// Why the member is not a dump (skipped with a note), or nil for a CSV/GeoJSON member.
    /// Decided by the name, as a user would: `.csv .tsv .tab .txt .psv .geojson .json .geojsonl
    /// .geojsons .ndjson .jsonl` (any with `.gz` after it) are dumps, except documentation
    /// (`README*`, `LICENSE*`, `COPYING*`, `CHANGELOG*`, `NOTICE*`) and macOS metadata
    /// (`__MACOSX/`, `._name`). GeoNames' `allCountries.txt` is a dump, its `readme.txt` not.
    public var skipReason: String? {
        let last = name.split(separator: "/").last.map(String.init) ?? name
        let lower = last.lowercased()
        if name.hasPrefix("__MACOSX/") || last.hasPrefix("._") { return "macOS metadata" }
        if ["readme", "license", "licence", "copying", "changelog", "notice"].contains(where: { lower.hasPrefix($0) }) {
            return "documentation"
        }
        var base = lower
        if base.hasSuffix(".gz") { base.removeLast(3) }
        let ext = base.split(separator: ".", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        guard base.contains("."), Self.dumpExtensions.contains(ext) else { return "not a CSV or GeoJSON file by its name" }
        return nil
    }

    static let dumpExtensions: Set<String> = ["csv", "tsv", "tab", "txt", "psv", "geojson", "json", "geojsonl",
                                              "geojsons", "geojsonseq", "ndjson", "jsonl"]
}

/// The archive's bytes, read at any offset from any thread (`pread` on a file; memory for tests).
final class ZipBytes: @unchecked Sendable {
    let count: Int
    private let fd: Int32
    private let memory: [UInt8]
    private let name: String

    init(path: String) throws(FormatError) {
        name = path
        memory = []
        let f = open(path, O_RDONLY | O_CLOEXEC)
        if f < 0 { throw .cannotOpen(file: path, reason: String(cString: strerror(errno))) }
        var st = stat()
        guard fstat(f, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            close(f)
            throw .zipNeedsFile(file: path)
        }
        fd = f
        count = Int(st.st_size)
    }

    init(memory: [UInt8]) {
        name = "memory"
        self.memory = memory
        fd = -1
        count = memory.count
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Up to `n` bytes at `offset` (fewer only at the end of the file).
    func read(at offset: Int, count n: Int) throws(FormatError) -> [UInt8] {
        var out: [UInt8] = []
        try read(at: offset, count: n, into: &out)
        return out
    }

    /// Replaces `buffer` with up to `n` bytes at `offset` (fewer only at the end of the file).
    func read(at offset: Int, count n: Int, into buffer: inout [UInt8]) throws(FormatError) {
        let n = max(0, min(n, count - offset))
        if fd < 0 {
            buffer.removeAll(keepingCapacity: true)
            if n > 0 { buffer.append(contentsOf: memory[offset..<(offset + n)]) }
            return
        }
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: repeatElement(0, count: n))
        var got = 0
        while got < n {
            let r = buffer.withUnsafeMutableBytes { raw in pread(fd, raw.baseAddress! + got, n - got, off_t(offset + got)) }
            if r < 0 && errno == EINTR { continue }
            if r < 0 { throw .readFailed(file: name, reason: String(cString: strerror(errno))) }
            if r == 0 { break }
            got += r
        }
        buffer.removeLast(n - got)
    }
}

/// The texts of the decompression caps, the same for gzip and zip.
enum InflateCaps {
    static func overBytes(_ cap: Int) -> String {
        "it inflates to more than \(cap) bytes, the cap on decompressed bytes; everything before it was read"
    }
}

/// Inflates one member into a channel: stored or deflate, bounded by the member's compressed
/// size, CRC-32 and size checked at its end, caps checked as it goes.
private struct ZipMemberInflater {
    let bytes: ZipBytes
    let member: ZipMember
    let name: String
    let limits: ReadLimits
    let chunkSize = ByteSource.chunkSize

    func run(into channel: DecodedChannel) {
        do throws(FormatError) {
            try inflate(into: channel)
        } catch {
            _ = channel.put(.failed(error), compressedRead: 0)
        }
    }

    /// Throws what stops the member before a byte was handed out; later problems are put in the
    /// channel after the bytes before them.
    private func inflate(into channel: DecodedChannel) throws(FormatError) {
        if member.flags & 1 != 0 { throw .unreadableArchiveMember(file: name, reason: "the member is encrypted (password-protected)") }
        guard member.method == 0 || member.method == 8 else {
            let known: [UInt16: String] = [9: "deflate64", 12: "bzip2", 14: "LZMA", 93: "zstd", 95: "xz", 98: "PPMd"]
            throw .unreadableArchiveMember(file: name, reason: "the member is compressed with method \(member.method)"
                                           + (known[member.method].map { " (\($0))" } ?? "") + "; only stored and deflate members are read")
        }
        if member.uncompressedSize > limits.maxInflatedBytes {
            throw .decompressionLimit(file: name, reason: "it declares \(member.uncompressedSize) bytes, over the cap of "
                                      + "\(limits.maxInflatedBytes) decompressed bytes; refused unread")
        }
        if member.uncompressedSize > limits.inflateRatioFloor,
           member.uncompressedSize / max(member.compressedSize, 1) > limits.maxInflateRatio {
            throw .decompressionLimit(file: name, reason: "it declares \(member.uncompressedSize) bytes from "
                                      + "\(member.compressedSize) compressed, over \(limits.maxInflateRatio):1; refused unread")
        }
        let header = try bytes.read(at: member.localHeaderOffset, count: 30)
        guard header.count == 30, header.u32(0) == 0x04034B50 else {
            throw .damagedArchive(file: name, reason: "no local header where the central directory says (byte \(member.localHeaderOffset))")
        }
        let dataStart = member.localHeaderOffset + 30 + Int(header.u16(26)) + Int(header.u16(28))

        var input: [UInt8] = []
        var output = [UInt8](repeating: 0, count: chunkSize)
        var produced = 0          // bytes of `output` filled
        var handedOut = 0         // bytes put in the channel
        var consumed = 0          // compressed bytes used
        var crc = CZlib.crc32(0, nil, 0)

        /// Hands out what is decoded so far, then the problem.
        func fail(_ error: FormatError) {
            if produced > 0 { _ = channel.put(.bytes(Array(output[0..<produced])), compressedRead: consumed) }
            _ = channel.put(.failed(error), compressedRead: consumed)
        }
        func damaged(_ reason: String) { fail(.damagedArchive(file: name, reason: reason)) }
        /// Adds `n` decoded bytes at `produced`; false when a cap stops the member.
        func account(_ n: Int) -> Bool {
            let total = handedOut + produced + n
            if total > limits.maxInflatedBytes {
                produced += max(0, limits.maxInflatedBytes - handedOut - produced)
                fail(.decompressionLimit(file: name, reason: InflateCaps.overBytes(limits.maxInflatedBytes)))
                return false
            }
            if total > limits.inflateRatioFloor, total / max(consumed, 1) > limits.maxInflateRatio {
                fail(.decompressionLimit(file: name, reason: "it inflates to over \(limits.maxInflateRatio) times its "
                                         + "compressed size (\(total) bytes from \(consumed)); everything before it was read"))
                return false
            }
            output.withUnsafeBufferPointer { o in crc = CZlib.crc32(crc, o.baseAddress! + produced, uInt(n)) }
            produced += n
            return true
        }
        /// Hands out a full output chunk; false when the reader went away.
        func handOver() -> Bool {
            guard produced == chunkSize else { return true }
            guard channel.put(.bytes(output), compressedRead: consumed) else { return false }
            handedOut += produced
            produced = 0
            return true
        }
        let truncated = "the archive ends inside this member (truncated file?)"

        if member.method == 0 {
            while consumed < member.compressedSize {
                let want = min(chunkSize - produced, member.compressedSize - consumed)
                do { try bytes.read(at: dataStart + consumed, count: want, into: &input) } catch { return fail(error) }
                if input.isEmpty { return damaged(truncated) }
                output.replaceSubrange(produced..<(produced + input.count), with: input)
                consumed += input.count
                guard account(input.count) else { return }
                guard handOver() else { return }
            }
        } else {
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            defer { stream.deinitialize(count: 1); stream.deallocate() }
            // -15: raw deflate (zip has no zlib or gzip wrapper), 32 KiB window.
            guard inflateInit2_(stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                throw .readFailed(file: name, reason: "zlib could not start (out of memory)")
            }
            defer { inflateEnd(stream) }
            var read = 0          // compressed bytes read from the archive
            var inputUsed = 0     // of `input`
            var ended = false
            while !ended {
                if inputUsed == input.count {
                    guard read < member.compressedSize else {
                        return damaged("the compressed data ends before the member does (\(member.compressedSize) bytes)")
                    }
                    do { try bytes.read(at: dataStart + read, count: min(chunkSize, member.compressedSize - read), into: &input) } catch {
                        return fail(error)
                    }
                    if input.isEmpty { return damaged(truncated) }
                    read += input.count
                    inputUsed = 0
                }
                let before = (produced, inputUsed)
                let ret: Int32 = input.withUnsafeMutableBufferPointer { inBuf in
                    output.withUnsafeMutableBufferPointer { outBuf in
                        stream.pointee.next_in = inBuf.baseAddress! + inputUsed
                        stream.pointee.avail_in = UInt32(inBuf.count - inputUsed)
                        stream.pointee.next_out = outBuf.baseAddress! + produced
                        stream.pointee.avail_out = UInt32(chunkSize - produced)
                        let r = CZlib.inflate(stream, Z_NO_FLUSH)
                        stream.pointee.next_in = nil
                        stream.pointee.next_out = nil
                        return r
                    }
                }
                inputUsed = input.count - Int(stream.pointee.avail_in)
                consumed += inputUsed - before.1
                let made = chunkSize - Int(stream.pointee.avail_out) - before.0
                switch ret {
                case Z_OK, Z_BUF_ERROR:
                    // Z_BUF_ERROR: no progress possible; more input follows (or the loop says
                    // the data ended early).
                    break
                case Z_STREAM_END:
                    ended = true
                default:
                    let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(ret)"
                    return damaged(ret == Z_MEM_ERROR ? "out of memory" : "corrupt deflate data (\(message)) "
                                   + "after \(handedOut + produced) decompressed bytes")
                }
                guard account(made) else { return }
                guard handOver() else { return }
            }
        }
        let total = handedOut + produced
        if total != member.uncompressedSize {
            return damaged("it inflates to \(total) bytes, its directory entry says \(member.uncompressedSize)")
        }
        if crc != uLong(member.crc32) {
            return damaged("CRC-32 mismatch (the member's bytes are not the ones archived)")
        }
        if produced > 0, !channel.put(.bytes(Array(output[0..<produced])), compressedRead: consumed) { return }
        _ = channel.put(.end, compressedRead: consumed)
    }
}

extension Array where Element == UInt8 {
    func u16(_ i: Int) -> UInt16 { UInt16(self[i]) | UInt16(self[i + 1]) << 8 }
    func u32(_ i: Int) -> UInt32 { UInt32(u16(i)) | UInt32(u16(i + 2)) << 16 }
    func u64(_ i: Int) -> UInt64 { UInt64(u32(i)) | UInt64(u32(i + 4)) << 32 }
}

import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Large downloads from the uploads folder go out with sendfile (`FileRegionBody`): the file's
/// bytes never pass through the server's memory, so a download costs no fresh pages, and ranges,
/// a DELETE during a download and a file cut short behave as they did with buffers.
@Suite("poi serve: large downloads with sendfile", .tags(.live, .process, .budget), .serialized, .liveServer)
struct SendfileDownloadTests {
    /// 32 MiB whose every byte depends on its offset, so a slice sent from the wrong place shows.
    static let size = 32 << 20
    static let bytes: [UInt8] = (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ ($0 >> 13)) }

    static func putLarge(_ s: ServeHarness) throws -> String {
        try DiskUploads(database: s.database, directory: s.uploads)
            .put(bytes, info: FileInfo(contentType: "image/jpeg", role: .original)).file.id.hex
    }

    /// Minor page faults of a process so far (field 10 of /proc/PID/stat): each is a page the
    /// kernel handed it afresh.
    static func minorFaults(_ pid: Int32) -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return -1 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return Int(fields[7]) ?? -1
    }

    /// User and system CPU seconds of a process so far (fields 14 and 15 of /proc/PID/stat).
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return Double((Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Buffers read from the file were each a fresh mapping (glibc maps every buffer of 128 KiB or
    /// more on its own, for the memory to come back after uploads): 8,192 page faults per 32 MiB
    /// download. Sent with sendfile, four downloads cost the server fewer faults than one did.
    @Test func largeDownloadsCostTheServerNoFreshPages() throws {
        let s = try ServeHarness("sendfilefaults")
        let id = try Self.putLarge(s)
        let first = try s.get("/files/\(id)")
        try #require(first.status == 200)
        #expect(first.body == Self.bytes)

        let before = Self.minorFaults(s.process.processIdentifier)
        for _ in 0..<4 {
            let r = try s.get("/files/\(id)")
            #expect(r.status == 200 && r.body.count == Self.size)
        }
        let faults = Self.minorFaults(s.process.processIdentifier) - before
        #expect(before > 0 && faults < 2048, "\(faults) page faults for 4 downloads of 32 MiB (8,192 a download with buffers)")
    }

    /// Ranges, If-Range and HEAD on a file sent with sendfile: the exact bytes asked for, with the
    /// same headers as a file read into buffers.
    @Test func rangesOfALargeFileAreItsExactBytes() throws {
        let s = try ServeHarness("sendfileranges")
        let id = try Self.putLarge(s)
        let head = try s.request("HEAD", "/files/\(id)")
        #expect(head.status == 200 && head.header("content-length") == String(Self.size))
        let etag = try #require(head.header("etag"))

        // Across slice boundaries (1 MiB each), from the middle, and the last bytes.
        for (from, to) in [(1_000, 3_500_000), ((1 << 20) - 1, (1 << 20)), (Self.size - 10, Self.size - 1)] {
            let r = try s.get("/files/\(id)", headers: ["Range": "bytes=\(from)-\(to)"])
            #expect(r.status == 206)
            #expect(r.header("content-range") == "bytes \(from)-\(to)/\(Self.size)")
            #expect(r.body == Array(Self.bytes[from...to]), "bytes \(from)-\(to)")
        }
        let suffix = try s.get("/files/\(id)", headers: ["Range": "bytes=-5000000"])
        #expect(suffix.status == 206 && suffix.body == Array(Self.bytes.suffix(5_000_000)))
        let current = try s.get("/files/\(id)", headers: ["Range": "bytes=2000000-", "If-Range": etag])
        #expect(current.status == 206 && current.body == Array(Self.bytes[2_000_000...]))
        let stale = try s.get("/files/\(id)", headers: ["Range": "bytes=2000000-", "If-Range": "\"another\""])
        #expect(stale.status == 200 && stale.body == Self.bytes)
    }

    /// A DELETE while the file is being sent removes it for later requests, and the download
    /// under way still gets every byte (it sends from the file it opened).
    @Test func aDeleteDuringADownloadLetsItFinish() throws {
        let s = try ServeHarness("sendfiledelete")
        let id = try Self.putLarge(s)
        let client = try RawConnection(port: s.port, receiveBuffer: 16384)
        client.send("GET /files/\(id) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        var got = client.receive(atLeast: 200_000, within: 5)
        try #require(got.count >= 200_000)

        let deleted = try s.request("DELETE", "/files/\(id)")
        #expect(deleted.status == 200, "\(deleted.text)")
        #expect(try s.get("/files/\(id)").status == 404)

        got += client.receive(atLeast: Self.size * 2, within: 20)
        let headEnd = try #require(Self.endOfHead(got))
        #expect(Array(got[headEnd...]) == Self.bytes)
    }

    /// A file cut shorter while it is sent (by hand: uploads are only ever added whole) is never
    /// sent as if whole: the connection closes before its Content-Length, the server goes on
    /// answering, and it does not keep trying to send the bytes that are gone.
    @Test func aFileCutShortWhileSentClosesTheConnection() throws {
        let s = try ServeHarness("sendfilecut")
        let id = try Self.putLarge(s)
        let name = try #require(s.uploadedNames.first { !$0.hasPrefix(".") })
        let path = s.uploads + "/" + name
        let client = try RawConnection(port: s.port, receiveBuffer: 16384)
        client.send("GET /files/\(id) HTTP/1.1\r\nHost: x\r\n\r\n")
        try #require(client.receive(atLeast: 100_000, within: 5).count >= 100_000)
        // Beyond the slices already handed to the kernel (two of 1 MiB).
        #expect(truncate(path, off_t(8 << 20)) == 0)

        let received = client.receive(atLeast: Self.size * 2, within: 15)
        #expect(received.count < Self.size - (8 << 20), "\(received.count) more bytes after the cut")
        #expect(client.secondsUntilClosed(within: 5) != nil, "the connection stayed open")
        let before = Self.cpuSeconds(s.process.processIdentifier)
        sleep(2)
        #expect(Self.cpuSeconds(s.process.processIdentifier) - before < 0.3)
        #expect(try s.get("/").status == 200)
    }

    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        let marker: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where Array(bytes[i..<(i + 4)]) == marker { return i + 4 }
        return nil
    }
}

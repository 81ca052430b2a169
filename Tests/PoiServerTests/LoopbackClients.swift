import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Clients for what curl cannot do, and the bytes several suites upload.

/// A loopback connection to a test server, for what curl cannot do: send a request a byte at a
/// time, read a little of a response and go away. Every wait has a deadline.
final class RawConnection {
    let fd: Int32

    /// `receiveBuffer`: see `Loopback.connect`.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = try Loopback.connect(port: port, receiveBuffer: receiveBuffer)
    }

    deinit { close(fd) }

    @discardableResult
    func send(_ text: String, then bytes: [UInt8] = []) -> Bool {
        let bytes = Array(text.utf8) + bytes
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    /// Reads until `count` bytes arrived, the peer closed, or `seconds` passed; what arrived.
    func receive(atLeast count: Int, within seconds: Double) -> [UInt8] {
        receiveBytes(fd, atLeast: count, within: seconds, pollingEvery: 50, readingUpTo: 16384)
    }

    /// Seconds until the server closed the connection (reading and dropping whatever it sends),
    /// nil when it is still open after `seconds`.
    func secondsUntilClosed(within seconds: Double) -> Double? {
        let start = Date()
        var buffer = [UInt8](repeating: 0, count: 16384)
        while Date().timeIntervalSince(start) < seconds {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return Date().timeIntervalSince(start) }
        }
        return nil
    }
}

/// The bytes several suites upload.
protocol UploadFixtures {}

extension UploadFixtures {
    static var pngSignature: [UInt8] { [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] }
}

// Raw sockets, large random uploads and /proc readings for the suites that need them.

func trialFreePort() -> Int { Loopback.freePort() }

func trialConnect(_ port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
    try Loopback.connect(port: port, receiveBuffer: receiveBuffer)
}

func trialSend(_ fd: Int32, _ bytes: [UInt8]) {
    var sent = 0
    while sent < bytes.count {
        let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n <= 0 { return }
        sent += n
    }
}

/// What arrives on `fd` until `atLeast` bytes have (or the peer closes, or 60 s pass).
func trialReceive(_ fd: Int32, atLeast: Int) -> [UInt8] {
    receiveBytes(fd, atLeast: atLeast, within: 60, pollingEvery: 1000, readingUpTo: 65536)
}

/// What arrives on `fd` until `count` bytes have, the peer closes, or `seconds` pass: one
/// `recv` of at most `bytes` after each `poll` of at most `milliseconds` (a slow reader's pace).
func receiveBytes(_ fd: Int32, atLeast count: Int, within seconds: Double,
                  pollingEvery milliseconds: Int32, readingUpTo bytes: Int) -> [UInt8] {
    var got: [UInt8] = []
    let deadline = Date().addingTimeInterval(seconds)
    var buffer = [UInt8](repeating: 0, count: bytes)
    while got.count < count, Date() < deadline {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, milliseconds) > 0 else { continue }
        let n = recv(fd, &buffer, buffer.count, 0)
        if n <= 0 { break }
        got += buffer[0..<n]
    }
    return got
}

/// A JPEG of about `megabytes` MB (a sample with random bytes after its end marker), uploaded.
func trialUploadLarge(_ s: ServeHarness, megabytes: Int) throws -> String {
    let body = try ServeHarness.sample("coffee.jpg") + trialRandomBytes(megabytes * 1024 * 1024)
    let up = try s.request("POST", "/files", headers: ["Content-Type": "image/jpeg"], body: body, timeout: 300)
    guard up.status == 201, let id = (up.json as? [String: Any])?["_id"] as? String else {
        throw HarnessError("upload failed: \(up.status) \(up.text)")
    }
    return id
}

/// `count` bytes from /dev/urandom (different files, so uploads are never answered with another's id).
func trialRandomBytes(_ count: Int) throws -> [UInt8] {
    guard let handle = FileHandle(forReadingAtPath: "/dev/urandom") else { throw HarnessError("no /dev/urandom") }
    defer { try? handle.close() }
    return [UInt8](handle.readData(ofLength: count))
}

/// User + system CPU seconds of a process (/proc/PID/stat fields 14 and 15).
func trialCPUSeconds(_ pid: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After the command: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    guard fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
    return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Peak resident set size (VmHWM) in kB.
func trialPeakRSSKB(_ pid: Int32) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
    return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? 0
}

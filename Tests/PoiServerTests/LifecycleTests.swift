import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Shutdown and secrets.
@Suite("poi serve lifecycle", .tags(.live, .process), .serialized, .liveServer)
struct LifecycleTests {
    /// SIGTERM while an upload is half sent: the upload still completes (201), then the process
    /// exits 0.
    @Test func sigtermFinishesInFlightRequests() throws {
        let s = try ServeHarness("sigterm")
        let png = try ServeHarness.sample("brick.png")
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(s.port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        func sendAll(_ bytes: [UInt8]) {
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return }
                sent += n
            }
        }
        let head = Array("POST /files HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: \(png.count)\r\nConnection: close\r\n\r\n".utf8)
        sendAll(head + Array(png[0..<(png.count / 2)]))
        usleep(300_000)
        kill(s.process.processIdentifier, SIGTERM)
        usleep(300_000)
        #expect(s.process.isRunning)
        sendAll(Array(png[(png.count / 2)...]))
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var reply = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &reply, reply.count, 0)
        let text = n > 0 ? String(decoding: reply[0..<n], as: UTF8.self) : ""
        #expect(text.hasPrefix("HTTP/1.1 201"), "\(text)")
        #expect(s.stop() == 0)
        #expect(try s.count("files", ["role": "original"]) == 1)
        #expect(s.log.contains("poi serve: stopped"))
    }

    /// SIGQUIT (Ctrl-\\) quits at once with the signal's default action. Left to the Swift
    /// runtime's backtracer, it printed "Program crashed" and the server served on, forever
    /// (a signal from another process: swiftlang/swift#89461).
    @Test func sigquitQuitsAtOnce() throws {
        let s = try ServeHarness("sigquit")
        kill(s.process.processIdentifier, SIGQUIT)
        let deadline = Date().addingTimeInterval(10)
        while s.process.isRunning && Date() < deadline { usleep(20_000) }
        #expect(!s.process.isRunning, "still serving 10 s after SIGQUIT")
        if s.process.isRunning { kill(s.process.processIdentifier, SIGKILL) }
        s.process.waitUntilExit()
        #expect(s.process.terminationReason == .uncaughtSignal && s.process.terminationStatus == SIGQUIT)
        #expect(!s.log.contains("Program crashed"), "\(s.log.suffix(400))")
    }

    /// The URI's password appears nowhere: a server that refuses it stops `poi serve` at start
    /// (exit 3, the ping before listening), and the message says why without the password.
    @Test func passwordNeverPrinted() throws {
        let uri = try #require(LiveDatabase.uri)
        guard let schemeEnd = uri.range(of: "mongodb://") else { return }
        let withPassword = uri.replacingCharacters(in: schemeEnd, with: "mongodb://poikit:hunter2secret@")
        let (text, status) = try runToEnd(ServeHarness.binary, ["serve", "--uri", withPassword, "--db", "poikit_test_serve_password",
                                                                 "--uploads", NSTemporaryDirectory(), "--port", "0",
                                                                 "--server-timeout", "2"], stderr: true)
        #expect(status == 3, "\(text)")
        #expect(text.contains("authentication"), "\(text)")
        #expect(!text.contains("hunter2secret"))
    }

    /// `--files-cache-seconds -1` said "Missing value" (the parser took `-1` for an option):
    /// a negative value is refused with the option's range, before anything starts.
    @Test func aNegativeFilesCacheAgeIsRefusedWithItsRange() throws {
        let (text, status) = try runToEnd(ServeHarness.binary, ["serve", "--files-cache-seconds", "-1"], stderr: true)
        #expect(status == 2)
        #expect(text.contains("--files-cache-seconds must be 0...86400, got -1.0"), "\(text)")
    }
}

import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What an operator meets: exit 3 when the database or the port is not there, /healthz that agrees
/// with uploads, an access log that survives its reader, the README's query example.
@Suite("poi serve: start-up, health and logging for an operator", .tags(.live, .process), .serialized, .liveServer)
struct ServeOperationsTests {
    /// When whatever reads stderr goes away (`poi serve 2>&1 | tee log` and tee is gone, a log
    /// shipper restarted), the next access-log line traps (SIGILL): the request in flight gets no
    /// answer and the server is gone. With the default Swift backtracer the process first hangs
    /// for seconds, and the swift-backtrace it starts never ends (it has nowhere to write).
    @Test func accessLogToAClosedPipeDoesNotKillTheServer() throws {
        let uri = try #require(LiveDatabase.uri)
        let stderrPipe = Pipe()
        let readEnd = stderrPipe.fileHandleForReading.fileDescriptor
        let p = Process()
        p.executableURL = ServeHarness.binary
        let dbName = "poikit_test_serve_t14pipe_\(ObjectId().hex.suffix(8))"
        let scratch = NSTemporaryDirectory() + "poi-serve-\(dbName)"
        try FileManager.default.createDirectory(atPath: scratch + "/uploads", withIntermediateDirectories: true)
        defer {
            if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
            try? FileManager.default.removeItem(atPath: scratch)
        }
        p.arguments = ["serve", "--uri", uri, "--db", dbName, "--uploads", scratch + "/uploads", "--port", "0"]
        // A crash would start swift-backtrace, which inherits Process's exit-watch socket and,
        // with stderr gone, never ends: waitUntilExit would wait for it forever.
        var env = ProcessInfo.processInfo.environment
        env["SWIFT_BACKTRACE"] = "enable=no"
        p.environment = env
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        p.standardError = stderrPipe  // Process closes this side's copy of the write end
        try p.run()
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("\n"), Date() < deadline {
            var pfd = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 500) > 0 else { continue }
            let n = read(readEnd, &buffer, buffer.count)
            if n <= 0 { break }
            text += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        try stderrPipe.fileHandleForReading.close()  // whatever read stderr is gone
        let range = try #require(text.range(of: "listening on http://127.0.0.1:"), "no listening line: \(text)")
        let port = try #require(Int(text[range.upperBound...].prefix(while: \.isNumber)))
        let r = try runToEnd(curl, ["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/healthz"]).text
        #expect(r == "200", "GET /healthz with stderr's reader gone: \(r)")
        usleep(500_000)
        #expect(p.isRunning, "poi serve died (status \(p.isRunning ? 0 : p.terminationStatus))")
    }

    /// `poi serve --help`: "Exit status: … 3 cannot listen or reach the database". With no
    /// database it listens anyway and answers every request 503, so systemd's Restart=on-failure
    /// and a deploy's health check never hear of it at start.
    @Test func unreachableDatabaseAtStartExits3() throws {
        let port = trialFreePort()
        let p = Process()
        p.executableURL = ServeHarness.binary
        p.arguments = ["serve", "--uri", "mongodb://127.0.0.1:\(port)", "--db", "poikit_test_t14_nodb",
                       "--uploads", NSTemporaryDirectory(), "--port", "0", "--server-timeout", "1"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        let deadline = Date().addingTimeInterval(15)
        while p.isRunning && Date() < deadline { usleep(100_000) }
        #expect(!p.isRunning, "still serving 15 s after start with no database (--server-timeout 1)")
        if !p.isRunning { #expect(p.terminationStatus == 3) }
    }

    /// A port already taken: exit 3 with "serve: bind(descriptor:ptr:bytes:): Address already in
    /// use) (errno: 98)", which names neither the address nor the option to change.
    @Test func portInUseNamesTheAddress() throws {
        let uri = try #require(LiveDatabase.uri)
        let (fd, port) = Loopback.bound()
        defer { close(fd) }
        try #require(listen(fd, 1) == 0)
        let (text, status) = try runToEnd(ServeHarness.binary, ["serve", "--uri", uri, "--db", "poikit_test_t14_busy",
                                                                "--uploads", NSTemporaryDirectory(), "--port", String(port)], stderr: true)
        #expect(status == 3)
        #expect(text.contains("127.0.0.1:\(port)"), "\(text)")
    }

    /// /healthz says uploads are fine while every upload fails: the uploads folder was removed
    /// (a cleanup script, an unmounted volume). The probe counts "does not exist yet; will be
    /// created" as healthy, but `POST /files` never creates it.
    @Test func healthzAndUploadsAgreeWhenTheFolderIsGone() throws {
        let s = try ServeHarness("t14nofolder")
        try FileManager.default.removeItem(atPath: s.uploads)
        let health = try s.get("/healthz")
        let upload = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: try ServeHarness.sample("brick.png"))
        #expect((health.status == 200) == (upload.status == 201),
                "healthz \(health.status) \(health.text), upload \(upload.status) \(upload.text)")
    }

    /// The README's query example, as written, fails in curl (`nested brace in URL`: curl globs
    /// `{}` and `[]` unless given -g or an encoded query).
    @Test func readmeQueryExampleRuns() throws {
        let s = try ServeHarness("t14readme")
        let readme = try String(contentsOf: ServeHarness.repoRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let line = try #require(readme.split(separator: "\n").first { $0.hasPrefix("curl -H 'Accept: application/json'") && $0.contains("/locations?query=") })
        let command = String(line).replacingOccurrences(of: "http://127.0.0.1:3000", with: s.base)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", command]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let body = out.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(command): \(errors)")
        #expect((try? JSONSerialization.jsonObject(with: body)) is [Any])
    }
}

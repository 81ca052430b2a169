import Foundation
import PoiStore
import PoiTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// One HTTP exchange as curl saw it.
struct HTTPResult {
    var status: Int
    var headers: [String: String]  // lowercased names; the last value wins
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers[name.lowercased()] }
    /// The body parsed as JSON (Foundation), for structural checks.
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }
}

/// A `poi serve` process (the built binary) on a free loopback port, over a fresh database and a
/// fresh uploads folder; real HTTP through curl. `stop()` sends SIGTERM and returns the status.
final class ServeHarness: @unchecked Sendable {
    let process = Process()
    let port: Int
    let databaseName: String
    let uploads: String
    let logPath: String
    let scratch: String
    let database: MongoDatabase
    var base: String { "http://127.0.0.1:\(port)" }

    static var binary: URL {
        if let explicit = ProcessInfo.processInfo.environment["POI_BIN"] { return URL(fileURLWithPath: explicit) }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent().appendingPathComponent("poi")
    }

    static var repoRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func sample(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: repoRoot.appendingPathComponent("Samples/images/\(name)")))
    }

    /// `serveURI`: the URI `poi serve` is given (a proxy in front of the live server); the
    /// harness's own checks and clean-up use the live server directly.
    /// `databaseName`: a database the test prepared (default: a new one for this harness).
    init(_ label: String, extraArguments: [String] = [], environment: [String: String] = [:], serveURI: String? = nil,
         databaseName: String? = nil) throws {
        guard let uri = LiveDatabase.uri else { throw HarnessError("MONGODB_URI is not set, and the test lacks .liveServer") }
        self.databaseName = databaseName ?? "poikit_test_serve_\(label)_\(ObjectId().hex.suffix(8))"
        let scratch = NSTemporaryDirectory() + "poi-serve-\(self.databaseName)"
        self.scratch = scratch
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        // deinit removes it once the server has started; an init that throws (a server that
        // refuses its arguments, as it should `--write-token ""`) never gets there.
        var started = false
        defer { if !started { try? FileManager.default.removeItem(atPath: scratch) } }
        uploads = scratch + "/uploads"
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        logPath = scratch + "/serve.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        database = MongoDatabase(connection: try MongoConnection(uri: uri), name: self.databaseName)

        process.executableURL = Self.binary
        process.arguments = ["serve", "--uri", serveURI ?? uri, "--db", self.databaseName, "--uploads", uploads, "--port", "0"] + extraArguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "POI_WRITE_TOKEN")
        env.merge(environment) { _, new in new }
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()

        let deadline = Date().addingTimeInterval(20)
        var found: Int?
        while Date() < deadline, found == nil, process.isRunning {
            if let log = try? String(contentsOfFile: logPath, encoding: .utf8),
               let range = log.range(of: "listening on http://127.0.0.1:") {
                found = Int(log[range.upperBound...].prefix(while: \.isNumber))
            } else {
                usleep(50_000)
            }
        }
        guard let found else {
            if process.isRunning { process.terminate() }
            throw HarnessError("poi serve did not start: \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
        }
        port = found
        started = true
    }

    /// SIGTERM, then the exit status (waits at most 20 s, then kills).
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(20)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        _ = try? database.drop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// Names in the uploads folder (staged files included: they start with a dot).
    var uploadedNames: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).sorted()
    }

    func count(_ collection: String, _ filter: BSONDocument = BSONDocument()) throws -> Int {
        try database.collection(collection).count(filter)
    }

    /// One request through curl. `body` goes from a file (binary-safe); `path` is sent as given.
    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                 timeout: Int = 60, base: String? = nil) throws -> HTTPResult {
        let id = UUID().uuidString
        let bodyOut = scratch + "/out-\(id)", headersOut = scratch + "/hdr-\(id)"
        defer { unlink(bodyOut); unlink(headersOut) }
        var args = ["-s", "-S", "--path-as-is", "-g", "-m", String(timeout), "-o", bodyOut, "-D", headersOut, "-w", "%{http_code}"]
        if method == "HEAD" { args += ["-I"] } else { args += ["-X", method] }
        // curl adds these unless told not to; the tests set what they mean to send.
        args += ["-H", "Expect:"]
        if headers["Content-Type"] == nil { args += ["-H", "Content-Type:"] }
        if headers["Accept"] == nil { args += ["-H", "Accept:"] }
        for (k, v) in headers { args += ["-H", "\(k): \(v)"] }
        var bodyFile: String?
        if let body {
            let f = scratch + "/in-\(id)"
            _ = FileManager.default.createFile(atPath: f, contents: Data(body))
            bodyFile = f
            args += ["--data-binary", "@" + f]
        }
        defer { if let bodyFile { unlink(bodyFile) } }
        args.append((base ?? self.base) + path)
        let status = Int(try runToEnd(curl, args).text) ?? 0
        var headerMap: [String: String] = [:]
        let raw = (try? String(contentsOfFile: headersOut, encoding: .utf8)) ?? ""
        for line in raw.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headerMap[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        // With -I curl writes the head where the body would go: a HEAD has no body to keep.
        let bytes = method == "HEAD" ? [] : FileManager.default.contents(atPath: bodyOut).map { [UInt8]($0) } ?? []
        return HTTPResult(status: status, headers: headerMap, body: bytes)
    }

    func get(_ path: String, headers: [String: String] = [:]) throws -> HTTPResult { try request("GET", path, headers: headers) }

    func postJSON(_ path: String, _ json: String, headers: [String: String] = [:]) throws -> HTTPResult {
        try request("POST", path, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: Array(json.utf8))
    }

    /// Raw bytes over a socket (requests curl will not send, such as a body cut short).
    func rawSocket(_ bytes: [UInt8], thenWait seconds: Double = 0.3, readReply: Bool = false) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket failed") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw HarnessError("connect failed") }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            sent += n
        }
        usleep(UInt32(seconds * 1_000_000))
        guard readReply else { return "" }
        var reply = [UInt8](repeating: 0, count: 65536)
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let n = recv(fd, &reply, reply.count, 0)
        return n > 0 ? String(decoding: reply[0..<n], as: UTF8.self) : ""
    }
}

/// `x` percent-encoded for a query string value.
func urlEncoded(_ s: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
}

/// Connections to `poi serve` (the free ports themselves: PoiTestSupport's `Loopback`).
extension Loopback {
    /// A blocking TCP connection to 127.0.0.1:`port`. `receiveBuffer`: a small SO_RCVBUF, so the
    /// kernel holds little of a download for a client that stops reading.
    static func connect(port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket failed") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw HarnessError("connect failed") }
        return fd
    }
}

let curl = URL(fileURLWithPath: "/usr/bin/curl")

/// Runs a program to its end: what it wrote to standard output (or, with `stderr`, to standard
/// error; the other stream is dropped) and its exit status.
func runToEnd(_ executable: URL, _ arguments: [String], stderr: Bool = false) throws -> (text: String, status: Int32) {
    let p = Process()
    p.executableURL = executable
    p.arguments = arguments
    let captured = Pipe()
    p.standardOutput = stderr ? FileHandle.nullDevice : captured
    p.standardError = stderr ? captured : FileHandle.nullDevice
    try p.run()
    let data = captured.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (String(decoding: data, as: UTF8.self), p.terminationStatus)
}

import Foundation
import PoiStore
import PoiTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy in front of the live database that can be told to stop answering: while
/// `stalled`, it keeps every connection open and accepts new ones but forwards nothing, which is
/// what a database paused with SIGSTOP looks like from the network (the kernel still accepts).
/// Plain sockets and threads in the test process (the live database is shared, so it cannot be
/// paused itself); every loop polls with a short timeout and checks `closed`, so nothing in it
/// outlives `close()` and no wait in the test depends on it answering.
final class StallingProxy: Sendable {
    struct Upstream: Sendable {
        var text: String  // "127.0.0.1:27017", as it appears in the URI
        var address: in_addr_t
        var port: UInt16
    }

    /// The live server as one IPv4 host:port, or nil (another kind of URI: the test is skipped).
    static let upstream: Upstream? = {
        guard let uri = LiveDatabase.uri, let connection = try? MongoConnection(uri: uri) else { return nil }
        let hosts = connection.hosts
        guard !hosts.contains(","), let colon = hosts.lastIndex(of: ":"),
              let port = UInt16(hosts[hosts.index(after: colon)...]), uri.contains(hosts) else { return nil }
        var host = String(hosts[..<colon])
        if host == "localhost" { host = "127.0.0.1" }
        let address = inet_addr(host)
        guard address != INADDR_NONE else { return nil }
        return Upstream(text: hosts, address: address, port: port)
    }()

    let port: Int
    private let listener: Int32
    private let upstream: Upstream
    private struct State { var stalled = false; var closed = false; var threads = 0 }
    private let state = Mutex(State())

    init(upstream: Upstream) throws {
        let (fd, port) = Loopback.bound()
        guard listen(fd, 128) == 0 else { Glibc.close(fd); throw HarnessError("listen failed") }
        listener = fd
        self.port = port
        self.upstream = upstream
        startThread { self.acceptLoop() }
    }

    var stalled: Bool {
        get { state.withLock { $0.stalled } }
        set { state.withLock { $0.stalled = newValue } }
    }

    /// Stops every thread (each notices within 50 ms; waits at most 5 s) and closes the listener.
    func close() {
        state.withLock { $0.closed = true }
        let deadline = Date().addingTimeInterval(5)
        while state.withLock({ $0.threads }) > 0 && Date() < deadline { usleep(10_000) }
        Glibc.close(listener)
    }

    private var closed: Bool { state.withLock { $0.closed } }

    private func startThread(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.threads += 1 }
        Thread {
            body()
            self.state.withLock { $0.threads -= 1 }
        }.start()
    }

    private func acceptLoop() {
        while !closed {
            var p = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            startThread { self.pump(client) }
        }
    }

    private func pump(_ client: Int32) {
        defer { Glibc.close(client) }
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard server >= 0 else { return }
        defer { Glibc.close(server) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = upstream.port.bigEndian
        addr.sin_addr.s_addr = upstream.address
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !closed {
            if stalled { usleep(20_000); continue }
            var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: server, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, 50) > 0 else { continue }
            for (index, from, to) in [(0, client, server), (1, server, client)] where fds[index].revents != 0 {
                let n = recv(from, &buffer, buffer.count, 0)
                if n <= 0 { return }
                var sent = 0
                while sent < n {
                    let w = buffer[sent..<n].withUnsafeBytes { send(to, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if w <= 0 { return }
                    sent += w
                }
            }
        }
    }
}

/// Finding 1 of the new-user trial: when the database stopped answering, every request and
/// `/healthz` hung for libmongoc's 300 s socket timeout.
@Suite("poi serve: a database that stops answering", .tags(.live, .process), .serialized, .liveServer)
struct StalledDatabaseTests {
    static func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = Date()
        let value = try body()
        return (value, Date().timeIntervalSince(start))
    }

    /// While the database is stalled: `/healthz` answers 503 after its own 2 s limit; data
    /// requests (more of them than the database threads) answer 503 with a JSON error after the
    /// query timeout (8 s) plus the margin (2 s); `GET /` and a download of a cached file answer
    /// without waiting for the database at all. When the database answers again, so does the
    /// server, without a restart.
    ///
    /// The query timeout is long so that the limits can be generous: on a machine loaded by a
    /// whole CI run, an answer that does not wait for the database can still take a few seconds,
    /// and "did not wait" is then told from "waited" by the 10 s the stalled requests take.
    @Test(.enabled(if: StallingProxy.upstream != nil, "the live server's URI is not one IPv4 host:port the proxy can front"))
    func stalledDatabaseAnswers503PromptlyAndRecovers() throws {
        let upstream = try #require(StallingProxy.upstream)
        let proxy = try StallingProxy(upstream: upstream)
        defer { proxy.close() }
        let uri = try #require(LiveDatabase.uri).replacingOccurrences(of: upstream.text, with: "127.0.0.1:\(proxy.port)")
        let s = try ServeHarness("stall", extraArguments: ["--query-timeout", "8"], serveURI: uri)
        defer { s.stop() }
        // Runs first: a failure while stalled must not leave SIGTERM waiting on the database.
        defer { proxy.stalled = false }

        let png = try ServeHarness.sample("brick.png")
        // The database is shared with the rest of a full test run, which can keep one write
        // waiting past the deadline: a 503 before the stall is tried again.
        var upload = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        for _ in 0..<3 where upload.status == 503 {
            upload = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        }
        try #require(upload.status == 201, "\(upload.text)")
        let id = try #require((upload.json as? [String: Any])?["_id"] as? String)
        #expect(try s.get("/files/\(id)").body == png)  // its files document is cached now
        #expect(try s.get("/locations", headers: ["Accept": "application/json"]).status == 200)
        #expect(try s.get("/healthz").status == 200)

        proxy.stalled = true
        // 20 data requests at once, more than the 16 database threads; curl gives up after 30 s.
        let outcomes = Outcomes()
        let group = DispatchGroup()
        for i in 0..<20 {
            group.enter()
            Thread {
                defer { group.leave() }
                let path = i % 2 == 0 ? "/locations" : "/locations/\(ObjectId().hex)"
                let (result, seconds) = Self.timed { try? s.request("GET", path, headers: ["Accept": "application/json"], timeout: 30) }
                outcomes.list.withLock { $0.append((result?.status ?? -1, result?.text ?? "", seconds)) }
            }.start()
        }
        usleep(500_000)

        let (home, homeSeconds) = try Self.timed { try s.request("GET", "/", timeout: 10) }
        #expect(home.status == 200)
        #expect(homeSeconds < 5, "GET / took \(homeSeconds) s while the database stalled")
        let (cached, cachedSeconds) = try Self.timed { try s.request("GET", "/files/\(id)", timeout: 10) }
        #expect(cached.status == 200 && cached.body == png)
        #expect(cachedSeconds < 5, "a cached download took \(cachedSeconds) s while the database stalled")
        let (health, healthSeconds) = try Self.timed { try s.request("GET", "/healthz", timeout: 15) }
        #expect(health.status == 503, "\(health.text)")
        #expect(health.text.contains("\"ok\":false") && health.text.contains("database:"), "\(health.text)")
        #expect(healthSeconds < 6, "/healthz took \(healthSeconds) s")

        #expect(group.wait(timeout: .now() + 40) == .success)
        let done = outcomes.list.withLock { $0 }
        #expect(done.count == 20)
        for outcome in done {
            #expect(outcome.status == 503, "\(outcome)")
            #expect(outcome.body.hasPrefix("{\"error\":\""), "\(outcome)")
            // 8 s query timeout + 2 s margin, with room for a loaded machine.
            #expect(outcome.seconds >= 9.5 && outcome.seconds < 25, "\(outcome)")
        }

        proxy.stalled = false
        let deadline = Date().addingTimeInterval(30)
        var recovered = false
        while !recovered && Date() < deadline {
            recovered = (try? s.request("GET", "/locations", headers: ["Accept": "application/json"], timeout: 10))?.status == 200
            if !recovered { usleep(250_000) }
        }
        #expect(recovered, "the server did not answer 200 within 30 s of the database answering again")
        #expect(try s.request("GET", "/healthz", timeout: 10).status == 200)
        #expect(try s.request("GET", "/files/\(id)/thumbnail", timeout: 10).status == 200)
    }
}

/// What each of the concurrent requests got (filled from their threads).
final class Outcomes: Sendable {
    let list = Mutex<[(status: Int, body: String, seconds: Double)]>([])
}

import NIOPosix
import PoiStore
import Synchronization

/// Blocking work on a thread pool that the caller stops waiting for at a deadline.
///
/// A libmongoc call cannot be interrupted: when the database stops answering (a paused
/// process, a peer that accepts and never replies) it holds its thread until libmongoc's own
/// socket timeout. The request need not wait that long: it is answered at the deadline, and the
/// call finishes (or fails) on its thread with nobody waiting. Work still queued at the deadline
/// is not started at all.
enum DeadlineRun {
    static func run<T: Sendable>(on pool: NIOThreadPool, within limit: Duration, timeout: any Error,
                                 _ body: @escaping @Sendable () throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + limit
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let answer = FirstAnswer(continuation)
            let timer = Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                // Cancelled: the work answered first.
                if !Task.isCancelled { answer.resume(.failure(timeout)) }
            }
            pool.submit { state in
                defer { timer.cancel() }
                guard case .active = state else {
                    answer.resume(.failure(APIError.unavailable("the server is shutting down")))
                    return
                }
                guard ContinuousClock.now < deadline else {
                    answer.resume(.failure(timeout))
                    return
                }
                answer.resume(Result { try body() })
            }
        }
    }
}

/// Resumes a continuation once, with whichever answer comes first.
private final class FirstAnswer<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, any Error>?>

    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = Mutex(continuation) }

    func resume(_ result: Result<T, any Error>) {
        let waiting = continuation.withLock { stored in
            let current = stored
            stored = nil
            return current
        }
        waiting?.resume(with: result)
    }
}

/// `/healthz`'s look at the database: a ping on a connection of its own, with short timeouts that
/// win over the URI's, on a thread of its own, so it answers within `limit` whether the database
/// is stalled or the data requests' pool is full. Concurrent checks share one ping: a load
/// balancer probing a stalled database never has more than one thread waiting on it.
final class HealthProbe: Sendable {
    let connection: MongoConnection
    let pool: NIOThreadPool
    let limit: Duration
    private let inFlight = Mutex<Task<String?, Never>?>(nil)

    init(connection: MongoConnection, pool: NIOThreadPool, limit: Duration) {
        self.connection = connection
        self.pool = pool
        self.limit = limit
    }

    /// nil when the database answered a ping in time, else why not.
    func problem() async -> String? {
        let task = inFlight.withLock { current -> Task<String?, Never> in
            if let current { return current }
            let fresh = Task { await self.pingOnce() }
            current = fresh
            return fresh
        }
        let result = await task.value
        inFlight.withLock { current in if current == task { current = nil } }
        return result
    }

    private func pingOnce() async -> String? {
        let connection = self.connection
        let seconds = limit.components.seconds
        do {
            try await DeadlineRun.run(on: pool, within: limit,
                                      timeout: APIError.unavailable("no answer to a ping within \(seconds) s")) {
                try connection.ping()
            }
            return nil
        } catch let error as APIError {
            return error.message
        } catch let error as StoreError {
            return error.description
        } catch {
            return String(describing: error)
        }
    }
}

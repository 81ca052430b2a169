import Foundation

extension MongoConnection {
    /// Runs `body` again while it fails with a transient error (`StoreError.isTransient`: network
    /// errors, the `RetryableWriteError` label, the not-primary and shutdown codes — what the
    /// drivers' retryable-writes specification retries), with backoff from 100 ms doubling to
    /// 2 s, until `retryForMS` is spent; then throws `.retried` with the last error and how long
    /// it tried. An election (5–15 s without a primary) or a dropped connection is ridden out;
    /// a server that is gone is reported once the bound is spent, never waited on for ever.
    ///
    /// Only for work that is idempotent, so that an attempt applied by the server whose reply was
    /// lost cannot be applied twice: callers write places by their unique `importKey` (an upsert
    /// finds the first attempt's document), files by their content digest (the same bytes are
    /// found, not stored again), GridFS chunks under their `files_id` and `n` (a unique index).
    /// `retries` counts the attempts after the first.
    public func retrying<R>(retries: inout Int, _ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        let started = ContinuousClock.now
        let deadline = started + .milliseconds(retryForMS)
        var backoff = 100
        var attempts = 1
        // After a "not primary" answer, libmongoc waits for a writable primary and may end with
        // a selection timeout: the election, not reachability, is what the report must name.
        var notPrimary: StoreError?
        while true {
            do {
                let result = try body()
                markReached()
                return result
            } catch {
                if case .server = error { markReached() }  // it answered, if only to refuse
                guard error.isTransient else { throw error }
                // Never reached at all: not an outage to ride out (see `hasBeenReached`).
                if case .unreachable = error, !hasBeenReached { throw error }
                if case .server(let code, _, _, _) = error, ServerErrorCode.notPrimary.contains(code) { notPrimary = error }
                let wait = Duration.milliseconds(backoff)
                guard ContinuousClock.now + wait < deadline else {
                    var last = error
                    if case .unreachable = error, let notPrimary { last = notPrimary }
                    if attempts == 1 { throw last }  // no retry was possible: the error as it is
                    let seconds = Int((ContinuousClock.now - started).components.seconds)
                    throw .retried(attempts: attempts, seconds: seconds, last: last)
                }
                usleep(UInt32(backoff) * 1000)
                backoff = min(backoff * 2, 2000)
                attempts += 1
                retries += 1
            }
        }
    }
}

import Foundation
import Synchronization

/// The one way a job reports progress: counts of work done, sent to the observer as
/// `JobProgress` at most every `interval` seconds, then once more, marked final, at the end.
/// Counts are of items finished, never of items started or read ahead, so 100 % appears only
/// when the work is done.
///
/// Two ways to count. Workers that finish items on many threads call `advance`, and the counter
/// keeps the count. A job that already counts in its summary (import, export, thumbnails) hands
/// its numbers over with `update` as it goes and `finish(items:images:fraction:seconds:)` at the
/// end, so the numbers shown are the summary's own.
final class ProgressCounter: Sendable {
    /// Reports closer together than this would redraw a terminal line faster than anyone can read
    /// it, and write a line each to a log; further apart, the display looks stuck.
    static let interval: TimeInterval = 0.2

    private struct State {
        var done = 0
        var images = 0
        var lastReport = Date.distantPast
    }

    private let total: Int?
    private let started: Date
    private let observer: JobObserver
    private let state = Mutex(State())

    /// `total`: items expected, when known in advance. `started`: when the job began, if before
    /// the counter was made (the rates and the ETA count from it).
    init(total: Int?, started: Date = Date(), observer: @escaping JobObserver) {
        self.total = total
        self.started = started
        self.observer = observer
    }

    /// Seconds since `started`.
    var seconds: Double { Date().timeIntervalSince(started) }

    /// One more item finished (`image`: it made an image, for the images-per-second rate).
    func advance(image: Bool = false) {
        let now = Date()
        let report: JobProgress? = state.withLock { s in
            s.done += 1
            if image { s.images += 1 }
            guard Self.isDue(&s, at: now) else { return nil }
            return JobProgress(items: s.done, total: total, images: s.images, seconds: now.timeIntervalSince(started))
        }
        if let report { observer(.progress(report)) }
    }

    /// The job's own counts so far: reported if the last report is `interval` old. `fraction`
    /// (the share done, for work whose total is not known) is worked out only for a report.
    func update(items: Int, images: Int, fraction: () -> Double? = { nil }) {
        let now = Date()
        let due = state.withLock { s in
            s.done = items
            s.images = images
            return Self.isDue(&s, at: now)
        }
        guard due else { return }
        observer(.progress(JobProgress(items: items, total: total, images: images, seconds: now.timeIntervalSince(started),
                                       fraction: fraction())))
    }

    /// The closing report of work counted with `advance`.
    func finish() {
        let (done, images) = state.withLock { ($0.done, $0.images) }
        finish(items: done, images: images)
    }

    /// The closing report, with the job's final counts. `seconds`: the job's own duration (its
    /// summary's), so the report and the summary agree; nil: since `started`.
    func finish(items: Int, images: Int, fraction: Double? = nil, seconds: Double? = nil) {
        state.withLock { s in
            s.done = items
            s.images = images
        }
        observer(.progress(JobProgress(items: items, total: total, images: images,
                                       seconds: seconds ?? Date().timeIntervalSince(started), fraction: fraction, isFinal: true)))
    }

    private static func isDue(_ s: inout State, at now: Date) -> Bool {
        guard now.timeIntervalSince(s.lastReport) >= interval else { return false }
        s.lastReport = now
        return true
    }
}

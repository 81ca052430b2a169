import Foundation
import Synchronization

/// Counts work done by many workers and reports it as `JobProgress` about every 200 ms, and once
/// more, marked final, at the end. Counts are of items finished, never of items started or read
/// ahead, so 100 % appears only when the work is done.
final class ProgressCounter: Sendable {
    private struct State {
        var done = 0
        var images = 0
        var lastReport = Date.distantPast
    }

    private let total: Int?
    private let started = Date()
    private let observer: JobObserver
    private let state = Mutex(State())

    init(total: Int?, observer: @escaping JobObserver) {
        self.total = total
        self.observer = observer
    }

    /// One more item finished (`image`: it made an image, for the images-per-second rate).
    func advance(image: Bool = false) {
        let report: JobProgress? = state.withLock { s in
            s.done += 1
            if image { s.images += 1 }
            let now = Date()
            guard now.timeIntervalSince(s.lastReport) >= 0.2 else { return nil }
            s.lastReport = now
            return JobProgress(items: s.done, total: total, images: s.images, seconds: now.timeIntervalSince(started))
        }
        if let report { observer(.progress(report)) }
    }

    /// The closing report.
    func finish() {
        var report = state.withLock { s in
            JobProgress(items: s.done, total: total, images: s.images, seconds: Date().timeIntervalSince(started))
        }
        report.isFinal = true
        observer(.progress(report))
    }
}

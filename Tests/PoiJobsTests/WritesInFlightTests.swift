import Foundation
import PoiStore
import PoiTestSupport
import Synchronization
import Testing
@testable import PoiJobs

/// `locations` in memory (`InMemoryPlaces`) whose every write waits until the job has sent the
/// next one, or until `patience` runs out: it shows whether the job keeps a second window at the
/// server while one is written, and how many at most, without relying on timing when it does.
///
/// A write is known by its window (`window(of:)`: the order of its first key, `k0`, `k2`, … with
/// two rows a window), not by when it arrives: the job's write threads may reach the server in
/// another order than they were started (a loaded machine schedules the second first), and a
/// write that took the first one's turn waited for a window the job could not send yet.
final class OverlapProbe: PlaceRepository {
    let places = InMemoryPlaces()
    /// The upsert calls the job will make; the last one has no next call to wait for.
    let calls: Int
    let patience: TimeInterval

    struct State {
        var started = 0
        var active = 0
        var mostActive = 0
        /// Calls that saw the next one start while they were still at work.
        var overlapped = 0
        /// The windows whose write has begun.
        var windowsStarted = Set<Int>()
        /// The names written for each key, in the order the writes came.
        var namesWritten: [String: [String]] = [:]
    }
    let state = Mutex(State())

    convenience init(calls: Int, patience: TimeInterval) { self.init(calls: calls, patience: patience, window: 0) }

    func prepare() throws(StoreError) { try places.prepare() }

    /// The window a write belongs to: keys `k<n>`, `window` rows a window; by arrival otherwise.
    let window: Int

    init(calls: Int, patience: TimeInterval, window: Int) {
        self.calls = calls
        self.patience = patience
        self.window = window
    }

    func upsert(_ items: [UpsertItem]) throws(StoreError) -> [UpsertOutcome] {
        let index = state.withLock { s in
            for item in items { s.namesWritten[item.key.stringValue ?? "", default: []].append(item.fields["name"]?.stringValue ?? "") }
            s.started += 1
            s.active += 1
            s.mostActive = max(s.mostActive, s.active)
            let first = items.compactMap { $0.key.stringValue.flatMap { Int($0.dropFirst()) } }.min()
            let index = first.map { $0 / max(1, window) } ?? s.started - 1
            s.windowsStarted.insert(index)
            return index
        }
        if index < calls - 1 {
            let deadline = Date().addingTimeInterval(patience)
            while Date() < deadline, !state.withLock({ $0.windowsStarted.contains(index + 1) }) { usleep(1_000) }
            if state.withLock({ $0.windowsStarted.contains(index + 1) }) { state.withLock { $0.overlapped += 1 } }
        }
        defer { state.withLock { $0.active -= 1 } }
        return try places.upsert(items)
    }

    func relinkThumbnail(imageId: ObjectId, thumbnailId: ObjectId) throws(StoreError) {
        try places.relinkThumbnail(imageId: imageId, thumbnailId: thumbnailId)
    }
}

@Suite(.tags(.unit)) struct WritesInFlightTests {
    typealias Fixture = ImportJobRepositoryTests.Fixture

    /// While the server writes one window, the job reads and prepares the next and
    /// sends it, so two windows are in flight; never more (memory stays flat).
    @Test func theNextWindowGoesToTheServerWhileOneIsWritten() throws {
        let rows = (0..<8).map { "k\($0),Place \($0),1.5,\(Double($0) + 0.25)," }
        let fx = try Fixture(rows: rows)
        defer { fx.remove() }
        let probe = OverlapProbe(calls: 4, patience: 30, window: 2)
        let summary = try ImportJob(options: fx.options { $0.batchSize = 2 }, places: probe, images: InMemoryImages())
            .run(files: [fx.csv])
        let state = probe.state.withLock { $0 }
        #expect(state.started == 4)
        #expect(state.overlapped == 3)
        #expect(state.mostActive == 2)
        #expect(summary.inserted == 8)
        #expect(Set(probe.places.places.keys) == Set((0..<8).map { "k\($0)" }))
    }

    /// With `--on-duplicate last`, only the last record of a key is ever written, even when the
    /// earlier one is in an earlier window: writing both made every rerun count the place as
    /// updated twice and move its `updated_at`, and the counts depended on
    /// where windows ended.
    @Test func onlyTheLastRecordOfAKeyIsWrittenWhateverTheWindows() throws {
        let fx = try Fixture(rows: ["a,First,1.5,2.5,", "b,B,1.5,3.5,", "c,C,1.5,4.5,", "a,Last,1.5,2.5,", "a,Last,1.5,2.5,"])
        defer { fx.remove() }
        for batchSize in [1, 2, 500] {
            let probe = OverlapProbe(calls: 0, patience: 0)
            let job = { try ImportJob(options: fx.options { $0.batchSize = batchSize; $0.onDuplicate = .last },
                                      places: probe, images: InMemoryImages()).run(files: [fx.csv]) }
            let first = try job()
            #expect(probe.state.withLock { $0.namesWritten["a"] } == ["Last"], "batch size \(batchSize)")
            #expect(probe.places.places["a"]?.fields["name"]?.stringValue == "Last")
            #expect([first.inserted, first.updated, first.unchanged, first.duplicates] == [Int]([3, 0, 1, 1]), "batch size \(batchSize)")
            let rerun = try job()
            #expect([rerun.inserted, rerun.updated, rerun.unchanged, rerun.duplicates] == [Int]([0, 0, 4, 1]), "batch size \(batchSize)")
        }
    }

    /// Keeping the last record reads the input twice, which standard input cannot be.
    @Test func lastWinsRefusesStandardInput() throws {
        let fx = try Fixture(rows: ["a,A,1.5,2.5,"])
        defer { fx.remove() }
        do {
            _ = try ImportJob(options: fx.options { $0.onDuplicate = .last; $0.rejectsPath = nil }, places: InMemoryPlaces(),
                              images: InMemoryImages()).run(files: ["-"])
            Issue.record("standard input was taken with --on-duplicate last")
        } catch {
            guard case .configuration(.lastWinsNeedsFiles(input: "-")) = error else { Issue.record("wrong error: \(error)"); return }
        }
    }

    /// A pipe (`<(cmd)`, a /dev/fd path; a FIFO alike) cannot be read twice either: refused by
    /// name, where the second read used to find it drained and call it an empty file (found
    /// trying `poi` as a new user). The pipe holds a whole CSV and its write end is closed, so a job that
    /// took it would read it and fail otherwise, never wait.
    @Test func lastWinsRefusesAPipeByName() throws {
        let fx = try Fixture(rows: ["a,A,1.5,2.5,"])
        defer { fx.remove() }
        for job in ["import", "convert"] {
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            defer { close(ends[0]) }
            let csv = Array("id,name,lat,lon\na,A,1.5,2.5\n".utf8)
            #expect(write(ends[1], csv, csv.count) == csv.count)
            close(ends[1])
            let pipePath = "/dev/fd/\(ends[0])"
            do {
                if job == "import" {
                    _ = try ImportJob(options: fx.options { $0.onDuplicate = .last; $0.rejectsPath = nil }, places: InMemoryPlaces(),
                                      images: InMemoryImages()).run(files: [pipePath])
                } else {
                    var options = ConvertOptions()
                    options.onDuplicate = .last
                    _ = try ConvertJob(input: pipePath, output: fx.dir.appendingPathComponent("out.geojson").path, options: options).run()
                }
                Issue.record("\(job) took a pipe with --on-duplicate last")
            } catch {
                #expect(error.description == "keeping the last record of each key reads the input twice, and \(pipePath) "
                        + "(a pipe or device) can be read only once", "\(job)")
            }
        }
    }

    /// A window whose write fails ends the job with that error, after the other window in
    /// flight has finished: nothing of the job still writes once `run` has returned.
    @Test func aFailedWindowEndsTheJobOnlyAfterTheOtherWriteFinished() throws {
        let rows = (0..<6).map { "k\($0),Place \($0),1.5,\(Double($0) + 0.25)," }
        let fx = try Fixture(rows: rows)
        defer { fx.remove() }
        let places = FailingSecondWindow()
        #expect(throws: JobError.self) {
            _ = try ImportJob(options: fx.options { $0.batchSize = 2 }, places: places, images: InMemoryImages()).run(files: [fx.csv])
        }
        #expect(places.state.withLock { $0.active } == 0)
    }
}

/// The first window's write fails after the second one has started; the second is slow.
final class FailingSecondWindow: PlaceRepository {
    struct State { var started = 0; var active = 0 }
    let state = Mutex(State())

    func prepare() throws(StoreError) {}

    func upsert(_ items: [UpsertItem]) throws(StoreError) -> [UpsertOutcome] {
        let index = state.withLock { $0.started += 1; $0.active += 1; return $0.started - 1 }
        defer { state.withLock { $0.active -= 1 } }
        if index == 0 {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, state.withLock({ $0.started }) < 2 { usleep(1_000) }
            throw StoreError.network(reason: "socket closed")
        }
        usleep(300_000)
        return items.map { _ in .inserted(id: .objectId(ObjectId())) }
    }

    func relinkThumbnail(imageId: ObjectId, thumbnailId: ObjectId) throws(StoreError) {}
}

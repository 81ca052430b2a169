import Dispatch
import Foundation
import PoiTestSupport
import Synchronization
import Testing
@testable import PoiImaging

/// The memory budget's admission rules, on the bookkeeping alone (no threads, no timing): who
/// runs after each arrival and each finish.
@Suite(.tags(.unit, .budget)) struct ThumbnailBudgetTests {
    @Test func startsWhatFitsAndLetsNoSmallerImageOvertakeALargerWaitingOne() {
        var q = BudgetQueue(capacity: 100)
        let a = q.arrive(60), b = q.arrive(30)
        #expect(q.runningTickets == [a, b] && q.reserved == 90)
        let c = q.arrive(50)  // 140 > 100: waits
        let d = q.arrive(10)  // would fit (100), but c is larger and waits first
        #expect(q.runningTickets == [a, b] && q.waitingTickets == [c, d])
        q.finish(b)           // 60 + 50 > 100: c still waits, and d behind it
        #expect(q.runningTickets == [a] && q.waitingTickets == [c, d] && q.reserved == 60)
        q.finish(a)           // both fit now: 50 + 10
        #expect(q.runningTickets == [c, d] && q.waitingTickets.isEmpty && q.reserved == 60)
        q.finish(c); q.finish(d)
        #expect(q.runningTickets.isEmpty && q.reserved == 0)
    }

    @Test func largestWaitingImageGoesFirstThenArrivalOrder() {
        var q = BudgetQueue(capacity: 100)
        let full = q.arrive(100)
        let t10 = q.arrive(10), t70 = q.arrive(70), t30 = q.arrive(30), t70b = q.arrive(70)
        #expect(q.runningTickets == [full])
        #expect(q.waitingTickets == [t70, t70b, t30, t10])
        q.finish(full)        // 70 starts; the second 70 does not fit and holds back 30 and 10
        #expect(q.runningTickets == [t70] && q.waitingTickets == [t70b, t30, t10])
        q.finish(t70)         // 70 + 30 = 100; 10 waits
        #expect(q.runningTickets == [t70b, t30] && q.waitingTickets == [t10] && q.reserved == 100)
        q.finish(t30)
        #expect(q.runningTickets == [t70b, t10] && q.waitingTickets.isEmpty && q.reserved == 80)
    }

    @Test func anImageOverTheWholeBudgetRunsAlone() {
        var q = BudgetQueue(capacity: 100)
        let small = q.arrive(30)
        let huge = q.arrive(500)   // waits for the running one to finish
        let tiny = q.arrive(1)     // behind the huge one
        #expect(q.runningTickets == [small] && q.waitingTickets == [huge, tiny])
        q.finish(small)
        #expect(q.runningTickets == [huge] && q.waitingTickets == [tiny] && q.reserved == 100)
        let another = q.arrive(1)  // nothing starts beside it
        #expect(q.runningTickets == [huge] && q.waitingTickets == [tiny, another])
        q.finish(huge)
        #expect(q.runningTickets == [tiny, another] && q.reserved == 2)

        // With nothing running it starts at once, and still alone.
        var idle = BudgetQueue(capacity: 100)
        let big = idle.arrive(1 << 40)
        let next = idle.arrive(0)
        #expect(idle.runningTickets == [big] && idle.waitingTickets == [next])
    }

    /// Idle decode arenas: their bytes count like reservations; an admitted image takes the one
    /// that keeps the most within its reservation (else the smallest, and its reservation grows
    /// to it), so it costs only what it needs beyond its arena; an image that would start but
    /// for the idle arenas says so (the budget then gives their memory back).
    @Test func idleArenasCountTheirBytesAndGoToTheImagesTheyFit() {
        var q = BudgetQueue(capacity: 100)
        let a = q.arrive(60), b = q.arrive(30)
        q.adopt(arena: 7, by: a)
        q.adopt(arena: 8, by: b)
        q.finish(a, arenaBytes: 55)
        q.finish(b, arenaBytes: 25)
        #expect(q.held == 80 && q.reserved == 0 && q.idleArenas == [7: 55, 8: 25] && q.isIdle)

        let c = q.arrive(50)             // would take arena 8 (25 fits within 50)
        // 0 + 80 - 25 + 50 = 105 > 100: it waits, and only on the idle arenas
        #expect(q.waitingTickets == [c] && q.waitsOnHeld)
        #expect(Set(q.dropIdleArenas()) == [7, 8])
        #expect(q.runningTickets == [c] && q.reserved == 50 && q.held == 0 && q.lent[c] == nil)
        q.adopt(arena: 9, by: c)
        q.finish(c, arenaBytes: 40)

        let d = q.arrive(45)             // arena 9 (40) fits: 0 + 40 - 40 + 45 = 45
        #expect(q.runningTickets == [d] && q.lent[d] == 9 && q.reserved == 45 && q.held == 0)
        q.finish(d, arenaBytes: 90)      // it grew past the estimate: idle, counted

        let e = q.arrive(10)             // only arena 9 (90), too big: taken, reservation grows to 90
        #expect(q.runningTickets == [e] && q.lent[e] == 9 && q.reserved == 90)
        let f = q.arrive(20)             // 90 + 20 > 100, whatever is idle: not waiting on held
        #expect(q.waitingTickets == [f] && !q.waitsOnHeld)
        q.finish(e, arenaBytes: 90)      // f takes arena 9 at 90: 0 + 90 - 90 + 90
        #expect(q.runningTickets == [f] && q.lent[f] == 9 && q.reserved == 90 && q.held == 0)
    }

    @Test func defaultIs100MBPlus60MBPerWorker() {
        #expect(ThumbnailBudget.defaultBytes(jobs: 1) == 160 << 20)
        #expect(ThumbnailBudget.defaultBytes(jobs: 2) == 220 << 20)
        #expect(ThumbnailBudget(bytes: 220 << 20).capacity == 220 << 20)
    }

    /// A PNG inflates in one libdeflate call whenever that fits in the budget at all: the bench's
    /// largest PNG (4096² RGB, 33 MB file) needs 36 MB plus 83 MB, more than half of 220 MB,
    /// and streamed through zlib under the old "two side by side" rule.
    @Test func aPNGInflatesWholeWheneverThatFitsTheBudget() {
        let budget = ThumbnailBudget(bytes: 220 << 20)
        #expect(budget.wholeInflateBytes(need: 36 << 20, whole: 83 << 20) == 83 << 20)
        #expect(budget.wholeInflateBytes(need: 137 << 20, whole: 83 << 20) == 83 << 20)
        #expect(budget.wholeInflateBytes(need: 138 << 20, whole: 83 << 20) == 0)
        #expect(budget.wholeInflateBytes(need: 36 << 20, whole: 0) == 0)
        // One job: 160 MB.
        #expect(ThumbnailBudget(bytes: 160 << 20).wholeInflateBytes(need: 36 << 20, whole: 83 << 20) == 83 << 20)
    }

    /// The blocking wrapper keeps the sum of what runs within the budget, with more threads
    /// asking than fit.
    @Test func reservationsOnManyThreadsStayWithinTheBudget() {
        let budget = ThumbnailBudget(bytes: 100)
        let inUse = Atomic<Int>(0), peak = Atomic<Int>(0), done = Atomic<Int>(0)
        let sizes = [60, 40, 70, 30, 90, 10, 50, 50, 100, 200, 20, 80]
        DispatchQueue.concurrentPerform(iterations: sizes.count) { i in
            budget.withReservation(sizes[i]) {
                let now = inUse.add(min(sizes[i], 100), ordering: .sequentiallyConsistent).newValue
                peak.max(now, ordering: .sequentiallyConsistent)
                usleep(2000)
                inUse.subtract(min(sizes[i], 100), ordering: .sequentiallyConsistent)
            }
            done.add(1, ordering: .relaxed)
        }
        #expect(done.load(ordering: .relaxed) == sizes.count)
        #expect(peak.load(ordering: .relaxed) <= 100)
        #expect(inUse.load(ordering: .relaxed) == 0)
    }
}

import Dispatch
import Glibc
import Synchronization
import Testing
import PoiTestSupport
@testable import PoiFormats

/// OrderedWork's promises, which the readers, convert and an import's writes lean on: pieces come
/// back in the order they were started whatever order they finish in, a serial line never runs
/// two at once, and `isFull` holds the caller back at the depth and at the weight.
@Suite(.tags(.unit)) struct OrderedWorkTests {
    @Test func piecesComeBackInStartOrderWhenALaterOneFinishesFirst() {
        var work = OrderedWork<Int>(label: "test.ordered", depth: 2, concurrent: true)
        let finished = Mutex<[Int]>([])
        let secondDone = DispatchSemaphore(value: 0)
        // The first piece waits until the second has finished: it can only end last. The timeout
        // keeps a broken line from hanging the run; it then shows as a wrong finishing order.
        work.start {
            _ = secondDone.wait(timeout: .now() + 10)
            finished.withLock { $0.append(0) }
            return 0
        }
        work.start {
            finished.withLock { $0.append(1) }
            secondDone.signal()
            return 1
        }
        #expect(work.next() == 0)
        #expect(work.next() == 1)
        #expect(work.next() == nil)
        #expect(finished.withLock { $0 } == [1, 0])
    }

    @Test func aSerialLineRunsOnePieceAtATimeInOrder() {
        var work = OrderedWork<Int>(label: "test.serial", depth: 3, concurrent: false)
        let running = Atomic<Int>(0)
        let mostAtOnce = Atomic<Int>(0)
        let finished = Mutex<[Int]>([])
        for piece in 0..<3 {
            work.start {
                let now = running.add(1, ordering: .sequentiallyConsistent).newValue
                mostAtOnce.max(now, ordering: .sequentiallyConsistent)
                usleep(20_000)
                finished.withLock { $0.append(piece) }
                running.subtract(1, ordering: .sequentiallyConsistent)
                return piece * 10
            }
        }
        #expect(work.isFull)
        #expect([work.next(), work.next(), work.next()] == [0, 10, 20])
        #expect(mostAtOnce.load(ordering: .sequentiallyConsistent) == 1)
        #expect(finished.withLock { $0 } == [0, 1, 2])
    }

    @Test func fullAtTheDepthAndAtTheWeightAndFreeAgainAfterNext() {
        var byDepth = OrderedWork<String>(label: "test.depth", depth: 2, concurrent: true)
        #expect(byDepth.isEmpty && !byDepth.isFull)
        byDepth.start { "a" }
        #expect(!byDepth.isFull && byDepth.count == 1)
        byDepth.start { "b" }
        #expect(byDepth.isFull && byDepth.count == 2)
        #expect(byDepth.next() == "a")
        #expect(!byDepth.isFull && byDepth.count == 1)
        #expect(byDepth.next() == "b")
        #expect(byDepth.isEmpty)

        var byWeight = OrderedWork<Int>(label: "test.weight", depth: 8, maxWeight: 100, concurrent: true)
        byWeight.start(weight: 60) { 1 }
        #expect(!byWeight.isFull)
        byWeight.start(weight: 40) { 2 }
        #expect(byWeight.isFull, "60 + 40 reaches the weight of 100 with 2 of 8 pieces in flight")
        #expect(byWeight.next() == 1)
        #expect(!byWeight.isFull, "the first piece's 60 is given back when it is taken")
        // One piece heavier than the whole allowance still runs, alone.
        #expect(byWeight.next() == 2)
        byWeight.start(weight: 500) { 3 }
        #expect(byWeight.isFull && byWeight.count == 1)
        #expect(byWeight.next() == 3)
        #expect(!byWeight.isFull && byWeight.isEmpty)
    }
}

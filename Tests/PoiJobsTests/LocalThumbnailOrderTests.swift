import PoiTestSupport
import Testing
@testable import PoiJobs

/// `poi thumb` hands its workers the largest files first: a big photo met last would
/// run alone at the end. Inputs sharing an output name stay one group, in the order given.
@Suite(.tags(.unit)) struct LocalThumbnailOrderTests {
    @Test func groupsGoLargestFileFirstAndTiesKeepTheirOrder() {
        let files = ["a.jpg", "b.png", "c.jpg", "b.jpg", "d.png", "e.png"]
        let sizes = [10, 5, 40, 60, 40, 0]
        let groups = LocalThumbnailJob.nameGroups(files)
        #expect(groups == [[0], [1, 3], [2], [4], [5]])
        // b's group holds the largest file (60); c and d tie at 40 and keep their order.
        #expect(LocalThumbnailJob.largestFirst(groups, sizes: sizes) == [1, 2, 3, 0, 4])
    }

    @Test func equalSizesKeepTheOrderGiven() {
        let groups = [[0], [1], [2], [3]]
        #expect(LocalThumbnailJob.largestFirst(groups, sizes: [7, 7, 7, 7]) == [0, 1, 2, 3])
        #expect(LocalThumbnailJob.largestFirst([], sizes: []) == [])
    }
}

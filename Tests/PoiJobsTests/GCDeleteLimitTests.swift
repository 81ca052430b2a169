import PoiJobs
import PoiTestSupport
import Testing

/// The arithmetic behind `poi gc --delete`'s refusal (the end-to-end case is in
/// PoiCLITests/GCCommandTests.swift).
@Suite(.tags(.unit)) struct GCDeleteLimitTests {
    @Test func standardAllowsTenPercentAndAtLeastTen() {
        #expect(GCDeleteLimit.standard == .share(percent: 10, minimum: 10))
        #expect(GCDeleteLimit.standard.allowance(stored: 0) == 10)
        #expect(GCDeleteLimit.standard.allowance(stored: 40) == 10)
        #expect(GCDeleteLimit.standard.allowance(stored: 109) == 10)
        #expect(GCDeleteLimit.standard.allowance(stored: 830) == 83)
        #expect(GCDeleteLimit.items(19).allowance(stored: 40) == 19)
        #expect(GCDeleteLimit.unlimited.allowance(stored: 40) == Int.max)
    }

    @Test func refusalPercentIsRounded() {
        #expect(GCRefusal(wouldDelete: 812, stored: 830, allowed: 83, bytesWithoutDocument: 812).percent == 98)
        #expect(GCRefusal(wouldDelete: 20, stored: 40, allowed: 10, bytesWithoutDocument: 20).percent == 50)
        #expect(GCRefusal(wouldDelete: 0, stored: 0, allowed: 10, bytesWithoutDocument: 0).percent == 0)
    }
}

import Testing
import PoiTestSupport
@testable import PoiFormats

/// The core count from the cgroup files' text, as a container or a systemd unit writes them: a
/// quota wins over the online cores, rounded up to whole cores, and never exceeds them.
@Suite(.tags(.unit)) struct ProcessorCoresTests {
    @Test func cgroup2CPUMax() {
        #expect(ProcessorCores.cgroup2Quota("max 100000") == nil)
        #expect(ProcessorCores.cgroup2Quota("200000 100000") == 2)
        #expect(ProcessorCores.cgroup2Quota("200000 100000\n") == 2)
        #expect(ProcessorCores.cgroup2Quota("150000 100000") == 2)
        #expect(ProcessorCores.cgroup2Quota("75000 100000") == 1)
        #expect(ProcessorCores.cgroup2Quota("400000 50000") == 8)
        #expect(ProcessorCores.cgroup2Quota("") == nil)
        #expect(ProcessorCores.cgroup2Quota("garbage") == nil)
    }

    @Test func cgroup1CFSQuota() {
        #expect(ProcessorCores.cgroup1Quota(quota: "-1", period: "100000") == nil)
        #expect(ProcessorCores.cgroup1Quota(quota: "300000\n", period: "100000\n") == 3)
        #expect(ProcessorCores.cgroup1Quota(quota: "50000", period: "100000") == 1)
        #expect(ProcessorCores.cgroup1Quota(quota: "100000", period: nil) == nil)
        #expect(ProcessorCores.cgroup1Quota(quota: nil, period: nil) == nil)
    }

    @Test func decided() {
        // A quota below the online cores is the count; above them, the online cores are.
        #expect(ProcessorCores.decide(cpuMax: "200000 100000", cfsQuota: nil, cfsPeriod: nil, online: 32) == 2)
        #expect(ProcessorCores.decide(cpuMax: "800000 100000", cfsQuota: nil, cfsPeriod: nil, online: 4) == 4)
        // No quota: the online cores.
        #expect(ProcessorCores.decide(cpuMax: "max 100000", cfsQuota: nil, cfsPeriod: nil, online: 16) == 16)
        #expect(ProcessorCores.decide(cpuMax: nil, cfsQuota: nil, cfsPeriod: nil, online: 6) == 6)
        // cgroup v1 when there is no v2 file.
        #expect(ProcessorCores.decide(cpuMax: nil, cfsQuota: "150000", cfsPeriod: "100000", online: 8) == 2)
        #expect(ProcessorCores.decide(cpuMax: nil, cfsQuota: "-1", cfsPeriod: "100000", online: 8) == 8)
        // Never below one.
        #expect(ProcessorCores.decide(cpuMax: nil, cfsQuota: nil, cfsPeriod: nil, online: 0) == 1)
        #expect(ProcessorCores.available >= 1)
    }
}

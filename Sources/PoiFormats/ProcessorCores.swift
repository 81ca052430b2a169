#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many cores this process may keep busy, decided once for the whole process, so the readers'
/// workers, `poi convert`'s preparation line, the thumbnail jobs and the server's imaging pool
/// all size themselves by the same number.
///
/// In a container (`docker run --cpus 2`) or a systemd unit with `CPUQuota=`, the machine's
/// online cores are not what the process gets: the control group's CPU quota is. Sized by the
/// online cores, a 2-core quota on a 32-core host would start 32 workers that take turns on 2
/// cores' worth of time. So the quota is read first, as swift-nio's `System.coreCount` does:
/// cgroup v2's `cpu.max`, else cgroup v1's `cpu.cfs_quota_us` / `cpu.cfs_period_us`, rounded up
/// to whole cores. Without a quota (or the files), the online cores; never more than those.
/// Lives in PoiFormats, the lowest module every user of it may import (PoiJobs, PoiServer, poi).
public enum ProcessorCores {
    /// The cores this process may use: at least 1.
    public static let available: Int = decide(cpuMax: firstLine(of: "/sys/fs/cgroup/cpu.max"),
                                              cfsQuota: firstLine(of: "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
                                              cfsPeriod: firstLine(of: "/sys/fs/cgroup/cpu/cpu.cfs_period_us"),
                                              online: onlineCores())

    /// The count from the cgroup files' text (nil: no such file) and the online cores: the v2
    /// quota, else the v1 quota, else `online`, never more than `online`, at least 1.
    static func decide(cpuMax: String?, cfsQuota: String?, cfsPeriod: String?, online: Int) -> Int {
        let quota = cpuMax.flatMap(cgroup2Quota) ?? cgroup1Quota(quota: cfsQuota, period: cfsPeriod)
        return max(1, min(online, quota ?? online))
    }

    /// cgroup v2 `cpu.max`: "QUOTA PERIOD" in microseconds ("200000 100000": 2 cores), or
    /// "max PERIOD" for no quota (nil). A fraction of a core counts as a whole one.
    static func cgroup2Quota(_ text: String) -> Int? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, let quota = Int(parts[0]), let period = Int(trimmed(parts[1])),
              quota > 0, period > 0 else { return nil }
        return (quota - 1 + period) / period
    }

    /// cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`, in microseconds; a quota of -1 is
    /// none (nil). A fraction of a core counts as a whole one.
    static func cgroup1Quota(quota: String?, period: String?) -> Int? {
        guard let quota = quota.flatMap({ Int(trimmed($0[...])) }), quota > 0,
              let period = period.flatMap({ Int(trimmed($0[...])) }), period > 0 else { return nil }
        return (quota - 1 + period) / period
    }

    private static func trimmed(_ s: Substring) -> Substring {
        var s = s
        while let last = s.last, last == "\n" || last == " " || last == "\r" { s.removeLast() }
        return s
    }

    private static func onlineCores() -> Int {
        #if canImport(Glibc) || canImport(Darwin)
        return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        return 2
        #endif
    }

    /// The first line of a small file, nil when it cannot be read (no cgroup, another platform).
    private static func firstLine(of path: String) -> String? {
        #if canImport(Glibc)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 256)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let text = bytes[..<n]
        return String(decoding: text.prefix { $0 != 0x0A }, as: UTF8.self)
        #else
        return nil
        #endif
    }
}

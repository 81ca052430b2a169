import Foundation
import PoiFiles
import PoiImaging
import Synchronization

public struct LocalThumbnailOptions: Sendable {
    public var spec = ThumbnailSpec.default
    public var decode = DecodeOptions()
    public var jobs = 1
    /// Bytes the image work may reserve at once (`ThumbnailBudget`); nil: 100 MB + 60 MB per job.
    public var memory: Int?
    public var memoryBytes: Int { memory ?? ThumbnailBudget.defaultBytes(jobs: jobs) }
    /// Inputs larger than this are refused before reading (no photo is anywhere near it).
    public var maxInputBytes = 512 << 20
    public init() {}
}

/// What `poi thumb` did, input by input (in the order given) — also its `--json` summary.
public struct LocalThumbnailSummary: Sendable, Encodable, Equatable {
    public struct Entry: Sendable, Encodable, Equatable {
        public var input: String
        public var output: String?
        public var width: Int?
        public var height: Int?
        public var contentType: String?
        public var bytes: Int?
        /// Why no thumbnail was written for this input.
        public var error: String?
        /// Written, but not as asked: the embedded ICC profile could not be used, so the colours
        /// are those of an untagged image (`ImageInfo.colorWarning`).
        public var warning: String?
        /// This input is the same file as an earlier one (a name given twice, a link): it was
        /// thumbnailed once, and this entry repeats that result.
        public var sameAs: String?
    }

    public var spec: String
    public var written = 0
    public var failed = 0
    /// Thumbnails written with a `warning`.
    public var warnings = 0
    public var seconds = 0.0
    public var files: [Entry] = []
}

/// `poi thumb`: thumbnails of local files into one folder, no database (like vipsthumbnail).
///
/// Each input is read whole, thumbnailed (PoiImaging, within the job's `ThumbnailBudget`) and
/// written as `<output>/<input name without extension><format's extension>` through
/// `AtomicFile`, unsynced: these are regenerable outputs, and vipsthumbnail does not sync either.
/// Inputs run on the shared `WorkerPool`, so at most `jobs` images are in memory at once, and their
/// decodes together stay within `options.memoryBytes`.
///
/// Output names: a name belongs to the first input (in the order given) that makes a thumbnail
/// under it. Every input is decoded, so a broken file is reported as broken and never takes a
/// good one's name; a later good one is reported as a name collision. Nothing is silently
/// overwritten, and no input is ever replaced by a thumbnail (same device and inode, links included).
public struct LocalThumbnailJob: Sendable {
    public let files: [String]
    public let outputFolder: String
    public let options: LocalThumbnailOptions
    private let observer: JobObserver

    public init(files: [String], outputFolder: String, options: LocalThumbnailOptions,
                observer: @escaping JobObserver = { _ in }) {
        self.files = files
        self.outputFolder = outputFolder
        self.options = options
        self.observer = observer
    }

    public func run() throws(JobError) -> LocalThumbnailSummary {
        let started = ContinuousClock.now
        do {
            try FileManager.default.createDirectory(atPath: outputFolder, withIntermediateDirectories: true)
        } catch {
            throw .output(path: outputFolder, reason: "cannot create the output folder: \((error as NSError).localizedDescription)")
        }
        // Temporary files of a killed earlier run into this folder; one sweep, not one per output.
        AtomicFile.removeStaleTemporaries(inFolder: outputFolder)
        // The same file given again (`a.jpg a.jpg`, `*.jpg` plus a link) is thumbnailed once, as
        // `cp a a dir` copies once: it is no name clash.
        var firstOf: [FileIdentity: Int] = [:]
        var repeatOf: [Int: Int] = [:]
        for (i, file) in files.enumerated() {
            guard let id = FileIdentity(path: file) else { continue }
            if let first = firstOf[id] { repeatOf[i] = first } else { firstOf[id] = i }
        }
        let groups = Self.nameGroups(files, skipping: Set(repeatOf.keys))
        let inputs = Set(firstOf.keys)
        let budget = ThumbnailBudget(bytes: options.memoryBytes)
        // One read buffer per worker at a time, kept from file to file: a run of
        // photos reuses pages already mapped. At most `jobs` of them, each the largest file read.
        let buffers = Mutex<[ReusableBytes]>([])
        let done = ProgressCounter(total: files.count - repeatOf.count, observer: observer)
        // One work item per output name: inputs sharing a name are tried in the order given, and
        // the first one that makes a thumbnail gets the name, so the result does not depend on
        // which worker finishes first, and a broken file never takes a good one's name.
        // Largest files first (longest-processing-time order): a big photo met last runs alone
        // while the other workers sit idle. Results keep the input order. Measured on the
        // bench-images PNGs: 0.68 -> 0.66 s, and the peak no longer depends on which two big
        // images happen to meet (226 MB every run, against 228 or 264 MB in the given order).
        let order = Self.largestFirst(groups, sizes: files.map { WholeFile.size(of: $0) ?? 0 })
        let results = WorkerPool.map(count: groups.count, jobs: options.jobs) { [self] k in
            let g = order[k]
            var owner: Int?
            return groups[g].map { i in
                let buffer = buffers.withLock { $0.popLast() } ?? ReusableBytes()
                defer { buffers.withLock { $0.append(buffer) } }
                let entry = thumbnail(i, owner: &owner, inputs: inputs, budget: budget, buffer: buffer)
                done.advance(image: entry.error == nil)
                return (i, entry)
            }
        }
        var entries = files.map { LocalThumbnailSummary.Entry(input: $0) }
        for (i, entry) in results.joined() { entries[i] = entry }
        for (i, first) in repeatOf {
            entries[i] = entries[first]
            entries[i].input = files[i]
            entries[i].sameAs = files[first]
        }
        var summary = LocalThumbnailSummary(spec: options.spec.canonical)
        summary.files = entries
        let once = entries.filter { $0.sameAs == nil }
        summary.written = once.count { $0.error == nil }
        summary.failed = once.count - summary.written
        summary.warnings = once.count { $0.warning != nil }
        summary.seconds = Self.seconds(ContinuousClock.now - started)
        done.finish()
        return summary
    }

    /// Group indices, the group with the largest file first (ties: in the order given).
    static func largestFirst(_ groups: [[Int]], sizes: [Int]) -> [Int] {
        let largest = groups.map { $0.map { sizes[$0] }.max() ?? 0 }
        return groups.indices.sorted { (largest[$0], $1) > (largest[$1], $0) }
    }

    /// The inputs by output name (their name without extension), each group in the order given,
    /// the groups in the order of their first input.
    static func nameGroups(_ files: [String], skipping: Set<Int> = []) -> [[Int]] {
        var groupOf: [String: Int] = [:]
        var groups: [[Int]] = []
        for (i, file) in files.enumerated() where !skipping.contains(i) {
            let stem = FilePaths.stem(of: file)
            if let g = groupOf[stem] { groups[g].append(i) } else {
                groupOf[stem] = groups.count
                groups.append([i])
            }
        }
        return groups
    }

    /// `owner`: the input of this name's group that wrote its thumbnail, once one has.
    private func thumbnail(_ i: Int, owner: inout Int?, inputs: Set<FileIdentity>, budget: ThumbnailBudget,
                           buffer: ReusableBytes) -> LocalThumbnailSummary.Entry {
        let file = files[i]
        var entry = LocalThumbnailSummary.Entry(input: file)
        do { try WholeFile.read(file, limit: options.maxInputBytes, into: buffer) } catch {
            entry.error = error.reason
            return entry
        }
        let thumb: Thumbnail
        do {
            thumb = try budget.make(from: buffer.bytes, spec: options.spec, options: options.decode, residentBytes: buffer.capacity)
        } catch {
            entry.error = error.description
            return entry
        }
        if let owner {
            entry.error = "output name '\(FilePaths.stem(of: file))' is already used by \(files[owner])"
            return entry
        }
        let output = FilePaths.join(outputFolder, FilePaths.stem(of: file) + thumb.format.fileExtension)
        if let target = FileIdentity(path: output), inputs.contains(target) {
            entry.error = "the thumbnail would replace an input; choose another output folder"
            return entry
        }
        do { try AtomicFile.write(thumb.data, to: output, durability: .unsynced, removingStale: false) } catch {
            entry.error = error.description
            return entry
        }
        owner = i
        entry.output = output
        entry.width = thumb.width
        entry.height = thumb.height
        entry.contentType = thumb.contentType
        entry.bytes = thumb.data.count
        entry.warning = thumb.source.colorWarning.map { $0 + " (thumbnail made as if untagged)" }
        return entry
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

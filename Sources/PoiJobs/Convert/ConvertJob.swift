import Foundation
import PoiFiles
import PoiFormats
import PoiModel

public struct ConvertOptions: Sendable {
    public var read = ReadOptions()
    public var style = GeoJSONWriter<FileDescriptorSink>.Style.featureCollection
    /// Decimals of coordinates, 0...15.
    /// Decimals coordinates are rounded to; nil: exact, as stored.
    public var precision: Int? = nil
    /// gzip the output (still temp + rename for a file).
    public var gzip = false
    /// A record whose key an earlier record had: the import's rule (`KeyRule`).
    public var onDuplicate = DuplicatePolicy.reject
    public init() {}
}

/// What `poi convert` did (also its `--json` summary).
public struct ConvertSummary: Sendable, Encodable, Equatable {
    public var input: String
    /// nil: standard output.
    public var output: String?
    public var features = 0
    public var rejected = 0
    /// Records not written because an earlier (or, with `last`, a later) record of their key was:
    /// exact copies, and duplicates settled by `--on-duplicate first`/`last`.
    public var unchanged = 0
    public var duplicates = 0
    public var seconds = 0.0
    /// Members of a zip input that are not dumps (a README…), not converted.
    public var skippedMembers: [SkippedMember] = []
}

/// `poi convert`: a dump in (CSV or GeoJSON, read and validated exactly as the import reads it),
/// RFC 7946 GeoJSON (or an RFC 8142 sequence) out, no database.
///
/// A file output goes through `AtomicFile`: the old file stays until the new one is complete, a
/// device or FIFO is written in place, and the input itself is never an output.
public struct ConvertJob {
    public let input: String
    public let output: String?
    public let options: ConvertOptions
    private let observer: JobObserver

    /// `output` nil writes to standard output.
    public init(input: String, output: String?, options: ConvertOptions, observer: @escaping JobObserver = { _ in }) {
        self.input = input
        self.output = output
        self.options = options
        self.observer = observer
    }

    public func run() throws(JobError) -> ConvertSummary {
        let started = Date()
        var summary = ConvertSummary(input: input, output: output)
        // A zip archive: its dump members in name order, into one output.
        let inputs: [DumpInput]
        do { (inputs, summary.skippedMembers) = try DumpInput.expand(input) } catch { throw .input(error) }
        // One key once, as the import writes it: with `last`, a first read finds each key's last
        // record (standard input cannot be read twice).
        var keys = KeyRule(policy: options.onDuplicate)
        if options.onDuplicate == .last {
            if FilePaths.isReadOnce(input) { throw .configuration(.lastWinsNeedsFiles(input: input)) }
            keys.lastRecords = try KeyRule.lastRecords(of: inputs, options: options.read)
        }
        // The first reader is opened before the output, so an unreadable input leaves it alone.
        var reader: PlaceReader?
        if let first = inputs.first {
            do { reader = try first.reader(options: RejectsLocation.readOptions(options.read, for: first)) } catch { throw .input(error) }
        }
        let file: AtomicFile?
        do { file = try output.map { (path) throws(FileError) in try AtomicFile(path: path, refusing: [input]) } } catch {
            throw .file(error)
        }
        let name = output ?? "stdout"
        // What a failed write names ("-": "cannot write to standard output").
        let shownOutput = output ?? "-"
        // A new file is fsync'd when complete: its pages go to disk as it grows.
        let sink = FileDescriptorSink(fd: file?.fd ?? 1, name: name, gzip: options.gzip,
                                      writesBackAhead: file?.temporaryPath != nil)
        var writer = GeoJSONWriter(sink: sink,
                                   style: options.style, precision: options.precision)
        do throws(JobError) {
            // Input that stops being readable midway: the places before it go out on standard
            // output in a closed collection, as `gzip -dc` writes what it could; a file keeps
            // what was there (see JobError.inputCutShort).
            func cutShort(_ error: FormatError) throws(JobError) -> Never {
                if file == nil {
                    do { try writer.finish() } catch { throw .output(path: shownOutput, reason: error.reasonWithoutFile) }
                }
                throw .inputCutShort(error, placesWritten: writer.featureCount, output: output)
            }
            // Features are encoded and records fingerprinted a batch at a time on the other cores
            // (`PreparedRecords`): for CSV by the reader's workers as they convert the records
            // (`RecordPreparer`), for GeoJSON on a `PreparationLine` while this thread reads
            // ahead. This thread judges and writes each batch in input order.
            var line = PreparationLine(cores: ProcessorCores.available)
            // Batches come from, and go back to, one pool.
            let preparer = RecordPreparer(precision: options.precision)
            func commit(_ batch: PreparedRecords, fileIndex: Int) throws(JobError) {
                // The key table's entries are loaded a group of places at a time, just before
                // they are looked up (`SeenKeys.warm`).
                let fingerprints = batch.keyFingerprints, group = 32
                var placeIndex = 0
                try batch.forEachRecord { (record, feature) throws(JobError) in
                    switch record {
                    case .place(let prepared, let source, let keySource):
                        if placeIndex % group == 0 {
                            keys.warm(fingerprints[placeIndex..<min(placeIndex + group, fingerprints.count)])
                        }
                        placeIndex += 1
                        switch try keys.judge(prepared, source: source, keySource: keySource, fileIndex: fileIndex) {
                        case .keep: break
                        case .unchanged: summary.unchanged += 1; return
                        case .duplicate: summary.duplicates += 1; return
                        case .reject(let reject):
                            summary.rejected += 1
                            observer(.rejected(reject))
                            return
                        }
                        do throws(FormatError) { try writer.write(encoded: feature) } catch {
                            throw .output(path: shownOutput, reason: error.reasonWithoutFile)
                        }
                    case .reject(let reject):
                        summary.rejected += 1
                        observer(.rejected(reject))
                    }
                }
                preparer.recycle(batch)
            }
            for (index, input) in inputs.enumerated() {
                let current: PlaceReader
                if index == 0, let reader { current = reader } else {
                    do { current = try input.reader(options: RejectsLocation.readOptions(options.read, for: input)) } catch { try cutShort(error) }
                }
                reader = nil
                let fileIndex = keys.beginFile(input.name, format: current.format)
                var readFailure: FormatError?
                if current.preparesBatches {
                    // CSV: each batch comes prepared by the reader's worker that converted it.
                    while true {
                        let batch: PreparedRecords?
                        do { batch = try current.nextBatch(preparedBy: preparer) } catch { readFailure = error; break }
                        guard let batch else { break }
                        try commit(batch, fileIndex: fileIndex)
                    }
                } else {
                    var ended = false
                    while !ended {
                        let batch = preparer.makeBatch()
                        while !batch.isFull {
                            let next: ReadItem?
                            do { next = try current.next() } catch { readFailure = error; ended = true; break }
                            guard let item = consume next else { ended = true; break }
                            batch.append(consume item)
                        }
                        if batch.isEmpty { preparer.recycle(batch) } else { line.start(batch) }
                        while line.isFull || (ended && !line.isEmpty), let prepared = line.next() {
                            try commit(prepared, fileIndex: fileIndex)
                        }
                    }
                }
                // The places read before the failure are written; then it ends the output.
                if let readFailure { try cutShort(readFailure) }
                for note in current.notes { observer(.note(note)) }
            }
            try keys.checkLastRecordsKept(files: input)
            do { try writer.finish() } catch { throw .output(path: shownOutput, reason: error.reasonWithoutFile) }
            do { try file?.commit() } catch { throw .file(error) }
        } catch {
            file?.abandon()
            throw error
        }
        summary.features = writer.featureCount
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }
}

import PoiFormats
import PoiModel

/// One file's verdict in `poi check`.
public struct CheckFileResult: Sendable, Encodable, Equatable {
    public var file: String
    /// "csv" or "geojson"; nil when the file could not be read at all.
    public var format: String?
    public var valid = 0
    public var rejected = 0
    /// Why the file could not be read (missing, empty, no name/latitude/longitude column, a read
    /// error midway: the counts are those of the records before it).
    public var error: String?
    /// The same, as the reader reported it: a front end adds its hints from it (not encoded).
    public var failure: FormatError?

    private enum CodingKeys: String, CodingKey { case file, format, valid, rejected, error }
}

/// What `poi check` found over all its files.
public struct CheckSummary: Sendable, Encodable, Equatable {
    public var files: [CheckFileResult] = []
    public var valid = 0
    public var rejected = 0
    /// Files that could not be read to the end.
    public var unreadable = 0
    /// Members of zip archives that are not dumps (a README…), not read.
    public var skippedMembers: [SkippedMember] = []
    /// Rejects files among several inputs, not checked (the import skips them too).
    public var skippedRejectsFiles: [String] = []
    /// Valid records that are exact copies of an earlier record of their key (the import writes
    /// them once), and other records of a key settled by `--on-duplicate first`/`last`.
    public var unchanged = 0
    public var duplicates = 0
}

/// `poi check`: reads and validates dumps exactly as the import would, without a database:
/// the same readers, the same rejects-file rules and the same key rule (`KeyRule`: a key once
/// per run, across files). Rejects go to the observer in input order, as they are found, so
/// memory stays flat however many there are (the key table is bounded, see `SeenKeys`).
public struct CheckJob {
    public let files: [String]
    public let options: ReadOptions
    public let onDuplicate: DuplicatePolicy
    private let observer: JobObserver

    public init(files: [String], options: ReadOptions, onDuplicate: DuplicatePolicy = .reject,
                observer: @escaping JobObserver = { _ in }) {
        self.files = files
        self.options = options
        self.onDuplicate = onDuplicate
        self.observer = observer
    }

    /// Never throws: a file that cannot be read is a result of its own (`error`), and the next
    /// file is checked. `onFile` sees each file's result as soon as it is final.
    ///
    /// The key rule needs each place's key and content, and building places is most of a
    /// check's cost (6× the validation alone on a CSV), so files are first validated without
    /// building places, handing out only their keys. A key that never repeats cannot change a
    /// verdict: when none does (the common case) that one pass is the check. When one does, the
    /// inputs are read again from the start with places built and judged as the import judges
    /// them, and each file from the first repeat on is reported once that pass has judged it
    /// (its duplicate-key rejects after the other rejects of the run so far). Standard input cannot be read twice:
    /// a run that reads it builds places in its one pass.
    public func run(onFile: (CheckFileResult) -> Void = { _ in }) -> CheckSummary {
        var summary = CheckSummary()
        // Yesterday's rejects beside the dumps are skipped among several inputs, as the import
        // skips them (`ImportInputs`); named alone, a rejects file is checked.
        let skipped = files.count > 1 ? Set(files.filter(RejectsLocation.isOwnRejectsFile)) : []
        var dumps: [(input: DumpInput, result: Int)] = []
        var results: [CheckFileResult] = []
        for path in files {
            if skipped.contains(path) { summary.skippedRejectsFiles.append(path); continue }
            // A zip archive is its dump members, each checked as a file of its own.
            do {
                let expanded = try DumpInput.expand(path)
                summary.skippedMembers += expanded.skipped
                for input in expanded.inputs {
                    dumps.append((input, results.count))
                    results.append(CheckFileResult(file: input.name))
                }
            } catch {
                var result = CheckFileResult(file: path)
                result.error = error.description
                result.failure = error
                results.append(result)
            }
        }
        let onePass = files.contains("-")
        var keys = KeyRule(policy: onDuplicate)
        let seen = KeySightings()
        /// Results before this index are final and reported; from it on they wait for pass two.
        var reported = 0
        var firstRepeat: Int?
        /// Reports the results before `end` that are final: none from the first repeat on until
        /// pass two has run (`final`).
        func report(upTo end: Int, final: Bool = false) {
            let limit = final ? end : min(end, firstRepeat ?? end)
            while reported < limit { onFile(results[reported]); reported += 1 }
        }
        for (position, (input, index)) in dumps.enumerated() {
            report(upTo: index)
            var repeated = onePass ? check(input, into: &results[index], keys: &keys, summary: &summary)
                                   : validate(input, into: &results[index], seen: seen)
            if seen.mixed && seen.fingerprinting == .candidates {
                // An explicit key that is itself a derived key (`sha256:…`, an export's) and a
                // derived key met in this file: candidates cannot tell whether they are the same
                // key, exact fingerprints can. The keys so far are read again, exactly (the
                // validity verdicts stand), and so is the rest of the run.
                seen.restart(.exact)
                for (earlier, earlierIndex) in dumps[...position] where results[earlierIndex].format != nil {
                    seen.repeated = false
                    sight(earlier, seen: seen)
                }
                repeated = seen.repeated
            }
            if repeated && firstRepeat == nil { firstRepeat = index }
            if firstRepeat == nil { report(upTo: index + 1) }
        }
        if let firstRepeat, !onePass {
            for (input, index) in dumps where results[index].format != nil {
                judge(input, into: &results[index], keys: &keys, summary: &summary, reports: index >= firstRepeat,
                      repeatedKeys: seen.repeatedKeys, fingerprinting: seen.fingerprinting)
                if index >= firstRepeat { report(upTo: index + 1, final: true) }
            }
        }
        report(upTo: results.count, final: true)
        for result in results {
            if result.error != nil { summary.unreadable += 1 }
            summary.valid += result.valid
            summary.rejected += result.rejected
        }
        summary.files = results
        return summary
    }

    private func reader(for input: DumpInput) throws(FormatError) -> PlaceReader {
        var readOptions = RejectsLocation.readOptions(options, for: input)
        readOptions.keepRawRecords = false
        return try input.reader(options: readOptions)
    }

    /// Pass one: validity without places; whether a key of this file was seen before in the run.
    private func validate(_ input: DumpInput, into result: inout CheckFileResult, seen: KeySightings) -> Bool {
        seen.repeated = false
        do {
            let reader = try reader(for: input)
            result.format = reader.format.rawValue
            // Counted as they come, so a file that breaks off midway still reports its counts.
            try reader.validateRemaining(valid: &result.valid, onReject: { [observer] reject, _ in
                result.rejected += 1
                observer(.rejected(reject))
            }, onKey: seen.add, keys: seen.fingerprinting)
            for note in reader.notes { observer(.note(note)) }
        } catch {
            result.error = error.description
            result.failure = error
        }
        return seen.repeated
    }

    /// Pass one's keys again, nothing else (its verdicts were reported): up to a read error as
    /// pass one stopped there.
    private func sight(_ input: DumpInput, seen: KeySightings) {
        guard let reader = try? reader(for: input) else { return }
        var valid = 0
        try? reader.validateRemaining(valid: &valid, onReject: { _, _ in }, onKey: seen.add, keys: seen.fingerprinting)
    }

    /// One pass with places built and judged (standard input); whether any key repeated.
    private func check(_ input: DumpInput, into result: inout CheckFileResult, keys: inout KeyRule,
                       summary: inout CheckSummary) -> Bool {
        var repeated = false
        do {
            let reader = try reader(for: input)
            result.format = reader.format.rawValue
            let fileIndex = keys.beginFile(input.name, format: reader.format)
            while let item = try reader.next() {
                switch item {
                case .reject(let reject, _):
                    result.rejected += 1
                    observer(.rejected(reject))
                case .place(let place, _):
                    let verdict = keys.judgeAgainstEarlier(place, fileIndex: fileIndex)
                    if verdict != .keep { repeated = true }
                    apply(verdict, to: &result, summary: &summary, valid: false)
                }
            }
            for note in reader.notes { observer(.note(note)) }
        } catch {
            result.error = error.description
            result.failure = error
        }
        return repeated
    }

    /// Pass two: places built and judged by the key rule; the validity verdicts are pass one's.
    /// `reports`: this file's key verdicts change its result (files before the first repeat only
    /// feed the rule).
    private func judge(_ input: DumpInput, into result: inout CheckFileResult, keys: inout KeyRule,
                       summary: inout CheckSummary, reports: Bool, repeatedKeys: Set<UInt64>,
                       fingerprinting: KeyFingerprinting) {
        guard let reader = try? reader(for: input) else { return }
        let fileIndex = keys.beginFile(input.name, format: reader.format)
        // Only the places whose key pass one saw more than once are built and judged: a key seen
        // once is kept whatever its record (the rule's verdict `keep`, which changes no count),
        // and building every place made this pass as slow as an import's read (six times the
        // validation alone): one repeated key anywhere in the run cost it for every record.
        // Pass one's fingerprints were candidates (`KeyCandidate`): a candidate that repeated is
        // a key that may have, and the rule below decides by the exact key.
        // A read error ends the file here as it did in pass one (already reported there).
        var valid = 0
        try? reader.validateRemaining(valid: &valid, onReject: { _, _ in }, placesWithKeys: repeatedKeys,
                                      keys: fingerprinting) { place in
            let verdict = keys.judgeAgainstEarlier(place, fileIndex: fileIndex)
            if reports { apply(verdict, to: &result, summary: &summary, valid: true) }
        }
    }

    /// Counts one valid record's key verdict; `valid`: pass one already counted it as valid.
    private func apply(_ verdict: KeyRule.Verdict, to result: inout CheckFileResult, summary: inout CheckSummary,
                       valid counted: Bool) {
        switch verdict {
        case .keep: if !counted { result.valid += 1 }
        case .unchanged: if !counted { result.valid += 1 }; summary.unchanged += 1
        case .duplicate: if !counted { result.valid += 1 }; summary.duplicates += 1
        case .reject(let reject):
            if counted { result.valid -= 1 }
            result.rejected += 1
            observer(.rejected(reject))
        }
    }
}

/// The keys pass one has seen (fingerprints only, bounded like the import's table), whether
/// the file being read repeated one, and the keys seen more than once in the run (what pass two
/// judges). A class: the reader's key callback may outlive a call.
///
/// The fingerprints are `KeyCandidate`s: a key made of name and coordinates is fingerprinted
/// from them, not made (its SHA-256 and text were 60 % of checking a dump without ids, read
/// twice when any key repeats). Equal keys have equal candidates, so no repeat is missed; a
/// candidate repeat that is no key repeat (a 62-bit collision) only has pass two judge a few
/// more places, by their exact keys. The one case candidates cannot match, an explicit key
/// that is a derived key's text beside derived keys (`mixed`), is read exactly.
private final class KeySightings {
    private var keys = KeyFingerprints()
    private(set) var fingerprinting = KeyFingerprinting.candidates
    var repeated = false
    private(set) var repeatedKeys = Set<UInt64>()
    private var derived = false, derivedLooking = false
    /// Candidates of derived keys and of explicit `sha256:` keys were both seen.
    var mixed: Bool { derived && derivedLooking }

    func add(_ fingerprint: UInt64) {
        if fingerprinting == .candidates {
            if KeyCandidate.isDerived(fingerprint) { derived = true } else if KeyCandidate.isDerivedLooking(fingerprint) { derivedLooking = true }
        }
        if !keys.insert(fingerprint) {
            repeated = true
            repeatedKeys.insert(fingerprint)
        }
    }

    /// Forgets every key, to see them again fingerprinted as `fingerprinting` says.
    func restart(_ fingerprinting: KeyFingerprinting) {
        self.fingerprinting = fingerprinting
        keys = KeyFingerprints()
        repeatedKeys = []
        repeated = false
    }
}

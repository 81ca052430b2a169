import PoiModel

/// The fuzzers' oracle for the readers: one input is read twice — through `PlaceReader` as
/// production reads it (sniffing, replayed head, batches converted on worker threads), and
/// through the format's own reader over reads of `chunkSize` bytes with one worker — and both
/// reads must agree item for item, since where a read happens to end must never matter. Raw
/// records are kept and compared too, and each must be the input's own bytes, in input order.
///
/// It lives here so the libFuzzer harness (the Fuzz/ package) and the replay of its finds
/// (Tests/PoiFormatsTests/FuzzRegressionTests) check exactly the same thing. It is SPI, not API:
/// only `@_spi(Fuzzing) import PoiFormats` sees it, since the harness is another package.
@_spi(Fuzzing) public enum ReadConsistency {
    /// One read's result, comparable across the two ways of reading.
    public enum Outcome: Equatable, Sendable {
        case place(Place, RawRecord?)
        /// This many valid records (the validate-only read counts places, it does not build them).
        case valid(Int)
        case reject(Reject, RawRecord?)
        case error(FormatError)
    }

    /// Small limits, so the over-limit paths are reached without big inputs.
    public static let smallLimits: ReadOptions = {
        var limits = ReadLimits()
        limits.maxRecordBytes = 512
        limits.maxFields = 32
        limits.maxFeatureBytes = 2048
        limits.maxDepth = 12
        limits.maxInflatedBytes = 1 << 20
        return ReadOptions(limits: limits, keepRawRecords: true)
    }()

    /// More items than this from one input means a reader that stopped advancing.
    public static let maxItems = 1 << 16

    public struct Reads: Sendable {
        public var whole: [Outcome]
        public var pieces: [Outcome]
        /// `PlaceReader.validateRemaining` over the same input: what `poi check` reports.
        public var validated: [Outcome]
        /// A read produced more than `maxItems` items and was cut off.
        public var stalled: Bool
        /// The first raw record of `whole` that is not a slice of the input after the one before it.
        public var misplacedRaw: Int?
        /// The import keys the validate-only read handed out (nil: not asked for).
        public var validatedKeys: [UInt64]? = nil
        public var agree: Bool { whole == pieces && validatedAgrees && keysAgree && misplacedRaw == nil }

        /// The keys `poi check` judges duplicates by are the keys of the places the full read built.
        var keysAgree: Bool {
            guard let validatedKeys else { return true }
            return validatedKeys == whole.compactMap { if case .place(let p, _) = $0 { ImportKey.fingerprint(p.importKey) } else { nil } }
        }

        /// The validate-only read must find the same rejects (and the same error) as the full
        /// read, and count its places. Its places are all `.valid`, so compare them by count.
        var validatedAgrees: Bool { ReadConsistency.summary(whole) == validated }

        /// The first disagreement, for a crash report or a test failure.
        public var difference: String {
            if let k = misplacedRaw {
                return "the raw bytes of item \(k) are not the input's, after the item before: \(String(describing: whole[k]))"
            }
            if whole == pieces && validatedAgrees && !keysAgree {
                return "validating without building places hands out other import keys than the places': "
                    + "\(String(describing: validatedKeys?.prefix(8)))"
            }
            if whole == pieces && !validatedAgrees {
                let full = ReadConsistency.summary(whole)
                let k = (0..<min(full.count, validated.count)).first { full[$0] != validated[$0] } ?? min(full.count, validated.count)
                return "validating without building places disagrees at item \(k) (\(full.count) vs \(validated.count) items):\n"
                    + "  read:     \(k < full.count ? String(describing: full[k]) : "(end)")\n"
                    + "  validate: \(k < validated.count ? String(describing: validated[k]) : "(end)")"
            }
            let k = (0..<min(whole.count, pieces.count)).first { whole[$0] != pieces[$0] } ?? min(whole.count, pieces.count)
            return "reading in small chunks disagrees at item \(k) (\(whole.count) vs \(pieces.count) items):\n"
                + "  whole:  \(k < whole.count ? String(describing: whole[k]) : "(end)")\n"
                + "  pieces: \(k < pieces.count ? String(describing: pieces[k]) : "(end)")"
        }
    }

    /// Reads `input` as `format` both ways. An input that would sniff as the other format gets
    /// `x` (CSV) or `{` (GeoJSON) put in front, so each format's reader sees every input.
    public static func read(_ input: [UInt8], as format: InputFormat, chunkSize: Int,
                             options: ReadOptions = smallLimits) -> Reads {
        if ZipArchive.isZip(input[...]) { return readZip(input, as: format, chunkSize: chunkSize, options: options) }
        var bytes = input
        switch (format, InputFormat.detect(prefix: bytes[...])) {
        case (.csv, .geojson): bytes.insert(0x78, at: 0)
        case (.geojson, .csv): bytes.insert(0x7B, at: 0)
        default: break
        }
        let name = "fuzz.\(format.rawValue)"
        var stalled = false
        let whole: [Outcome]
        do {
            let reader = try PlaceReader(source: ByteSource(bytes: bytes, name: name), options: options)
            // The byte put in front decides the format of plain input only: a gzip'd or UTF-16
            // input decodes to what it holds, and is another target's business when that differs.
            if reader.format != format {
                precondition(reader.isGzip || reader.encoding != nil, "sniffed \(reader.format) for a \(format) input")
                return Reads(whole: [], pieces: [], validated: [.valid(0)], stalled: false, misplacedRaw: nil)
            }
            whole = drain(reader.next, stalled: &stalled)
        } catch {
            whole = [.error(error)]
        }
        var validated: [Outcome] = []
        var keys: [UInt64] = []
        do {
            let reader = try PlaceReader(source: ByteSource(bytes: bytes, name: name), options: options)
            var valid = 0
            var failure: FormatError?
            do {
                try reader.validateRemaining(valid: &valid, onReject: { r, raw in validated.append(.reject(r, raw)) },
                                             onKey: { keys.append($0) })
            } catch {
                failure = error
            }
            validated.append(.valid(valid))
            if let failure { validated.append(.error(failure)) }
        } catch {
            validated = [.valid(0), .error(error)]
        }
        let source = ByteSource(bytes: bytes, name: name, chunkSize: chunkSize)
        let pieces: [Outcome]
        do {
            // Through the same layers (gzip, encoding), fed in small pieces.
            let stream = try PlaceReader.decoded(source, options: options).stream
            switch format {
            case .csv: pieces = drain(try CSVPlaceReader(source: stream, options: options, parallelism: 1).next, stalled: &stalled)
            case .geojson: pieces = drain(try GeoJSONReader(source: stream, options: options).next, stalled: &stalled)
            }
        } catch {
            pieces = [.error(error)]
        }
        return Reads(whole: whole.map(sansOffset), pieces: pieces.map(sansOffset), validated: validated.map(sansOffset), stalled: stalled,
                     misplacedRaw: misplacedRaw(whole, in: decodedBytes(bytes, name: name, options: options)), validatedKeys: keys)
    }

    /// Members of a zip input looked at (a fuzzed central directory may list thousands).
    static let maxZipMembers = 16

    /// A zip input (`ZipArchive` over memory): each member, inflated under the caps of `options`,
    /// must come to an end — its bytes, then the end or one error, never more than the cap — and
    /// its decoded bytes must read the same both ways (`read`). A directory that cannot be read is
    /// an agreeing empty read: the archive's error is all there is to say.
    static func readZip(_ input: [UInt8], as format: InputFormat, chunkSize: Int, options: ReadOptions) -> Reads {
        let agreeing = Reads(whole: [], pieces: [], validated: [.valid(0)], stalled: false, misplacedRaw: nil)
        guard let archive = try? ZipArchive(bytes: input, name: "fuzz.zip") else { return agreeing }
        for member in archive.members.prefix(maxZipMembers) {
            let source = archive.source(for: member, limits: options.limits)
            var decoded: [UInt8] = []
            while true {
                let n: Int
                do { n = try source.read(appendingTo: &decoded) } catch { break }
                if n == 0 { break }
                precondition(decoded.count <= options.limits.maxInflatedBytes,
                             "\(member.name): \(decoded.count) bytes inflated, over the cap of \(options.limits.maxInflatedBytes)")
            }
            // A member that is itself a zip would recurse without end: its bytes are data here.
            if ZipArchive.isZip(decoded[...]) { continue }
            let reads = read(decoded, as: format, chunkSize: chunkSize, options: options)
            if !reads.agree || reads.stalled { return reads }
        }
        return agreeing
    }

    /// Where zlib notices damage depends on how much input it was handed at once (it reads a
    /// few bytes ahead): the offset is compared only for being there.
    static func sansOffset(_ o: Outcome) -> Outcome {
        if case .error(.damagedCompression(let f, _, let r)) = o { return .error(.damagedCompression(file: f, offset: 0, reason: r)) }
        return o
    }

    /// The input as the format readers see it (raw records are slices of this): plain input as
    /// it is, gzip'd or another encoding decoded, up to a read error.
    static func decodedBytes(_ input: [UInt8], name: String, options: ReadOptions) -> [UInt8] {
        guard let stream = try? PlaceReader.decoded(ByteSource(bytes: input, name: name), options: options).stream else {
            return input
        }
        var out: [UInt8] = []
        while (try? stream.read(appendingTo: &out)) ?? 0 > 0 {}
        return out
    }

    /// Raw records must be slices of the input, in input order and not overlapping.
    static func misplacedRaw(_ items: [Outcome], in input: [UInt8]) -> Int? {
        var from = 0
        for (k, item) in items.enumerated() {
            let raw: [UInt8]
            switch item {
            case .place(_, .csv(let r)?), .reject(_, .csv(let r)?): raw = r.bytes
            case .place(_, .feature(let b)?), .reject(_, .feature(let b)?): raw = b
            default: continue
            }
            // An empty value framed as a feature (`[ ,`) has no bytes to place.
            if raw.isEmpty { continue }
            guard raw.count <= input.count - from,
                  let start = (from...(input.count - raw.count)).first(where: { input[$0..<($0 + raw.count)].elementsEqual(raw) })
            else { return k }
            from = start + raw.count
        }
        return nil
    }

    /// A read as validating reports it: the rejects in order, then the number of places, then
    /// the error that ended the read, if any.
    static func summary(_ items: [Outcome]) -> [Outcome] {
        var out: [Outcome] = [], places = 0, failure: Outcome?
        for item in items {
            switch item {
            case .place: places += 1
            case .error: failure = item
            default: out.append(item)
            }
        }
        out.append(.valid(places))
        if let failure { out.append(failure) }
        return out
    }

    private static func drain(_ next: () throws(FormatError) -> ReadItem?, stalled: inout Bool) -> [Outcome] {
        var out: [Outcome] = []
        do {
            while let item = try next() {
                switch item {
                case .place(let p, let raw): out.append(.place(p, raw))
                case .reject(let r, let raw): out.append(.reject(r, raw))
                }
                if out.count > maxItems { stalled = true; break }
            }
        } catch {
            out.append(.error(error))
        }
        return out
    }
}

import ArgumentParser
import Foundation
import PoiImaging
import Synchronization

/// `poi thumb`: thumbnails of local files, no database (like vipsthumbnail). Parses arguments,
/// runs `ThumbBatch` and formats its outcome; the image work itself is PoiImaging's.
struct ThumbCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumb",
        abstract: "Make thumbnails of local JPEG/PNG files (no database).",
        discussion: """
        Writes one thumbnail per input into the output folder, named after the input with the \
        output format's extension (photo.jpg -> DIR/photo.jpeg). The format is detected from the \
        bytes, not the name. JPEGs are decoded at reduced size when the thumbnail allows it, EXIF \
        orientation is applied, and the result carries no metadata. Files that cannot be read or \
        decoded are reported on standard error, one line each ("file: reason"), and the rest are \
        still processed. Files are processed in parallel (--jobs), a bounded number at a time, so \
        memory stays flat however many files there are.

        Exit status: 0 all thumbnails written, 1 some files failed, 2 bad arguments, \
        3 the output folder cannot be created.

        Examples:
          poi thumb photos/*.jpg -o thumbs
          poi thumb IMG_0001.JPG banner.png -o out --size 320x200 --fit cover --format jpeg --quality 80
          poi thumb scans/*.png -o out --format png --jobs 4 --json | jq .failed
        """
    )

    @Argument(help: ArgumentHelp("JPEG or PNG files.", valueName: "file"))
    var files: [String]

    @Option(name: [.customShort("o"), .customLong("output")],
            help: ArgumentHelp("Output folder (created if missing).", valueName: "dir"))
    var output: String

    @Option(help: ArgumentHelp("Bounding box, WIDTHxHEIGHT.", valueName: "WxH"))
    var size: String = "256x256"

    @Option(help: ArgumentHelp("inside: fit in the box, keep aspect; cover: fill the box, crop the centre.",
                               valueName: "inside|cover"))
    var fit: String = "inside"

    @Option(help: ArgumentHelp("Output format; auto = PNG when the source has alpha, else JPEG.",
                               valueName: "auto|jpeg|png"))
    var format: String = "auto"

    @Option(help: ArgumentHelp("JPEG quality, 1-100.", valueName: "q"))
    var quality: Int = 85

    @Flag(help: "Write progressive JPEGs.")
    var progressive = false

    @Option(help: ArgumentHelp("Images processed at once (default: number of cores).", valueName: "n"))
    var jobs: Int?

    @Option(help: ArgumentHelp("Reject images with more pixels than this (checked from the header).",
                               valueName: "n"))
    var maxPixels: Int = DecodeOptions.defaultMaxPixels

    @Flag(help: "Keep images that decode with corrupt-data warnings (e.g. truncated JPEGs).")
    var lenient = false

    @Flag(help: "Print one JSON object on stdout instead of the summary line.")
    var json = false

    func validate() throws {
        _ = try makeSpec()
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        if maxPixels < 1 { throw ValidationError("--max-pixels must be at least 1, got \(maxPixels)") }
    }

    func makeSpec() throws -> ThumbnailSpec {
        guard let fit = ThumbnailSpec.Fit(rawValue: fit) else {
            throw ValidationError("--fit must be inside or cover, got '\(fit)'")
        }
        guard let format = ThumbnailSpec.Format(rawValue: format) else {
            throw ValidationError("--format must be auto, jpeg or png, got '\(format)'")
        }
        do {
            let (w, h) = try ThumbnailSpec.parseSize(size)
            return try ThumbnailSpec(width: w, height: h, fit: fit, format: format, quality: quality,
                                     progressive: progressive)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let spec = try makeSpec()
        let outDir = URL(fileURLWithPath: output, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: outDir, withIntermediateDirectories: true)
        } catch {
            printError("\(output): cannot create output folder: \(error.localizedDescription)")
            throw ExitStatus.failure
        }
        let batch = ThumbBatch(files: files, outputDirectory: outDir, spec: spec,
                               options: DecodeOptions(maxPixels: maxPixels, lenient: lenient),
                               jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount)
        let start = ContinuousClock.now
        let outcomes = batch.run()
        let elapsed = ContinuousClock.now - start

        var written = 0
        for (file, outcome) in zip(files, outcomes) {
            switch outcome {
            case .written: written += 1
            // Exactly "file: reason", one line per file, so the list can be grepped or re-fed.
            case .failed(let reason): FileDescriptorOutput.write("\(file): \(reason)\n", fd: 2)
            }
        }
        let failed = files.count - written
        if json {
            print(ThumbReport(spec: spec.canonical, outcomes: zip(files, outcomes).map { $0 }, written: written,
                              failed: failed, seconds: elapsed).json())
        } else {
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("\(written) thumbnail\(written == 1 ? "" : "s") written to \(output)"
                + (failed > 0 ? ", \(failed) failed" : "") + " (\(String(format: "%.2f", seconds)) s)")
        }
        if failed > 0 { throw ExitStatus.rejects }
    }
}

enum ThumbOutcome: Sendable {
    case written(path: String, width: Int, height: Int, format: ImageFormat, bytes: Int)
    case failed(String)
}

/// Runs the thumbnails on `jobs` worker threads pulling file indexes from a shared counter: at
/// most `jobs` images are in memory at once, whatever the number of files.
struct ThumbBatch: Sendable {
    let files: [String]
    let outputDirectory: URL
    let spec: ThumbnailSpec
    let options: DecodeOptions
    let jobs: Int

    /// Inputs larger than this are refused before reading (no photo is anywhere near it).
    static let maxInputBytes = 512 << 20

    func run() -> [ThumbOutcome] {
        let names = outputNames()
        let next = Atomic<Int>(0)
        let gate = ThumbnailGate()
        let results = Mutex<[ThumbOutcome?]>(Array(repeating: nil, count: files.count))
        let group = DispatchGroup()
        let workers = max(1, min(jobs, files.count))
        for _ in 0..<workers {
            group.enter()
            let thread = Thread { [self] in
                while true {
                    let i = next.add(1, ordering: .relaxed).oldValue
                    if i >= files.count { break }
                    let outcome = process(files[i], outputName: names[i], gate: gate)
                    results.withLock { $0[i] = outcome }
                }
                group.leave()
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        group.wait()
        return results.withLock { $0.map { $0 ?? .failed("not processed") } }
    }

    /// Base name + the output format's extension; a name two inputs would share is an error for
    /// the second (nothing is silently overwritten).
    private func outputNames() -> [Result<String, ThumbFailure>] {
        var seen: [String: String] = [:]
        return files.map { file in
            let base = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
            if let first = seen[base] {
                return .failure(ThumbFailure("output name '\(base)' is already used by \(first)"))
            }
            seen[base] = file
            return .success(base)
        }
    }

    private func process(_ file: String, outputName: Result<String, ThumbFailure>, gate: ThumbnailGate) -> ThumbOutcome {
        do {
            let base = try outputName.get()
            let bytes = try readFile(file)
            let thumb: Thumbnail
            do { thumb = try gate.make(from: bytes, spec: spec, options: options) } catch {
                throw ThumbFailure(error.description)
            }
            let url = outputDirectory.appendingPathComponent(base + thumb.format.fileExtension)
            if Self.sameFile(url.path, file) {
                throw ThumbFailure("the thumbnail would replace the input itself; choose another -o folder")
            }
            try writeReplacing(url.path, thumb.data)
            return .written(path: url.path, width: thumb.width, height: thumb.height, format: thumb.format,
                            bytes: thumb.data.count)
        } catch let failure as ThumbFailure {
            return .failed(failure.reason)
        } catch {
            return .failed(String(describing: error))
        }
    }

    /// Reads a whole file with POSIX calls straight into the array the decoder takes.
    private func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        if fd < 0 { throw ThumbFailure("cannot open: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ThumbFailure("cannot stat: \(String(cString: strerror(errno)))") }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw ThumbFailure("is a directory") }
        let size = Int(st.st_size)
        if size > Self.maxInputBytes {
            throw ThumbFailure("file is \(size >> 20) MB, over the \(Self.maxInputBytes >> 20) MB input limit")
        }
        var failure: String?
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buf, count in
            var filled = 0
            while filled < size {
                let n = read(fd, buf.baseAddress! + filled, size - filled)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = "read error: \(String(cString: strerror(errno)))"
                    break
                }
                if n == 0 { break }
                filled += n
            }
            count = filled
        }
        if let failure { throw ThumbFailure(failure) }
        return bytes
    }

    /// Writes to a temporary name in the same folder and renames it into place, so a reader never
    /// sees half a thumbnail. No fsync: these are regenerable outputs, and vipsthumbnail does not
    /// sync either (PoiStore's uploads, which must survive a crash, do).
    /// Whether two paths name the same file (same device and inode; links and `..` included).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    private func writeReplacing(_ path: String, _ data: [UInt8]) throws {
        let temp = path + ".tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if fd < 0 { throw ThumbFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
        var written = 0
        var error: Int32 = 0
        data.withUnsafeBytes { raw in
            while written < raw.count {
                let n = write(fd, raw.baseAddress! + written, raw.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    error = errno
                    return
                }
                written += n
            }
        }
        if close(fd) != 0 && error == 0 { error = errno }
        if error == 0 && rename(temp, path) != 0 { error = errno }
        if error != 0 {
            unlink(temp)
            throw ThumbFailure("cannot write \(path): \(String(cString: strerror(error)))")
        }
    }
}

struct ThumbFailure: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// The `--json` summary: spec, counts, and one entry per input in input order.
struct ThumbReport {
    let spec: String
    let outcomes: [(String, ThumbOutcome)]
    let written: Int
    let failed: Int
    let seconds: Duration

    func json() -> String {
        var entries: [[String: Any]] = []
        for (file, outcome) in outcomes {
            switch outcome {
            case .written(let path, let w, let h, let format, let bytes):
                entries.append(["input": file, "output": path, "width": w, "height": h,
                                "contentType": format.contentType, "bytes": bytes])
            case .failed(let reason):
                entries.append(["input": file, "error": reason])
            }
        }
        let secs = Double(seconds.components.seconds) + Double(seconds.components.attoseconds) / 1e18
        let object: [String: Any] = ["spec": spec, "written": written, "failed": failed,
                                     "seconds": (secs * 1000).rounded() / 1000, "files": entries]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

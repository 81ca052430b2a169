import ArgumentParser
import CSystemShims
import PoiStore
#if canImport(Glibc)
import Glibc
#endif

/// `poi`: the command line of PoiKit. Commands parse arguments, call into PoiJobs/PoiStore/
/// PoiImaging/PoiFormats, format output and pick the exit status; they hold no pipeline logic.
struct Poi: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "poi",
        abstract: "Point-of-interest data in MongoDB: import, export, thumbnails.",
        discussion: """
        Exit status: 0 all good, 1 finished with rejected rows or files, 2 usage or configuration \
        error, 3 database or I/O failure, 128 + the signal when interrupted (130 Ctrl-C, 143 SIGTERM).
        The database URI comes from --uri, else $MONGODB_URI, else mongodb://127.0.0.1:27017. \
        Every command in full: docs/poi.md.

        Examples, one per command:
          poi doctor
          poi thumb photos/*.jpg -o thumbs/
          poi import places.csv landmarks.geojson --uploads /srv/app/uploads
          poi export --bbox -0.51,51.28,0.33,51.69 -o london.geojson
          poi thumbnails --size 512x512
          poi check dump.csv
          poi convert dump.csv -o dump.geojson
          poi gc --verify
          poi serve --uploads /srv/app/uploads
        """,
        version: PoiVersion.string,
        subcommands: [
            DoctorCommand.self,
            ThumbCommand.self,
            ImportCommand.self, ExportCommand.self, ThumbnailsCommand.self,
            CheckCommand.self, ConvertCommand.self,
            GCCommand.self,
            ServeCommand.self,
        ]
    )
}

enum PoiVersion {
    static let string = "0.1.0"
}

/// The entry point. ArgumentParser's own `main()` exits 64 on usage errors; PoiKit promises 2 for
/// those (and 3 for a failure no command caught), so parsing and running are split here.
@main
enum PoiMain {
    static func main() async {
        LibmongocCounters.removeSegmentName()
        MallocPolicy.returnLargeBuffersToTheSystem()
        // `poi serve` shuts down gracefully on SIGTERM/SIGINT itself; every other command
        // removes its temporary files and ends with the signal's status.
        let serving = CommandLine.arguments.dropFirst().first == ServeCommand.configuration.commandName
        Console.start(handlingTerminationSignals: !serving)
        // Without /proc (a chroot, a bare container), Swift's runtime gets no arguments at all,
        // not even the program's name (it reads /proc/self/cmdline), and ArgumentParser then
        // printed the help and exited 0: a cron job that did nothing and said it had succeeded.
        if CommandLine.arguments.isEmpty {
            printError("cannot read the command line (the Swift runtime reads it from /proc/self/cmdline: "
                       + "is /proc mounted?)")
            JSONFailure.report(nil, exitStatus: ExitStatus.usage.rawValue)
            Poi.exit(withError: ExitStatus.usage)
        }
        let command: any ParsableCommand
        do {
            command = try Poi.parseAsRoot()
        } catch {
            // --help and --version arrive as errors that exit 0; everything else is a usage error.
            if Poi.exitCode(for: error) == .success { Poi.exit(withError: error) }
            printError(Poi.fullMessage(for: error))
            JSONFailure.report(nil, exitStatus: ExitStatus.usage.rawValue)
            Poi.exit(withError: ExitStatus.usage)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let code as ExitCode {
            // An exit status of 1 (rejects) comes after the summary: its JSON is printed.
            JSONFailure.report(nil, exitStatus: code.rawValue)
            Poi.exit(withError: code)
        } catch {
            if Poi.exitCode(for: error) == .success { Poi.exit(withError: error) }
            if let validation = error as? ValidationError {
                printError(validation.message)
                JSONFailure.report(nil, exitStatus: ExitStatus.usage.rawValue)
                Poi.exit(withError: ExitStatus.usage)
            }
            printError(CLIHints.message(for: error))
            JSONFailure.report(nil, exitStatus: ExitStatus.failure.rawValue)
            Poi.exit(withError: ExitStatus.failure)
        }
    }
}

/// glibc raises its mmap threshold after the first large free (up to 32 MiB), so every later
/// decoder buffer of a photo (tens of MB for a 24-megapixel image) comes from the heap arenas,
/// which are not given back: `poi serve` stayed 81 MB above its idle level after 32 uploads of
/// 16 MB photos, for good. A fixed threshold (128 KiB) keeps large buffers in mappings of their
/// own, returned when freed, and a fixed trim threshold gives back the heap's free top. Measured
/// (the same burst, release build): 9–11 MB above idle afterwards, for 6 % more time (such
/// buffers are faulted in afresh for each image). Set first thing, before any thread allocates.
///
/// The batch jobs keep this policy too (measured): letting every buffer up to 32 MiB
/// come from the heap and be reused (mmap threshold 32 MiB, heap given back by malloc_trim
/// after a second without images) cut `make bench-images`' page faults 399,534 → 352,255 (JPEG,
/// 48 files) and 61,237 → 18,214 (PNG, 22 files) and CPU 2.93 → 2.80 s and 1.95 → 1.86 s, but
/// raised peak RSS 230 → 244 MB and 88 → 112 MB, past the 220 MB budget. The progressive JPEGs'
/// coefficient arrays (about 50 MB at 4096²) are over glibc's largest threshold anyway. Their
/// faults are taken away instead by the decode arenas (CCodecs/arena.c, lent per image by
/// ThumbnailBudget and counted in its budget): libjpeg's image pool and a PNG's inflated data
/// reuse one worker's pages, 399,548 → 126,529 faults on the same bench, without this policy.
///
/// What it costs: every buffer of 128 KiB or more is a mapping of its own, so each one's pages
/// are faulted in and zeroed by the kernel afresh, and freeing it is a munmap. A server that
/// read downloads into 256 kB buffers paid that for every buffer sent (about 1,650 page faults
/// per 6.7 MB photo) and ran at a third of nginx's rate (a 2.6x loss, measured on 2 cores). So
/// no download allocates per slice: disk files go out with sendfile (PoiServer's
/// `FileRegionBody`), GridFS chunks through one buffer per download. A new hot path that
/// allocates large buffers per request pays the same; `make bench-smoke` (in CI) compares
/// downloads with nginx on the same files and fails at half its rate.
///
/// `mallopt` is called through CSystemShims (`poi_set_malloc_policy`): Swift's Glibc module does
/// not export <malloc.h>, and the codecs' C target may include only the codecs' headers
/// (ARCHITECTURE.md §3). On another C library it changes nothing.
enum MallocPolicy {
    static func returnLargeBuffersToTheSystem() {
        // M_MMAP_THRESHOLD, then M_TRIM_THRESHOLD, both 128 KiB.
        _ = poi_set_malloc_policy(128 * 1024, 128 * 1024)
    }
}

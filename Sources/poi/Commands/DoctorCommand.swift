import ArgumentParser
import Foundation
import PoiImaging
import PoiStore

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check libraries, the MongoDB server and the uploads folder.",
        discussion: """
        Prints the versions of PoiKit and the C libraries it runs with, connects to the server and \
        probes what PoiKit needs from it ($geoWithin queries, GridFS), and checks that the uploads \
        folder is writable. The password in the URI is never printed.

        Exit status: 0 all good, 1 the server lacks a capability, 2 bad arguments, \
        3 the server cannot be reached or the uploads folder is not writable.

        Examples:
          poi doctor
          poi doctor --uri mongodb://user:secret@db.example.com/MyDatabase --uploads /srv/app/uploads
          MONGODB_URI=mongodb://127.0.0.1:27017 poi doctor --json
        """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: ArgumentHelp("Folder the backend serves files from.", valueName: "dir"))
    var uploads: String = "uploads"

    @Flag(help: "Print one JSON object on stdout instead of text.")
    var json = false

    func run() throws {
        var report = DoctorReport(
            poikit: PoiVersion.string,
            libraries: [
                "libjpeg-turbo": ImagingLibraries.libjpegTurbo,
                "libpng": ImagingLibraries.libpng,
                "libmongoc": MongoLibraries.libmongoc,
                "libbson": MongoLibraries.libbson,
            ])
        let connection = try database.connect()
        let dbName = database.databaseName(for: connection)
        report.server = DoctorReport.Server(uri: connection.redactedURI, database: dbName)
        report.uploads = UploadsCheck.run(path: uploads)

        var failure: String?
        do {
            let info = try connection.serverInfo()
            report.server?.version = info.version
            report.server?.wireVersion = info.maxWireVersion
            report.server?.geoWithin = connection.probeGeoWithin(database: dbName).description
            report.server?.gridFS = connection.probeGridFS(database: dbName).description
        } catch {
            failure = error.description
            report.server?.error = error.description
        }

        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            printText(report)
        }

        if let failure { if json { printError(failure) }; throw ExitStatus.failure }
        if let problem = report.uploads?.problem {
            if json { printError("uploads folder \(uploads): \(problem)") }
            throw ExitStatus.failure
        }
        if report.server?.geoWithin != "yes" || report.server?.gridFS != "yes" { throw ExitStatus.rejects }
    }

    private func printText(_ r: DoctorReport) {
        print("PoiKit \(r.poikit)")
        for name in ["libjpeg-turbo", "libpng", "libmongoc", "libbson"] {
            print("  \(name.padding(toLength: 14, withPad: " ", startingAt: 0)) \(r.libraries[name] ?? "?")")
        }
        if let s = r.server {
            print("server \(s.uri) (database \(s.database))")
            if let error = s.error {
                printError(error)
            } else {
                print("  version        \(s.version ?? "?")")
                print("  wire version   \(s.wireVersion.map(String.init) ?? "?")")
                print("  $geoWithin     \(s.geoWithin ?? "?")")
                print("  GridFS         \(s.gridFS ?? "?")")
            }
        }
        if let u = r.uploads {
            print("uploads \(u.path): \(u.problem.map { "NOT writable (\($0))" } ?? u.status)")
        }
    }
}

struct DoctorReport: Encodable {
    struct Server: Encodable {
        var uri: String
        var database: String
        var version: String?
        var wireVersion: Int?
        var geoWithin: String?
        var gridFS: String?
        var error: String?
    }

    var poikit: String
    var libraries: [String: String]
    var server: Server?
    var uploads: UploadsCheck?
}

/// Whether PoiKit can store image files in the uploads folder: writes, syncs and removes a probe
/// file there (or, when the folder does not exist yet, checks that it could be created).
struct UploadsCheck: Encodable {
    var path: String
    var status: String
    var problem: String?

    static func run(path: String) -> UploadsCheck {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDir) {
            guard isDir.boolValue else { return UploadsCheck(path: path, status: "", problem: "not a folder") }
            let probe = (path as NSString).appendingPathComponent(".poikit-probe-\(getpid())")
            let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            guard fd >= 0 else { return UploadsCheck(path: path, status: "", problem: String(cString: strerror(errno))) }
            defer { close(fd); unlink(probe) }
            guard write(fd, "ok", 2) == 2, fsync(fd) == 0 else {
                return UploadsCheck(path: path, status: "", problem: String(cString: strerror(errno)))
            }
            return UploadsCheck(path: path, status: "writable")
        }
        // Walk up to the nearest existing ancestor: the folder is created on first use.
        var ancestor = (path as NSString).deletingLastPathComponent
        if ancestor.isEmpty { ancestor = "." }
        while !fm.fileExists(atPath: ancestor) {
            let up = (ancestor as NSString).deletingLastPathComponent
            ancestor = up.isEmpty ? "." : up
        }
        var ancestorIsDir: ObjCBool = false
        _ = fm.fileExists(atPath: ancestor, isDirectory: &ancestorIsDir)
        guard ancestorIsDir.boolValue else {
            return UploadsCheck(path: path, status: "", problem: "cannot be created: \(ancestor) is not a folder")
        }
        if access(ancestor, W_OK) == 0 {
            return UploadsCheck(path: path, status: "does not exist yet; will be created (\(ancestor) is writable)")
        }
        return UploadsCheck(path: path, status: "", problem: "does not exist and \(ancestor) is not writable")
    }
}

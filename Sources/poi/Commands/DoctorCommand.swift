import ArgumentParser
import Foundation
import PoiImaging
import PoiStore

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check libraries, the server and the uploads folder.",
        // The short help: what it does, the essentials, three examples. docs/poi.md has the
        // rest, and every option (`--help-hidden` lists the ones left out here).
        discussion: """
        Prints library and server versions, how the server is set up, and probes \
        $geoWithin, GridFS and the uploads folder. Exit status 1: the server lacks a \
        capability; 3: unreachable, or uploads not writable. More: docs/poi.md#poi-doctor.

        Examples:
          poi doctor
          poi doctor --uri mongodb://user:secret@db.example.com/MyDatabase
          MONGODB_URI=mongodb://127.0.0.1:27017 poi doctor --json
        """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: ArgumentHelp("The backend's uploads folder.", valueName: "dir"))
    var uploads: String = "uploads"

    @Flag(help: "Print one JSON object on stdout instead of text.")
    var json = false

    func run() throws {
        var report = DoctorReport(
            poikit: PoiVersion.string,
            libraries: [
                "libjpeg-turbo": ImagingLibraries.libjpegTurbo,
                "libpng": ImagingLibraries.libpng,
                "libwebp": ImagingLibraries.libwebp,
                "libmongoc": MongoLibraries.libmongoc,
                "libbson": MongoLibraries.libbson,
            ])
        let connection = try database.connect()
        let dbName = database.databaseName(for: connection)
        report.server = DoctorReport.Server(uri: connection.redactedURI, database: dbName)
        report.uploads = UploadsProbe.run(directory: uploads)

        var failure: String?
        do {
            let info = try connection.serverInfo()
            report.server?.version = info.version
            report.server?.wireVersion = info.maxWireVersion
            let topology = try connection.topology()
            let identity = connection.identity
            report.server?.topology = topology.kindDescription
            report.server?.tls = identity.tls
            report.server?.tlsVerified = identity.tls ? !identity.tlsUnverified : nil
            report.server?.user = identity.user == nil ? nil : identity.userDescription
            report.server?.authenticatedAs = topology.authenticatedUsers
            report.server?.retryableWrites = topology.retryableWrites
            report.server?.geoWithin = connection.probeGeoWithin(database: dbName).description
            report.server?.gridFS = connection.probeGridFS(database: dbName).description
        } catch {
            failure = CLIHints.message(for: error)
            report.server?.error = failure
        }

        if json {
            try printJSON(report)
        } else {
            try printOut(text(report))
        }

        if let failure { if json { printError(failure) }; throw ExitStatus.failure }
        if let problem = report.uploads?.problem {
            if json { printError("uploads folder \(uploads): \(problem)") }
            throw ExitStatus.failure
        }
        if report.server?.geoWithin != "yes" || report.server?.gridFS != "yes" { throw ExitStatus.rejects }
    }

    private func text(_ r: DoctorReport) -> String {
        var lines = ["PoiKit \(r.poikit)"]
        for name in ["libjpeg-turbo", "libpng", "libwebp", "libmongoc", "libbson"] {
            lines.append("  \(name.padding(toLength: 14, withPad: " ", startingAt: 0)) \(r.libraries[name] ?? "?")")
        }
        if let s = r.server {
            lines.append("server \(s.uri) (database \(s.database))")
            if let error = s.error {
                printError(error)
            } else {
                lines.append("  version        \(s.version ?? "?")")
                lines.append("  wire version   \(s.wireVersion.map(String.init) ?? "?")")
                lines.append("  topology       \(s.topology ?? "?")")
                lines.append("  TLS            \(s.tls.map { $0 ? (s.tlsVerified == false ? "on, but the server's certificate is NOT verified (tlsAllowInvalidCertificates/Hostnames or tlsInsecure in the URI)" : "on") : "off" } ?? "?")")
                lines.append("  user           \(s.user ?? "none (no authentication)")"
                             + (s.authenticatedAs.map { $0.isEmpty ? "" : "; authenticated as \($0.joined(separator: ", "))" } ?? ""))
                lines.append("  retryable writes \(s.retryableWrites.map { $0 ? "yes" : "no (a standalone server: a write cut off by a failure is not retried)" } ?? "?")")
                lines.append("  $geoWithin     \(s.geoWithin ?? "?")")
                lines.append("  GridFS         \(s.gridFS ?? "?")")
            }
        }
        if let u = r.uploads {
            lines.append("uploads \(u.path): \(u.problem.map { "NOT writable (\($0))" } ?? u.status)")
        }
        return lines.joined(separator: "\n")
    }
}

struct DoctorReport: Encodable {
    /// More than ten stored properties: each is one field of `poi doctor --json`, which scripts read by name.
    struct Server: Encodable {
        var uri: String
        var database: String
        var version: String?
        var wireVersion: Int?
        var topology: String?
        var tls: Bool?
        var tlsVerified: Bool?
        var user: String?
        var authenticatedAs: [String]?
        var retryableWrites: Bool?
        var geoWithin: String?
        var gridFS: String?
        var error: String?
    }

    var poikit: String
    var libraries: [String: String]
    var server: Server?
    var uploads: UploadsProbe?
}

import Foundation
import Testing

// Helpers several suites of this target share. Each is a protocol with its helpers in an
// extension, so a suite that adopts it calls them as `Self.scratch(…)`, as if they were its own.

/// A scratch folder with a clean CSV (`good.csv`), one with a reject (`bad.csv`) and the GeoJSON
/// sample (`x.geojson`), and `poi` run in it.
protocol ScratchFolderRuns {}

extension ScratchFolderRuns {
    static var samples: URL { PoiProcess.repoRoot.appendingPathComponent("Samples") }

    /// A scratch folder with a clean CSV (`good.csv`), one with a reject (`bad.csv`) and the
    /// GeoJSON sample (`x.geojson`).
    static func scratch(_ name: String) throws -> String {
        let dir = NSTemporaryDirectory() + "poi-scratch-\(name)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        do {
            try "id,name,lat,lon\na1,Alpha,1,2\n".write(toFile: dir + "/good.csv", atomically: true, encoding: .utf8)
            try "id,name,lat,lon\na1,Alpha,1,2\na2,Beta,999,2\n".write(toFile: dir + "/bad.csv", atomically: true, encoding: .utf8)
            try FileManager.default.copyItem(atPath: samples.appendingPathComponent("landmarks.geojson").path,
                                             toPath: dir + "/x.geojson")
        } catch {
            try? FileManager.default.removeItem(atPath: dir)
            throw error
        }
        return dir
    }

    static func run(_ args: [String], in dir: String) throws -> PoiProcess.Result {
        try PoiProcess.run(args, currentDirectory: URL(fileURLWithPath: dir))
    }

    static func shell(_ line: String, in dir: String) throws -> PoiProcess.Result {
        try PoiProcess.execute(URL(fileURLWithPath: "/bin/sh"), ["-c", line],
                               environment: ["POI": PoiProcess.binary.path], currentDirectory: URL(fileURLWithPath: dir))
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    static func read(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
}

/// A bash line run the way cron runs it: `$POI` is the built binary, MONGODB_URI the server.
protocol CronShellRuns {}

extension CronShellRuns {
    static func shell(_ line: String, in dir: String, uri: String) throws -> PoiProcess.Result {
        try PoiProcess.execute(URL(fileURLWithPath: "/bin/bash"), ["-c", line],
                               environment: ["POI": PoiProcess.binary.path, "MONGODB_URI": uri],
                               currentDirectory: URL(fileURLWithPath: dir))
    }
}

/// Dumps as they arrive: GeoNames rows with bare quotes, an empty scratch folder, JSON output read.
protocol DumpFixtures {}

extension DumpFixtures {
    static var geonamesColumns: String {
        "geonameid,name,asciiname,alternatenames,latitude,longitude,feature_class,feature_code,"
            + "country_code,cc2,admin1_code,admin2_code,admin3_code,admin4_code,population,elevation,dem,timezone,modification_date"
    }

    /// Two GeoNames rows; the first holds bare quotes, as real ones do (`"Quoted" Hill`, an
    /// alternate name starting with `"`).
    static var geonamesRows: String {
        "1\t\"Quoted\" Hill\tQuoted Hill\t\"Alt,Other\t10.0\t20.0\tT\tHLL\tUS\t\t\t\t\t\t0\t\t0\tAmerica/X\t2014-11-05\n"
            + "2\tNext\tNext\t\t11.0\t21.0\tT\tHLL\tUS\t\t\t\t\t\t0\t\t0\tAmerica/X\t2014-11-05\n"
    }

    static func scratch(_ name: String) throws -> URL {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory() + "poi-dump-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }
}

/// `poi gc` on a workspace's database and uploads, and its damaged-bytes report flattened.
protocol MaintenanceRuns {}

extension MaintenanceRuns {
    func gc(_ ws: Workspace, _ args: [String]) throws -> PoiProcess.Result {
        try PoiProcess.run(["gc", "--db", ws.database, "--uploads", ws.path("uploads")] + args,
                           environment: ["MONGODB_URI": ws.uri], currentDirectory: ws.root)
    }

    static func damaged(_ json: [String: Any]) -> [[String: String]] {
        (json["damagedBytes"] as? [[String: Any]] ?? []).map { entry in
            var flat: [String: String] = [:]
            for (k, v) in entry {
                if let s = v as? String { flat[k] = s }
                if let a = v as? [String] { flat[k] = a.joined(separator: ",") }
            }
            return flat
        }
    }
}

/// One input file in a folder of its own.
protocol OwnFolderFiles {}

extension OwnFolderFiles {
    /// `text` as `name` in a folder of its own; remove it with `removeFolder(of:)`.
    static func write(_ text: String, _ name: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("poi-cli-notes-\(getpid())-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent(name).path
        do { try text.write(toFile: path, atomically: true, encoding: .utf8) } catch {
            try? FileManager.default.removeItem(at: dir)
            throw error
        }
        return path
    }

    /// Removes the folder `write` made for `path`.
    static func removeFolder(of path: String) {
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
}

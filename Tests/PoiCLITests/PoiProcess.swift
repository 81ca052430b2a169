import Foundation
import Testing

/// Runs the built `poi` binary (next to the test bundle, or $POI_BIN) and captures its output.
struct PoiProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var all: String { stdout + stderr }
    }

    static var binary: URL {
        if let explicit = ProcessInfo.processInfo.environment["POI_BIN"] { return URL(fileURLWithPath: explicit) }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        // .build/<triple>/debug/PoiKitPackageTests.xctest → .build/<triple>/debug/poi
        return exe.deletingLastPathComponent().appendingPathComponent("poi")
    }

    /// The repository root (for Samples/ and .venv/).
    static var repoRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func run(_ arguments: [String], environment: [String: String] = [:], removing: [String] = [],
                    currentDirectory: URL? = nil, stdin: Data? = nil) throws -> Result {
        try execute(binary, arguments, environment: environment, removing: removing, currentDirectory: currentDirectory,
                    stdin: stdin)
    }

    /// Runs any executable with the test's environment (plus `environment`, minus `removing`).
    static func execute(_ executable: URL, _ arguments: [String], environment: [String: String] = [:],
                        removing: [String] = [], currentDirectory: URL? = nil, stdin: Data? = nil) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for key in removing { env.removeValue(forKey: key) }
        env.merge(environment) { _, new in new }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        // Standard input from a file, not a pipe: a pipe's write end can leak into children that
        // other tests start at the same moment, and then the reader never sees the end.
        var inputFile: String?
        defer { if let inputFile { try? FileManager.default.removeItem(atPath: inputFile) } }
        if let stdin {
            let path = NSTemporaryDirectory() + "poi-stdin-\(UUID().uuidString)"
            inputFile = path
            try stdin.write(to: URL(fileURLWithPath: path))
            process.standardInput = FileHandle(forReadingAtPath: path)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        // Read both pipes concurrently with the process so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        group.enter(); DispatchQueue.global().async { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter(); DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        process.waitUntilExit()
        group.wait()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs a Python snippet in the project's .venv (pymongo, Pillow) and returns its trimmed stdout.
    static func python(_ script: String, _ arguments: [String]) throws -> String {
        let python = repoRoot.appendingPathComponent(".venv/bin/python")
        return try execute(python, ["-c", script] + arguments).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

import ArgumentParser
import PoiStore

/// The exit statuses every `poi` command uses (documented in `poi --help`).
enum ExitStatus {
    /// Finished, but some rows or files were rejected.
    static let rejects = ExitCode(1)
    /// Bad arguments or configuration.
    static let usage = ExitCode(2)
    /// The database or the file system failed.
    static let failure = ExitCode(3)
}

/// Prints `message` to stderr as `poi: message`.
func printError(_ message: String) {
    var stderr = StandardError()
    print("poi: \(message)", to: &stderr)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileDescriptorOutput.write(string, fd: 2)
    }
}

enum FileDescriptorOutput {
    static func write(_ string: String, fd: Int32) {
        var s = string
        s.withUTF8 { buf in
            var offset = 0
            while offset < buf.count {
                let n = systemWrite(fd, buf.baseAddress! + offset, buf.count - offset)
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Musl)
import Musl
private let systemWrite = Musl.write
#else
import Darwin
private let systemWrite = Darwin.write
#endif

import Foundation
import PoiTestSupport
import Testing

/// `poi <command> --help` fits a screen: an abstract, the essentials, three examples, usage and
/// one-line options, at most 50 lines at 80 columns. The long explanations live in docs/poi.md
/// (a section per command, linked from README.md) and the rarer options in `--help-hidden`: a
/// help of 237 lines was read by nobody, and what it said is kept there, not dropped.
@Suite(.tags(.process)) struct HelpFitsAScreenTests {
    static let maxLines = 50
    static let columns = 80

    static func help(_ arguments: [String]) throws -> String {
        let r = try PoiProcess.run(arguments + ["--help"], environment: ["COLUMNS": "\(columns)"])
        #expect(r.status == 0, "\(arguments) --help: \(r.stderr)")
        return r.stdout
    }

    /// The commands `poi --help` lists, so a new one is held to the same rule without editing this.
    static func subcommands() throws -> [String] {
        let root = try help([])
        let section = try #require(root.range(of: "SUBCOMMANDS:\n"), "no SUBCOMMANDS in poi --help:\n\(root)")
        return root[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    @Test func everySubcommandsHelpFitsAScreenAndHasExamples() throws {
        let commands = try Self.subcommands()
        #expect(commands.count >= 9, "\(commands)")
        for command in commands {
            let text = try Self.help([command])
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            #expect(lines.count <= Self.maxLines, "poi \(command) --help is \(lines.count) lines:\n\(text)")
            #expect(text.contains("Examples:"), "poi \(command) --help has no examples")
            // Examples come three to a command: enough to start from, few enough to read.
            let examples = lines.drop { $0 != "Examples:" }.dropFirst().prefix { $0.hasPrefix("  ") }
            #expect(examples.count == 3, "poi \(command) --help examples: \(Array(examples))")
            for line in lines { #expect(line.count <= Self.columns, "poi \(command) --help: \(line)") }
        }
    }

    /// `poi --help` lists every command with one example of it, and every command has its section
    /// in docs/poi.md, where the help points for the rest.
    @Test func rootHelpShowsEachCommandOnceAndTheReferenceHasEach() throws {
        let root = try Self.help([])
        let reference = try String(contentsOf: PoiProcess.repoRoot.appendingPathComponent("docs/poi.md"), encoding: .utf8)
        for command in try Self.subcommands() {
            #expect(root.contains("\n  poi \(command)"), "poi --help has no example of \(command)")
            #expect(reference.contains("\n## poi \(command)\n"), "docs/poi.md has no section for \(command)")
            #expect(try Self.help([command]).contains("docs/poi.md"), "poi \(command) --help does not point to docs/poi.md")
        }
        let lines = root.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count <= Self.maxLines, "poi --help is \(lines.count) lines:\n\(root)")
    }
}

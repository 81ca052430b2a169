/// One dump to read, as the jobs (import, check, convert) see their inputs: a file (or `-`), or a
/// CSV/GeoJSON member of a zip archive given as a file. A zip expands into its members in name
/// order, each read as if it had been given on its own.
public struct DumpInput: Sendable {
    /// What places, rejects and messages call it: the path, or `ARCHIVE:MEMBER`.
    public let name: String
    /// The file on disk it comes from (the archive for a member; `-` for standard input).
    public let path: String
    private let archive: ZipArchive?
    private let member: ZipMember?

    /// A member's path inside its archive, nil for a file.
    public var memberName: String? { member?.name }

    public static func file(_ path: String) -> DumpInput {
        DumpInput(name: path, path: path, archive: nil, member: nil)
    }

    /// `path` as inputs: itself, or when it is a zip archive (a regular file starting with a zip
    /// signature), its dump members in name order and the others it skips, with why. An archive
    /// without a dump member is `FormatError.noDumpInArchive`.
    public static func expand(_ path: String) throws(FormatError) -> (inputs: [DumpInput], skipped: [SkippedMember]) {
        guard ZipArchive.isZip(path: path) else { return ([.file(path)], []) }
        let archive = try ZipArchive(path: path)
        var inputs: [DumpInput] = []
        var skipped: [SkippedMember] = []
        for member in archive.members {
            if let reason = member.skipReason {
                skipped.append(SkippedMember(name: archive.name(of: member), reason: reason))
            } else {
                inputs.append(DumpInput(name: archive.name(of: member), path: path, archive: archive, member: member))
            }
        }
        // Yesterday's rejects zipped up with the dumps (`zip -r dumps.zip dumps/`) are skipped as
        // they are among several files given: read as a dump, their rows would be stored with
        // the reasons under extra. Named by their name here (a member is not looked into
        // before it is read); a rejects file alone in an archive is read, as one given alone is.
        if inputs.count > 1 {
            let isRejects = { (d: DumpInput) -> Bool in
                var name = (d.memberName ?? "").lowercased()
                if name.hasSuffix(".gz") { name.removeLast(3) }
                return name.hasSuffix(".rejects.csv") || name.hasSuffix(".rejects.geojson")
            }
            for d in inputs where isRejects(d) {
                skipped.append(SkippedMember(name: d.name, reason: "a PoiKit rejects file; import it on its own to retry its rows"))
            }
            inputs.removeAll(where: isRejects)
        }
        if inputs.isEmpty {
            // An archive with nothing to read is a failed download or the wrong file, never an
            // empty success: a cron job would report it as one every night.
            let named = archive.members.prefix(5).map { "\($0.name) (\($0.skipReason ?? "not read"))" }
            let more = archive.members.count > 5 ? ["and \(archive.members.count - 5) more"] : []
            throw .noDumpInArchive(file: path, skipped: named + more)
        }
        return (inputs, skipped)
    }

    /// A reader over it (a member is inflated as it is read, under `options.limits`' caps).
    public func reader(options: ReadOptions) throws(FormatError) -> PlaceReader {
        if let archive, let member {
            return try PlaceReader(source: archive.source(for: member, limits: options.limits), options: options)
        }
        return try PlaceReader(path: path, options: options)
    }
}

/// A member of a zip archive that is not read (a README, an image, macOS metadata), said in the
/// summary.
public struct SkippedMember: Sendable, Codable, Equatable {
    /// `ARCHIVE:MEMBER`.
    public var name: String
    public var reason: String

    public init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }
}

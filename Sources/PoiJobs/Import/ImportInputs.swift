import PoiFiles
import PoiFormats

/// The inputs of one import run, every one checked before anything is written: a dump rotated
/// away between cron's glob and the open (or `-` named twice) is refused while nothing is
/// imported, not after the first inputs were, when the error would be all the run could say.
struct ImportInputs {
    /// The files named, in order (rejects files skipped among them included).
    let files: [String]
    /// The files read: the named ones less `skippedRejectsFiles`. No rejects file may replace or
    /// delete one of them.
    let inputs: [String]
    /// Earlier runs' rejects files named among other inputs, which are not read.
    let skippedRejectsFiles: Set<String>
    /// What each input is read as: itself, or a zip archive's dump members in name order, each
    /// imported as a file of its own.
    let dumpsByInput: [String: [DumpInput]]
    /// Members of zip archives that are not dumps (a README, an image…).
    let skippedMembers: [SkippedMember]

    /// Every dump read, in order.
    var dumps: [DumpInput] { inputs.flatMap { dumpsByInput[$0] ?? [] } }

    init(files: [String], options: ImportOptions) throws(JobError) {
        self.files = files
        if files.count > 1 && options.rejectsPath != nil {
            throw .configuration(.oneRejectsFileForManyInputs(inputs: files.count))
        }
        if let rejects = options.rejectsPath, let input = files.first(where: { FileIdentity.same($0, rejects) }) {
            throw .file(.outputIsInput(path: rejects, input: input))
        }
        // Yesterday's rejects beside the dumps (`dumps/*.csv` matches them): not a dump. Named
        // alone, a fixed rejects file is imported (fix and import again). A skipped one is not an
        // input either: tonight's rejects replace it (or, on a clean night, remove it).
        let skipped = files.count > 1 ? Set(files.filter(RejectsLocation.isOwnRejectsFile)) : []
        skippedRejectsFiles = skipped
        inputs = files.filter { !skipped.contains($0) }
        if inputs.filter({ $0 == "-" }).count > 1 {
            throw .input(.cannotOpen(file: "-", reason: "standard input is named more than once"))
        }
        var expanded: [String: [DumpInput]] = [:]
        var skippedMembers: [SkippedMember] = []
        for file in inputs {
            do { try ByteSource.checkReadable(path: file) } catch { throw .input(error) }
            do {
                let (members, skippedOfFile) = try DumpInput.expand(file)
                expanded[file] = members
                skippedMembers += skippedOfFile
            } catch { throw .input(error) }
        }
        dumpsByInput = expanded
        self.skippedMembers = skippedMembers
        let dumpCount = inputs.reduce(0) { $0 + (expanded[$1]?.count ?? 0) }
        if dumpCount > 1 && options.rejectsPath != nil {
            throw .configuration(.oneRejectsFileForManyInputs(inputs: dumpCount))
        }
        // Keeping each key's last record reads the inputs twice (`ImportRun.findLastRecords`).
        if options.onDuplicate == .last, let once = inputs.first(where: FilePaths.isReadOnce) {
            throw .configuration(.lastWinsNeedsFiles(input: once))
        }
    }
}

import ArgumentParser

/// `poi`: the command line of PoiKit. Commands parse arguments, call into PoiJobs/PoiStore/
/// PoiImaging/PoiFormats, format output and pick the exit status; they hold no pipeline logic.
@main
struct Poi: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "poi",
        abstract: "Batch tools for point-of-interest data in MongoDB: import, export, thumbnails.",
        discussion: """
        Exit status: 0 all good, 1 finished with rejected rows or files, 2 usage or configuration \
        error, 3 database or I/O failure.

        The database URI comes from --uri, else $MONGODB_URI, else mongodb://127.0.0.1:27017.
        """,
        version: PoiVersion.string,
        subcommands: [
            DoctorCommand.self,
        ]
    )
}

enum PoiVersion {
    static let string = "0.1.0"
}

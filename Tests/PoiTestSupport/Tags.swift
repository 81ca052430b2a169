import Testing

extension Tag {
    /// Needs no database and spawns no process: `make test-unit` runs these suites, without a
    /// server, in well under a minute.
    @Tag public static var unit: Self
    /// Needs the live database server (MONGODB_URI, started by `make test`).
    @Tag public static var live: Self
    /// Spawns a process: the built `poi`, Python, curl, gzip, GDAL.
    @Tag public static var process: Self
    /// Asserts CPU time or memory, so a loaded machine can make it fail.
    @Tag public static var budget: Self
}

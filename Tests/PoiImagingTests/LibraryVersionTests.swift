import Testing
@testable import PoiImaging

@Test func linkedLibrariesReportTheirVersions() {
    // Debian bookworm ships libjpeg-turbo 2.1.x and libpng 1.6.x; the point is that both are linked
    // and answer, not which patch release the machine has.
    #expect(ImagingLibraries.libjpegTurbo.hasPrefix("2.") || ImagingLibraries.libjpegTurbo.hasPrefix("3."))
    #expect(ImagingLibraries.libpng.hasPrefix("1.6."))
}

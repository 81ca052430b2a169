import CCodecs

/// Versions of the image libraries this binary runs with (for `poi doctor`).
public enum ImagingLibraries {
    public static var libjpegTurbo: String { String(cString: ccodecs_libjpeg_turbo_version()) }
    public static var libpng: String { String(cString: ccodecs_libpng_version()) }
}

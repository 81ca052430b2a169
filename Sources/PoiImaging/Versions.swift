import CCodecs

/// Versions of the image libraries this binary runs with (for `poi doctor`).
public enum ImagingLibraries {
    public static var libjpegTurbo: String { String(cString: ccodecs_libjpeg_turbo_version()) }
    public static var libpng: String { String(cString: ccodecs_libpng_version()) }
    /// libwebp's encoder, "1.2.4" (its version is a packed integer, not a string).
    public static var libwebp: String {
        let v = Int(ccodecs_libwebp_version())
        return "\(v >> 16).\((v >> 8) & 0xFF).\(v & 0xFF)"
    }
}

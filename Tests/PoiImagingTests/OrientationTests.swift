import PoiTestSupport
import Testing
@testable import PoiImaging

/// The upright picture is 60x40 with a red 12x12 block in its top-left corner; each fixture stores
/// it transformed so that EXIF orientation 1...8 (JPEG APP1, PNG eXIf) brings it back.
@Suite(.tags(.process)) struct OrientationTests {
    static func isRed(_ p: PixelBuffer, _ x: Int, _ y: Int) -> Bool {
        p.sample(x: x, y: y, channel: 0) > 200 && p.sample(x: x, y: y, channel: 1) < 70
            && p.sample(x: x, y: y, channel: 2) < 70
    }

    static let files = (1...8).flatMap { ["orientation_\($0).jpg", "orientation_\($0).png"] }
    static func orientation(of file: String) -> Int { Int(String(file.dropFirst(12).prefix(1)))! }

    @Test(arguments: files)
    func probeReportsOrientation(file: String) throws {
        let orientation = Self.orientation(of: file)
        let fx = try Fixtures.load()
        let info = try ImageCodec.probe(try fx.bytes(file))
        #expect(info.orientation == orientation)
        #expect(info.width == (orientation >= 5 ? 40 : 60))
        #expect(info.orientedWidth == 60)
        #expect(info.orientedHeight == 40)
    }

    @Test(arguments: files)
    func thumbnailIsUprightWithTheMarkTopLeft(file: String) throws {
        let fx = try Fixtures.load()
        let spec = try ThumbnailSpec(width: 30, height: 30, fit: .inside, format: .png)
        let thumb = try Thumbnailer.make(from: try fx.bytes(file), spec: spec)
        #expect(thumb.width == 30)
        #expect(thumb.height == 20)
        #expect(thumb.format == .png)
        let p = try ImageCodec.decode(thumb.data)
        #expect(p.width == 30 && p.height == 20)
        #expect(Self.isRed(p, 2, 2))
        #expect(!Self.isRed(p, 27, 2))
        #expect(!Self.isRed(p, 2, 17))
        #expect(!Self.isRed(p, 27, 17))
    }

    @Test(arguments: files)
    func fullDecodeCanApplyOrientation(file: String) throws {
        let fx = try Fixtures.load()
        let p = try ImageCodec.decode(try fx.bytes(file), orient: true)
        #expect(p.width == 60 && p.height == 40)
        #expect(Self.isRed(p, 3, 3))
        #expect(!Self.isRed(p, 56, 3))
        #expect(!Self.isRed(p, 3, 36))
        #expect(!Self.isRed(p, 56, 36))
    }
}

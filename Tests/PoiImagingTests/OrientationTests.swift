import Testing
@testable import PoiImaging

/// The upright picture is 60x40 with a red 12x12 block in its top-left corner; each fixture stores
/// it transformed so that EXIF orientation 1...8 brings it back.
@Suite struct OrientationTests {
    static func isRed(_ p: PixelBuffer, _ x: Int, _ y: Int) -> Bool {
        p.sample(x: x, y: y, channel: 0) > 200 && p.sample(x: x, y: y, channel: 1) < 70
            && p.sample(x: x, y: y, channel: 2) < 70
    }

    @Test(arguments: 1...8)
    func probeReportsOrientation(orientation: Int) throws {
        let fx = try Fixtures.load()
        let info = try ImageCodec.probe(try fx.bytes("orientation_\(orientation).jpg"))
        #expect(info.orientation == orientation)
        #expect(info.width == (orientation >= 5 ? 40 : 60))
        #expect(info.orientedWidth == 60)
        #expect(info.orientedHeight == 40)
    }

    @Test(arguments: 1...8)
    func thumbnailIsUprightWithTheMarkTopLeft(orientation: Int) throws {
        let fx = try Fixtures.load()
        let spec = try ThumbnailSpec(width: 30, height: 30, fit: .inside, format: .png)
        let thumb = try Thumbnailer.make(from: try fx.bytes("orientation_\(orientation).jpg"), spec: spec)
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

    @Test(arguments: 1...8)
    func fullDecodeCanApplyOrientation(orientation: Int) throws {
        let fx = try Fixtures.load()
        let p = try ImageCodec.decode(try fx.bytes("orientation_\(orientation).jpg"), orient: true)
        #expect(p.width == 60 && p.height == 40)
        #expect(Self.isRed(p, 3, 3))
        #expect(!Self.isRed(p, 56, 3))
        #expect(!Self.isRed(p, 3, 36))
        #expect(!Self.isRed(p, 56, 36))
    }
}

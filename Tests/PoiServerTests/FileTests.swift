import Foundation
import PoiStore
import PoiTestSupport
import Testing

/// Uploads and downloads, and the app's own conversation.
@Suite("poi serve files", .tags(.live, .process), .serialized, .liveServer)
struct FileTests {
    static func uploadedId(_ r: HTTPResult) throws -> String {
        let id = try #require((r.json as? [String: Any])?["_id"] as? String)
        #expect(r.text == #"{"_id":"\#(id)"}"#)
        return id
    }

    /// The tutorial app's own sequence of requests.
    @Test func appConversation() throws {
        let s = try ServeHarness("app")
        #expect(try s.get("/locations", headers: ["Accept": "application/json"]).text == "[]")
        let png = try ServeHarness.sample("coffee-palette.png")
        let up = try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png)
        #expect(up.status == 201)
        let imageId = try Self.uploadedId(up)
        let place = try s.postJSON("/locations", #"{"name":"Cafe","placename":"Main St","location":{"type":"Point","coordinates":[-0.1,51.5]},"details":"good","categories":["cafe"],"imageId":"\#(imageId)"}"#)
        #expect(place.status == 201)
        let placeId = try #require((place.json as? [String: Any])?["_id"] as? String)
        let put = try s.request("PUT", "/locations/\(placeId)", headers: ["Content-Type": "application/json"],
                                body: Array(#"{"name":"Cafe 2","location":{"type":"Point","coordinates":[-0.1,51.5]},"categories":["cafe"],"imageId":"\#(imageId)"}"#.utf8))
        #expect(put.status == 200)
        let box = #"{"location":{"$geoWithin":{"$box":[[-1,51],[1,52]]}}}"#
        let found = try s.get("/locations?query=\(urlEncoded(box))", headers: ["Accept": "application/json"])
        #expect(((found.json as? [[String: Any]]) ?? []).map { $0["name"] as? String } == ["Cafe 2"])
        let inQ = #"{"categories":{"$in":["cafe","bar"]}}"#
        #expect(((try s.get("/locations?query=\(urlEncoded(inQ))").json as? [[String: Any]]) ?? []).count == 1)
        let image = try s.get("/files/\(imageId)")
        #expect(image.status == 200)
        #expect(image.body == png)
        #expect(image.header("content-type") == "image/png")
        #expect(image.header("content-length") == String(png.count))

        // Stored as the store stores it: bytes at uploads/<id>.png, a files document with
        // PoiKit's fields, and a thumbnail linked by thumbnailOf.
        #expect(FileManager.default.contents(atPath: s.uploads + "/\(imageId).png").map { [UInt8]($0) } == png)
        let doc = try #require(try s.database.files.findOne(["_id": .objectId(ObjectId(hex: imageId)!)]))
        #expect(doc["content-type"] == .string("image/png"))
        #expect(doc["ext"] == .string(".png"))
        #expect(doc["length"]?.int64Value == Int64(png.count))
        #expect(doc["role"] == .string("original"))
        #expect(doc["sha256"]?.stringValue?.count == 64)
        #expect(try s.count("files", ["thumbnailOf": .objectId(ObjectId(hex: imageId)!)]) == 1)
        let thumb = try s.get("/files/\(imageId)/thumbnail")
        #expect(thumb.status == 200)
        #expect(thumb.body.starts(with: [0x89, 0x50, 0x4E, 0x47]) || thumb.body.starts(with: [0xFF, 0xD8, 0xFF]))
        #expect(s.stop() == 0)
    }

    /// main's PoiStore rule: bytes that are not the document's length are damaged and never
    /// served as if whole; bytes that are gone are the reference's 404.
    @Test func damagedAndMissingBytes() throws {
        let s = try ServeHarness("damaged")
        let png = try ServeHarness.sample("coffee-palette.png")
        let id = try Self.uploadedId(try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png))
        let path = s.uploads + "/\(id).png"
        #expect(truncate(path, off_t(png.count / 2)) == 0)
        let damaged = try s.get("/files/\(id)")
        #expect(damaged.status == 500)
        #expect(damaged.text.contains("damaged"))
        #expect(unlink(path) == 0)
        let missing = try s.get("/files/\(id)")
        #expect(missing.status == 404)
        #expect(s.stop() == 0)
    }

    @Test func multipartUpload() throws {
        let s = try ServeHarness("multipart")
        let jpeg = try ServeHarness.sample("coffee.jpg")
        let boundary = "----poikit\(UUID().uuidString)"
        var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhello\r\n".utf8)
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../../etc/coffee.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
        body += jpeg
        body += Array("\r\n--\(boundary)--\r\n".utf8)
        let r = try s.request("POST", "/files", headers: ["Content-Type": "multipart/form-data; boundary=\(boundary)"], body: body)
        #expect(r.status == 201)
        let id = try Self.uploadedId(r)
        #expect(try s.get("/files/\(id)").body == jpeg)
        let doc = try #require(try s.database.files.findOne(["_id": .objectId(ObjectId(hex: id)!)]))
        #expect(doc["originalName"] == .string("coffee.jpg"))
        #expect(doc["ext"] == .string(".jpeg"))
    }

    @Test func conditionalAndRanges() throws {
        let s = try ServeHarness("ranges")
        let png = try ServeHarness.sample("brick.png")
        let id = try Self.uploadedId(try s.request("POST", "/files", headers: ["Content-Type": "image/png"], body: png))
        let full = try s.get("/files/\(id)")
        let etag = try #require(full.header("etag"))
        #expect(etag.count == 66 && etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
        let lastModified = try #require(full.header("last-modified"))
        #expect(try s.get("/files/\(id)", headers: ["If-None-Match": etag]).status == 304)
        #expect(try s.get("/files/\(id)", headers: ["If-None-Match": "\"other\""]).status == 200)
        #expect(try s.get("/files/\(id)", headers: ["If-Modified-Since": lastModified]).status == 304)
        let n = png.count

        let suffix = try s.get("/files/\(id)", headers: ["Range": "bytes=-500"])
        #expect(suffix.status == 206)
        #expect(suffix.body == Array(png[(n - 500)...]))
        #expect(suffix.header("content-range") == "bytes \(n - 500)-\(n - 1)/\(n)")
        let open = try s.get("/files/\(id)", headers: ["Range": "bytes=100-"])
        #expect(open.status == 206)
        #expect(open.body == Array(png[100...]))
        let middle = try s.get("/files/\(id)", headers: ["Range": "bytes=10-19"])
        #expect(middle.body == Array(png[10...19]))
        #expect(middle.header("content-length") == "10")
        let clamp = try s.get("/files/\(id)", headers: ["Range": "bytes=\(n - 2)-\(n + 1000)"])
        #expect(clamp.status == 206)
        #expect(clamp.body == Array(png[(n - 2)...]))
        let bigSuffix = try s.get("/files/\(id)", headers: ["Range": "bytes=-\(n * 2)"])
        #expect(bigSuffix.status == 206)
        #expect(bigSuffix.body == png)
        let past = try s.get("/files/\(id)", headers: ["Range": "bytes=\(n)-"])
        #expect(past.status == 416)
        #expect(past.header("content-range") == "bytes */\(n)")
        #expect(try s.get("/files/\(id)", headers: ["Range": "bytes=-0"]).status == 416)
        // Several ranges, a bad syntax, another unit: the whole file with 200.
        for header in ["bytes=0-1,5-6", "bytes=5-2", "items=0-1", "bytes=abc"] {
            let r = try s.get("/files/\(id)", headers: ["Range": header])
            #expect(r.status == 200, "\(header)")
            #expect(r.body == png)
        }
        let head = try s.request("HEAD", "/files/\(id)")
        #expect(head.status == 200)
        #expect(head.header("content-length") == String(n))
        #expect(head.header("etag") == etag)
        #expect(try s.get("/files/\(id)", headers: ["Range": "bytes=0-3", "If-Range": "\"stale\""]).status == 200)
        // If-Range with a date (new-user trial): the file's Last-Modified resumes, any
        // other date gets the whole file.
        let modified = try #require(head.header("last-modified"))
        let resumed = try s.get("/files/\(id)", headers: ["Range": "bytes=0-3", "If-Range": modified])
        #expect(resumed.status == 206 && resumed.body == Array(png[0...3]))
        let other = try s.get("/files/\(id)", headers: ["Range": "bytes=0-3", "If-Range": "Tue, 14 Nov 2023 22:13:20 GMT"])
        #expect(other.status == 200 && other.body == png)
        #expect(try s.get("/files/\(id)", headers: ["Range": "bytes=0-3", "If-Range": "W/\"x\""]).status == 200)
    }
}

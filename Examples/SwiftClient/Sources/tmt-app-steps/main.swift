// What the TourMyTown app does, step by step, through the client swift-openapi-generator made
// from `poi serve`'s own /openapi.json: typed calls only, no hand-written HTTP. Each step prints
// one line, `step NAME: ok key=value…` or `step NAME: FAILED why`; scripts/client-test.py checks
// the `ok` lines against the database, and the last line counts the steps.
//
//   tmt-app-steps http://127.0.0.1:3000 photo.jpg
import Foundation
import TourMyTownAPI

struct StepFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs the steps in order; a step that throws is FAILED with the reason, and the next ones run.
/// On the main actor, with the steps' shared values (the ids one step makes and the next uses).
@MainActor final class Steps {
    private(set) var passed = 0
    private(set) var failed = 0

    func run(_ name: String, _ body: @MainActor () async throws -> String) async {
        do {
            let detail = try await body()
            passed += 1
            print("step \(name): ok \(detail)")
        } catch {
            failed += 1
            print("step \(name): FAILED \(error)")
        }
    }
}

/// The `after` value of a `Link: <…&after=ID>; rel="next"` header: where the next page starts.
func nextPageStart(_ link: String?) -> String? {
    guard let link, link.contains("rel=\"next\""), let start = link.range(of: "after=") else { return nil }
    return String(link[start.upperBound...].prefix { $0.isHexDigit })
}

/// A JSON value as the document's `JSONValue` (the body of a new or replaced place).
func json(_ value: Any) -> Components.Schemas.JSONValue {
    switch value {
    case let s as String: return .init(value3: s)
    case let n as Double: return .init(value4: n)
    case let b as Bool: return .init(value5: b)
    case let items as [Any]: return .init(value2: items.map(json))
    case let object as [String: Any]: return .init(value1: .init(additionalProperties: object.mapValues { json($0) }))
    default: return .init()
    }
}

func newPlace(_ fields: [String: Any]) -> Components.Schemas.NewDocument {
    .init(additionalProperties: fields.mapValues { json($0) })
}

/// A field of a stored document, as the server sent it.
func field(_ document: Components.Schemas.Document, _ name: String) -> String? {
    document.additionalProperties.value[name] as? String
}

func bytes(_ body: HTTPBody) async throws -> [UInt8] {
    Array(try await Data(collecting: body, upTo: 64 << 20))
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let server = URL(string: arguments[1]),
      let photo = FileManager.default.contents(atPath: arguments[2]).map(Array.init) else {
    print("usage: tmt-app-steps SERVER_URL PHOTO.jpg")
    exit(2)
}
let client = Client.tourMyTown(serverURL: server)
let steps = Steps()

await steps.run("health") {
    guard case .ok(let ok) = try await client.health() else { throw StepFailure("not 200") }
    let health = try ok.body.json
    guard health.ok else { throw StepFailure("problems: \(health.problems)") }
    return "ok=true"
}

var listTag: String?
await steps.run("list") {
    guard case .ok(let ok) = try await client.listLocations() else { throw StepFailure("not 200") }
    listTag = ok.headers.eTag
    return "count=\(try ok.body.json.count)"
}

await steps.run("list-not-modified") {
    guard let listTag else { throw StepFailure("the list had no ETag") }
    let output = try await client.listLocations(headers: .init(ifNoneMatch: listTag))
    guard case .notModified = output else { throw StepFailure("expected 304, got \(output)") }
    return "status=304"
}

// Europe, as the app's map asks for the places in view: a `$box` of [west, south], [east, north].
await steps.run("box") {
    let box = #"{"location":{"$geoWithin":{"$box":[[-10,35],[30,60]]}}}"#
    guard case .ok(let ok) = try await client.listLocations(query: .init(query: box)) else { throw StepFailure("not 200") }
    let ids = try ok.body.json.compactMap { field($0, "_id") }.sorted()
    return "ids=\(ids.joined(separator: ","))"
}

await steps.run("pages") {
    var after: String?
    var ids: [String] = []
    var pages = 0
    repeat {
        guard case .ok(let ok) = try await client.listLocations(query: .init(limit: 3, after: after)) else {
            throw StepFailure("page \(pages + 1) not 200")
        }
        pages += 1
        ids += try ok.body.json.compactMap { field($0, "_id") }
        after = nextPageStart(ok.headers.link)
        if pages > 1000 { throw StepFailure("the Link pages do not end") }
    } while after != nil
    guard Set(ids).count == ids.count else { throw StepFailure("a place came twice") }
    return "pages=\(pages) count=\(ids.count)"
}

var placeId = ""
await steps.run("create") {
    let place = newPlace(["name": "Client Bridge", "placename": "Testville", "details": "made by tmt-app-steps",
                          "location": ["type": "Point", "coordinates": [2.35, 48.85]], "categories": ["bridge"]])
    guard case .created(let created) = try await client.createLocation(body: .json(place)) else { throw StepFailure("not 201") }
    placeId = try created.body.json._id
    return "id=\(placeId)"
}

await steps.run("read") {
    guard case .ok(let ok) = try await client.getLocation(path: .init(entity: placeId)) else { throw StepFailure("not 200") }
    guard case .json(let place) = ok.body else { throw StepFailure("no place came back (an empty body)") }
    guard field(place, "name") == "Client Bridge" else { throw StepFailure("name is \(field(place, "name") ?? "missing")") }
    return "id=\(placeId) name=Client Bridge"
}

await steps.run("replace") {
    let place = newPlace(["name": "Client Bridge (renamed)", "location": ["type": "Point", "coordinates": [2.35, 48.85]]])
    guard case .ok(let ok) = try await client.replaceLocation(path: .init(entity: placeId), body: .json(place)) else {
        throw StepFailure("not 200")
    }
    guard field(try ok.body.json, "name") == "Client Bridge (renamed)" else { throw StepFailure("the answer is not the new place") }
    return "id=\(placeId) name=Client Bridge (renamed)"
}

var rawId = ""
await steps.run("upload-raw") {
    guard case .created(let created) = try await client.uploadFile(body: .jpeg(HTTPBody(photo))) else { throw StepFailure("not 201") }
    rawId = try created.body.json._id
    return "id=\(rawId) bytes=\(photo.count)"
}

var multipartId = ""
await steps.run("upload-multipart") {
    let form: MultipartBody<Operations.UploadFile.Input.Body.MultipartFormPayload> = [
        .file(.init(payload: .init(body: HTTPBody(photo)), filename: "photo.jpg")),
    ]
    guard case .created(let created) = try await client.uploadFile(body: .multipartForm(form)) else { throw StepFailure("not 201") }
    multipartId = try created.body.json._id
    return "id=\(multipartId) bytes=\(photo.count)"
}

var fileTag = ""
await steps.run("download") {
    guard case .ok(let ok) = try await client.downloadFile(path: .init(id: rawId)) else { throw StepFailure("not 200") }
    guard case .jpeg(let body) = ok.body else { throw StepFailure("not image/jpeg") }
    guard try await bytes(body) == photo else { throw StepFailure("not the uploaded bytes") }
    fileTag = ok.headers.eTag ?? ""
    return "id=\(rawId) bytes=\(photo.count)"
}

await steps.run("thumbnail") {
    guard case .ok(let ok) = try await client.downloadThumbnail(path: .init(id: rawId)) else { throw StepFailure("not 200") }
    guard case .jpeg(let body) = ok.body else { throw StepFailure("not image/jpeg") }
    let thumbnail = try await bytes(body)
    guard thumbnail.starts(with: [0xFF, 0xD8, 0xFF]) else { throw StepFailure("not a JPEG") }
    return "id=\(rawId) bytes=\(thumbnail.count)"
}

await steps.run("download-not-modified") {
    let output = try await client.downloadFile(path: .init(id: rawId), headers: .init(ifNoneMatch: fileTag))
    guard case .notModified = output else { throw StepFailure("expected 304, got \(output)") }
    return "status=304"
}

await steps.run("download-range") {
    let output = try await client.downloadFile(path: .init(id: rawId), headers: .init(range: "bytes=0-99"))
    guard case .partialContent(let part) = output else { throw StepFailure("expected 206, got \(output)") }
    guard case .jpeg(let body) = part.body, try await bytes(body) == Array(photo.prefix(100)) else {
        throw StepFailure("not the first 100 bytes")
    }
    guard part.headers.contentRange == "bytes 0-99/\(photo.count)" else {
        throw StepFailure("Content-Range \(part.headers.contentRange ?? "missing")")
    }
    return "status=206 bytes=100"
}

// A place made and deleted again, so that the one above stays for the database check.
await steps.run("delete") {
    guard case .created(let created) = try await client.createLocation(body: .json(newPlace(["name": "Short-lived"]))) else {
        throw StepFailure("create: not 201")
    }
    let id = try created.body.json._id
    guard case .ok(let ok) = try await client.deleteLocation(path: .init(entity: id)) else { throw StepFailure("not 200") }
    guard try ok.body.json.deletedCount == 1 else { throw StepFailure("nothing deleted") }
    // The reference's answer for a place that is not there: an empty 200, told apart by its type.
    guard case .ok(let again) = try await client.getLocation(path: .init(entity: id)) else { throw StepFailure("read: not 200") }
    guard case .plainText = again.body else { throw StepFailure("the deleted place is still readable") }
    return "id=\(id)"
}

await steps.run("delete-file") {
    guard case .created(let created) = try await client.uploadFile(body: .jpeg(HTTPBody(photo))) else {
        throw StepFailure("upload: not 201")
    }
    let id = try created.body.json._id
    guard case .ok(let ok) = try await client.deleteFile(path: .init(id: id)) else { throw StepFailure("not 200") }
    guard try ok.body.json.deletedCount == 1 else { throw StepFailure("nothing deleted") }
    let output = try await client.downloadFile(path: .init(id: id))
    guard case .notFound = output else { throw StepFailure("the deleted file still answers \(output)") }
    return "id=\(id)"
}

print("tmt-app-steps: \(steps.passed) passed, \(steps.failed) failed")
exit(steps.failed == 0 ? 0 : 1)

import Hummingbird
import HummingbirdCore
import HTTPTypes
import NIOCore
import PoiFormats
import PoiJobs
import PoiStore

/// `GET/POST /:collection`, `GET/PUT/DELETE /:collection/:entity`: the reference's generic
/// collection API, with the query guarded and results capped.
struct CollectionRoutes: Sendable {
    let store: StoreGateway
    let configuration: ServerConfiguration

    /// MongoDB's rules, checked before anything reaches the server: no empty name, no `$` or NUL,
    /// nothing in the `system.` namespace.
    static func validatedCollection(_ name: String) throws(APIError) -> String {
        if name.isEmpty { throw .badCollection("a collection name cannot be empty") }
        if name.contains("$") { throw .badCollection("a collection name cannot contain '$'") }
        if name.unicodeScalars.contains(where: { $0.value == 0 }) { throw .badCollection("a collection name cannot contain NUL") }
        if name.hasPrefix("system.") { throw .badCollection("the system.* collections are not served") }
        if name.hasPrefix(".") || name.hasSuffix(".") { throw .badCollection("a collection name cannot start or end with '.'") }
        if name.utf8.count > 200 { throw .badCollection("a collection name has at most 200 bytes") }
        return name
    }

    /// The reference accepts exactly 24 hex digits.
    static func validatedId(_ text: String) throws(APIError) -> ObjectId {
        guard let id = ObjectId(hex: text) else { throw .invalidId }
        return id
    }

    func list(_ request: Request, _ collection: String) async throws(APIError) -> Response {
        let collection = try Self.validatedCollection(collection)
        var filter = BSONDocument()
        if let query = request.queryValue("query"), !query.isEmpty {
            filter = try Self.userQuery(query)
        }
        var options = FindOptions()
        let cap = configuration.maxResults
        var limit = cap
        if let text = request.queryValue("limit") {
            guard let n = Int(text), n >= 0 else { throw .badRequest("limit must be a whole number ≥ 0") }
            if n > 0 { limit = min(n, cap) }
        }
        if let text = request.queryValue("skip") {
            guard let n = Int(text), n >= 0 else { throw .badRequest("skip must be a whole number ≥ 0") }
            options.skip = n
        }
        if let text = request.queryValue("sort"), !text.isEmpty { options.sort = try Self.sortDocument(text) }
        // Keyset paging: `after=ID` continues in `_id` order after that document, so pages stay
        // put when documents are added meanwhile (`skip` shifts, and costs O(n) on the server).
        if let text = request.queryValue("after") {
            let after = try Self.validatedId(text)
            guard options.sort == nil || options.sort == ["_id": .int32(1)] else {
                throw .badRequest("after pages in _id order; it cannot be combined with another sort")
            }
            let page: BSONDocument = ["_id": .document(["$gt": .objectId(after)])]
            filter = filter.isEmpty ? page : ["$and": .array([.document(filter), .document(page)])]
            options.sort = ["_id": .int32(1)]
        }
        if let text = request.queryValue("fields"), !text.isEmpty {
            var projection = try Self.projection(text)
            // `location` is a Feature's geometry, not one of its properties: without it every
            // place would be dropped and the answer an empty FeatureCollection.
            if request.queryValue("format") == "geojson", projection["location"] == nil {
                projection.append("location", .int32(1))
            }
            options.projection = projection
        }
        // One more than the cap tells whether the answer was cut short (a header says so; the
        // body stays what the reference sends).
        options.limit = limit + 1
        options.batchSize = min(limit + 1, 1000)
        var documents = try await store.find(collection: collection, filter: filter, options: options)
        let truncated = documents.count > limit
        // A page that is cut short gets a next link, which needs `_id` order. Under the cap the
        // answer stays the reference's (natural order, byte for byte); only a cut one is asked
        // again in `_id` order, unless the client chose an order of its own.
        let pagesById = options.sort == nil || options.sort == ["_id": .int32(1)]
        if truncated && options.sort == nil {
            options.sort = ["_id": .int32(1)]
            documents = try await store.find(collection: collection, filter: filter, options: options)
        }
        if truncated { documents.removeLast(max(0, documents.count - limit)) }
        let next = truncated && pagesById ? documents.last?["_id"]?.objectIdValue : nil

        let format = request.queryValue("format")
        var response: Response
        if let format, format != "json" {
            guard format == "geojson" else { throw .badRequest("format must be json or geojson") }
            guard collection == StoreLayout.locations else { throw .badRequest("format=geojson is for locations only") }
            var writer = GeoJSONWriter(sink: MemorySink())
            do {
                for doc in documents {
                    if let feature = PlaceDocument.feature(from: doc) { try writer.write(feature) }
                }
                try writer.finish()
            } catch {
                throw .internalError("GeoJSON output failed: \(error)")
            }
            response = Reply.bytesResponse(.ok, contentType: "application/geo+json", writer.sink.bytes)
        } else if Self.wantsHTML(request.headers[.accept]) {
            response = Reply.html(ExpressJSON.htmlTable(documents, collection: collection))
        } else {
            var out: [UInt8] = [0x5B]
            for (i, doc) in documents.enumerated() {
                if i > 0 { out.append(0x2C) }
                ExpressJSON.append(doc, to: &out)
            }
            out.append(0x5D)
            response = Reply.json(out)
        }
        // JSON or an HTML table by the Accept header: a shared cache must key on it.
        response.headers[.vary] = "Accept"
        if truncated { response.headers[HTTPField.Name("X-Results-Truncated")!] = "limit \(limit)" }
        if let next { response.headers[HTTPField.Name("Link")!] = "<\(Self.nextPage(request.uri, after: next))>; rel=\"next\"" }
        return response
    }

    /// The same path and parameters with `after` set to `id` (RFC 8288's next link; the other
    /// parameters are kept exactly as sent) and without `skip`: it was spent reaching this page,
    /// and kept it would skip that many places again on every page a client follows.
    static func nextPage(_ uri: URI, after id: ObjectId) -> String {
        let kept = (uri.query ?? "").split(separator: "&").filter {
            guard !$0.isEmpty else { return false }
            let name = QueryString.decode($0.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0])
            return name != "after" && name != "skip"
        }
        return uri.path + "?" + (kept.map(String.init) + ["after=\(id.hex)"]).joined(separator: "&")
    }

    /// JSON unless the client asks for HTML and not JSON (a browser): `curl` and the app get JSON.
    static func wantsHTML(_ accept: String?) -> Bool {
        guard let accept = accept?.lowercased() else { return false }
        return accept.contains("text/html") && !accept.contains("application/json")
    }

    /// The user's query, parsed and refused when it would run JavaScript on the server.
    static func userQuery(_ text: String) throws(APIError) -> BSONDocument {
        do {
            return try PlaceFilter.userQuery(json: text)
        } catch {
            if case .refusedQuery(let reason) = error {
                if let op = QueryGuard.forbiddenOperators.first(where: { reason.hasPrefix($0) }) {
                    throw .forbiddenOperator(op, reason: reason)
                }
                if reason.hasPrefix("JavaScript code") { throw .forbiddenOperator("$code", reason: reason) }
            }
            throw .badQuery
        }
    }

    /// `sort=name,-created_at` or `sort={"name":1}`.
    static func sortDocument(_ text: String) throws(APIError) -> BSONDocument {
        if text.hasPrefix("{") {
            let doc: BSONDocument
            do { doc = try BSONDocument(json: text) } catch { throw .badRequest("sort is not a JSON object") }
            for (key, value) in doc {
                guard let v = value.int64Value, v == 1 || v == -1 else { throw .badRequest("sort \(key) must be 1 or -1") }
            }
            return doc
        }
        var doc = BSONDocument()
        for field in text.split(separator: ",") {
            let descending = field.hasPrefix("-")
            let name = String(descending ? field.dropFirst() : field)
            try checkFieldName(name, "sort")
            doc.append(name, .int32(descending ? -1 : 1))
        }
        return doc
    }

    /// `fields=name,location`: those fields (and `_id`).
    static func projection(_ text: String) throws(APIError) -> BSONDocument {
        var doc = BSONDocument()
        for field in text.split(separator: ",") {
            let name = String(field)
            try checkFieldName(name, "fields")
            doc.append(name, .int32(1))
        }
        return doc
    }

    static func checkFieldName(_ name: String, _ parameter: String) throws(APIError) {
        guard !name.isEmpty, !name.hasPrefix("$"), !name.unicodeScalars.contains(where: { $0.value == 0 }), name.utf8.count <= 200 else {
            throw .badRequest("\(parameter): \(MediaType.printable(name)) is not a field name")
        }
    }

    func get(_ collection: String, _ entity: String) async throws(APIError) -> Response {
        let collection = try Self.validatedCollection(collection)
        let id = try Self.validatedId(entity)
        guard let doc = try await store.findOne(collection: collection, id: id) else { return Reply.emptyOK() }
        var out: [UInt8] = []
        ExpressJSON.append(doc, to: &out)
        return Reply.json(out)
    }

    /// The body as a document: a JSON object declared as JSON, within the size limit.
    func bodyDocument(_ request: Request) async throws(APIError) -> BSONDocument {
        let declared = request.headers[.contentType]
        if let declared { try Self.checkJSONMediaType(declared) }
        let buffer = try await request.collectBody(limit: configuration.maxJSONBody)
        // An empty body with no type is the reference's empty document; a body with no type is
        // what a `fetch(…, {mode: "no-cors"})` can send too.
        if declared == nil, buffer.readableBytes > 0 {
            throw .unsupportedMediaType("a JSON body needs Content-Type: application/json")
        }
        let text = NodeJSONText.rewritten(String(decoding: buffer.readableBytesView, as: UTF8.self))
        let document: BSONDocument
        do {
            document = ExpressJSON.lastValueWins(try BSONDocument(json: text.isEmpty ? "{}" : text))
        } catch {
            if case .refusedQuery(let reason) = error { throw .badRequest(reason) }
            throw .store(error)
        }
        // `{"$set": …}` is an update, not a document: the database would refuse it as a
        // server fault of the driver's; it is the client's.
        if let key = document.keys.first(where: { $0.hasPrefix("$") }) {
            throw .badRequest("a document's top-level field cannot start with '$': \(MediaType.printable(key))")
        }
        if let path = Self.emptyKeyPath(in: document) {
            throw .badRequest("a field name cannot be empty: " + (path.isEmpty ? "a top-level field" : "a field inside \(MediaType.printable(path))"))
        }
        return document
    }

    /// Where a document holds an empty field name (`{"": 1}`, `{"a": [{"": 1}]}`): the dotted path
    /// of the field that holds it ("" at the top level), or nil. The driver refuses such a
    /// document before sending it, which would otherwise read as a server fault.
    static func emptyKeyPath(in document: BSONDocument, at prefix: String = "") -> String? {
        func inValue(_ value: BSONValue, _ path: String) -> String? {
            switch value {
            case .document(let d): return emptyKeyPath(in: d, at: path)
            case .array(let items):
                for (i, item) in items.enumerated() { if let p = inValue(item, path + ".\(i)") { return p } }
                return nil
            default: return nil
            }
        }
        for (key, value) in document {
            if key.isEmpty { return prefix }
            if let p = inValue(value, prefix.isEmpty ? key : prefix + "." + key) { return p }
        }
        return nil
    }

    /// Only JSON media types (`application/json`, `…+json`) in UTF-8: `text/plain`, form and
    /// multipart bodies are what a web page can send cross-site without a CORS preflight, so
    /// reading them as JSON would let any page the operator visits write (CSRF).
    static func checkJSONMediaType(_ header: String) throws(APIError) {
        let essence = MediaType.essence(of: header)
        guard essence == "application/json" || (essence.hasPrefix("application/") && essence.hasSuffix("+json")) else {
            throw .unsupportedMediaType("a JSON body needs Content-Type: application/json, not \(MediaType.printable(essence))")
        }
        if let charset = MediaType.parameter("charset", of: header)?.lowercased(), charset != "utf-8", charset != "utf8" {
            throw .unsupportedMediaType("a JSON body is read as UTF-8, not \(MediaType.printable(charset))")
        }
    }

    /// Insert the body plus `created_at`; 201 with the object as the reference shows it (its
    /// fields, `created_at`, then the new `_id`).
    func create(_ request: Request, _ collection: String) async throws(APIError) -> Response {
        let collection = try Self.validatedCollection(collection)
        var doc = try await bodyDocument(request)
        doc["created_at"] = .date(.now())
        if doc["_id"] == nil { doc.append("_id", .objectId(ObjectId())) }
        var stored = BSONDocument()
        if let id = doc["_id"] { stored.append("_id", id) }
        for (k, v) in doc where k != "_id" { stored.append(k, v) }
        try await store.insert(collection: collection, document: stored)
        var out: [UInt8] = []
        ExpressJSON.append(doc, to: &out)
        return Reply.json(out, status: .created)
    }

    /// Replace the whole document (upsert), `_id` from the path and `updated_at` added, as the
    /// reference does; 200 with it.
    func replace(_ request: Request, _ collection: String, _ entity: String) async throws(APIError) -> Response {
        let collection = try Self.validatedCollection(collection)
        let id = try Self.validatedId(entity)
        var doc = try await bodyDocument(request)
        doc["_id"] = .objectId(id)
        doc["updated_at"] = .date(.now())
        // A stored file's type and extension are its bytes' (checked when it was uploaded): a
        // client that could set them could have an image served as `text/html` (stored XSS) or
        // point the document at other bytes. Everything else is replaced, as in the reference.
        if collection == StoreLayout.files, let stored = try await store.file(id) {
            doc["content-type"] = .string(stored.contentType)
            doc["ext"] = .string(stored.ext)
        }
        if collection == StoreLayout.locations {
            // The app never sends PoiKit's identity of an imported place: dropping it (as the
            // reference's replace would) makes the next `poi import` of the same file insert the
            // place a second time. Read then replace: an import racing this PUT can at worst
            // see the place without its key once, as with the reference.
            let kept = Self.keptOnReplace.filter { doc[$0] == nil }
            if !kept.isEmpty, let stored = try await store.findOne(collection: collection, id: id) {
                for field in kept { if let value = stored[field] { doc.append(field, value) } }
            }
        }
        try await store.replace(collection: collection, id: id, document: doc)
        var out: [UInt8] = []
        ExpressJSON.append(doc, to: &out)
        return Reply.json(out)
    }

    /// Fields of a stored place that a `PUT /locations/:id` without them keeps: the import's key
    /// and provenance (ARCHITECTURE.md §4), which no app sends back.
    static let keptOnReplace = ["importKey", "source"]

    /// The reference answers with the driver's delete result; its `connection` part (the
    /// database's address) is left out.
    func delete(_ collection: String, _ entity: String) async throws(APIError) -> Response {
        let collection = try Self.validatedCollection(collection)
        let id = try Self.validatedId(entity)
        let deleted = try await store.delete(collection: collection, id: id)
        let n = deleted ? 1 : 0
        return Reply.json(Array("{\"result\":{\"n\":\(n),\"ok\":1},\"deletedCount\":\(n),\"n\":\(n),\"ok\":1}".utf8))
    }
}

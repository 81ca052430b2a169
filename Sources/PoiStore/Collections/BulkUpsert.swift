import CMongoC
import PoiDigest
import Foundation

/// One document to upsert by its key (for places: `importKey`).
public struct UpsertItem: Sendable {
    /// The key's value; the document is matched on `{<keyField>: key}`.
    public var key: BSONValue
    /// The fields PoiKit owns on this document. They are set as given; fields not listed here
    /// (e.g. `thumbnailId` set by another job, or the app's own edits to other fields) are kept.
    public var fields: BSONDocument
    /// Fields to remove because the caller no longer has them (e.g. an image that was dropped
    /// from the input). Part of the digest, like `fields`.
    public var unset: [String]
    /// Fields written with `fields` whenever the item is written, but left out of the digest:
    /// values another job maintains in place (a place's `thumbnailId`, relinked by thumbnail
    /// regeneration), which must not make an otherwise identical item count as changed.
    public var untracked: BSONDocument
    /// Fields removed whenever the item is written, left out of the digest like `untracked`.
    public var untrackedUnset: [String]
    /// Fields the item leaves as they are stored, counted in the digest as if the item had set
    /// them to the stored value (appended to `fields` in this order, or named in `unset` when
    /// absent): an item that leaves a field alone digests exactly like one that sets it to what
    /// is stored, so leaving it alone never makes a document "updated". A field that may be
    /// kept must therefore come last in `fields` when an item sets it, in `keep`'s order.
    public var keep: [String]

    public init(key: BSONValue, fields: BSONDocument, unset: [String] = [], untracked: BSONDocument = BSONDocument(),
                untrackedUnset: [String] = [], keep: [String] = []) {
        self.key = key
        self.fields = fields
        self.unset = unset
        self.untracked = untracked
        self.untrackedUnset = untrackedUnset
        self.keep = keep
    }

    /// What the digest covers, given the stored values of the `keep` fields.
    public func tracked(stored: (String) -> BSONValue?) -> (fields: BSONDocument, unset: [String]) {
        guard !keep.isEmpty else { return (fields, unset) }
        var all = fields
        var removed = unset
        for name in keep {
            if let value = stored(name) { all.append(name, value) } else { removed.append(name) }
        }
        return (all, removed)
    }

    /// Everything the write removes: tracked, then untracked.
    var removed: [String] { untrackedUnset.isEmpty ? unset : unset + untrackedUnset }

    /// The size of `written` without building it (the untracked elements join the fields' document).
    var writtenByteCount: Int { fields.bytes.count + untracked.bytes.count - 5 }

    /// What is written: the tracked fields, then the untracked ones.
    var written: BSONDocument {
        guard !untracked.isEmpty else { return fields }
        var all = fields
        for (k, v) in untracked { all.append(k, v) }
        return all
    }
}

/// What happened to one item, in the caller's order.
public enum UpsertOutcome: Sendable, Equatable {
    /// New document; `id` is the `_id` the server gave it.
    case inserted(id: BSONValue)
    /// Existing document whose fields changed (`updated_at` moved).
    case updated
    /// Existing document already holding these fields (nothing written, `updated_at` kept).
    case unchanged
    /// Refused (by the server, or before sending when it could never be accepted); the rest of
    /// the batch is unaffected. `code` is the server's error code (e.g. 11000 duplicate key).
    case failed(code: Int, message: String)
}

public struct BulkUpsertResult: Sendable, Equatable {
    /// One outcome per item, same order as the items given.
    public var outcomes: [UpsertOutcome]
    /// Batches that had to be sent again after a transient error.
    public var retries = 0
    /// Bulk batches the items were split into (by count and by bytes).
    public var batches = 0

    public var inserted: Int { outcomes.count { if case .inserted = $0 { true } else { false } } }
    public var updated: Int { outcomes.count { $0 == .updated } }
    public var unchanged: Int { outcomes.count { $0 == .unchanged } }
    public var failed: Int { outcomes.count { if case .failed = $0 { true } else { false } } }
    /// Some key of the call was already stored (found by the digest read, or an insert refused
    /// as a duplicate): the caller's "no key of this run is stored yet" no longer holds.
    public var foundStoredKeys = false
}

public struct UpsertOptions: Sendable {
    public var keyField = "importKey"
    /// Holds a digest of `fields`: how "nothing changed" is detected, on the client (to skip the
    /// write) and on the server (so `updated_at` only moves when the digest differs).
    public var hashField = "contentHash"
    public var createdField = "created_at"
    public var updatedField = "updated_at"
    /// The timestamp for `created_at`/`updated_at`; nil = the time of the call. One value for a
    /// whole run lets `--since` pick up exactly what a run touched.
    public var now: BSONDate? = nil
    /// Items per bulk command (further limited by the server's maxWriteBatchSize and
    /// maxMessageSizeBytes).
    public var batchSize = 1_000
    /// Reads the stored digests of a batch first and writes only new or changed items. Makes
    /// reruns nearly free and gives exact per-item updated/unchanged outcomes.
    public var skipUnchanged = true
    /// Items the digest read found absent are sent as plain inserts (every field, `created_at`,
    /// `updated_at` and the digest set by the client) instead of pipeline upserts: the same
    /// document for a fraction of the server's work. The unique index on `keyField` stays the
    /// guard: an insert refused as a duplicate (another run wrote the key meanwhile) goes through
    /// the upsert path for that item alone. Needs that unique index.
    public var insertNew = true
    /// A subdocument of `fields` whose member order is not content (a place's `extra`: a CSV
    /// export writes its members in column order, which need not be the order they were stored
    /// in). The digest takes its members sorted by name, so the same members in another order
    /// count as unchanged. A digest stored before this rule (members in their order) still
    /// matches an item with the same members in the same order.
    public var unorderedField: String?
    /// A key that would be new but is the `_id` (hex) of a stored document without a key takes
    /// that document instead (the key is set on it). An export writes a place the app created,
    /// which has no `importKey`, under its `_id`; without this, importing that export into the
    /// same database made a second copy of every such place.
    public var adoptsKeylessById = false
    public init() {}
}

extension MongoCollection {
    /// Upserts `items` by key, unordered: one bad item never stops the others.
    ///
    /// Each write is an update pipeline that merges the caller's fields (as `$literal`, so a
    /// value such as "$100 burger" is never read as an expression), sets `created_at` only when
    /// absent and moves `updated_at` only when the stored digest differs. Works on MongoDB 4.2+.
    ///
    /// Throws only when a whole batch could not be written (after retries for transient errors);
    /// per-item refusals are in the outcomes.
    ///
    /// `keysAbsent`: the caller knows no key of these items is stored (the collection held none
    /// of its run's keys so far), so the digest read is skipped and every item is inserted.
    /// Wrong knowledge costs a fallback, never a duplicate: see `UpsertOptions.insertNew`.
    public func upsert(_ items: [UpsertItem], options: UpsertOptions = UpsertOptions(),
                       keysAbsent: Bool = false) throws(StoreError) -> BulkUpsertResult {
        let limits = try connection.writeLimits()
        let now = options.now ?? BSONDate.now()
        var result = BulkUpsertResult(outcomes: Array(repeating: .unchanged, count: items.count))
        let template = PipelineTemplate(options: options, now: now)

        // Room for the command envelope and the server-added fields of each document.
        let messageBudget = limits.maxMessageSizeBytes - 16 * 1024
        let perBatch = max(1, min(options.batchSize, limits.maxWriteBatchSize))

        var batch: [Int] = []
        var batchBytes = 0
        var digests = [String](repeating: "", count: items.count)
        func flush() throws(StoreError) {
            if batch.isEmpty { return }
            result.batches += 1
            try writeBatch(batch, items: items, digests: digests, template: template,
                           options: options, keysAbsent: keysAbsent && options.insertNew, result: &result)
            batch.removeAll(keepingCapacity: true)
            batchBytes = 0
        }
        for (i, item) in items.enumerated() {
            let size = item.writtenByteCount + template.overhead
            if size > limits.maxBsonObjectSize {
                result.outcomes[i] = .failed(code: ServerErrorCode.bsonObjectTooLarge, message:
                    "document is \(item.writtenByteCount) bytes; the server accepts at most "
                    + "\(limits.maxBsonObjectSize) (maxBsonObjectSize), so it was not sent")
                continue
            }
            let tracked = item.tracked { _ in nil }
            digests[i] = Self.digest(tracked.fields, unset: tracked.unset, unordered: options.unorderedField)
            if batch.count == perBatch || batchBytes + size > messageBudget { try flush() }
            batch.append(i)
            batchBytes += size
        }
        try flush()
        return result
    }

    /// 128 bits of SHA-256 over the encoded fields: the same fields in the same order give the
    /// same digest on every run and machine.
    static func digest(_ fields: BSONDocument, unset: [String] = [], unordered: String? = nil) -> String {
        var hasher = SHA256()
        if let unordered, let sorted = membersSorted(fields, in: unordered) {
            hasher.update(data: sorted)
        } else {
            hasher.update(data: fields.bytes)
        }
        for name in unset { hasher.update(data: Array(name.utf8) + [0]) }
        return ContentDigest.hex(hasher.finalize(), byteCount: 16)
    }

    /// `fields`' bytes with the members of subdocument `name` in byte order of their names, the
    /// elements moved whole (nothing decoded); nil when they are in that order already, or the
    /// subdocument is absent or malformed (then the bytes as they are are the digest's).
    static func membersSorted(_ fields: BSONDocument, in name: String) -> [UInt8]? {
        let b = fields.bytes
        return b.withUnsafeBufferPointer { p -> [UInt8]? in
            let end = p.count - 1
            var pos = 4
            let target = Array(name.utf8)
            while pos < end {
                let type = p[pos]
                var k = pos + 1
                while k < end && p[k] != 0 { k += 1 }
                guard k < end, let next = BSONDecoder.valueEnd(type: type, bytes: p, at: k + 1, end: end) else { return nil }
                guard type == 0x03, Array(p[(pos + 1)..<k]) == target else { pos = next; continue }
                // The subdocument: [int32 length][elements][0], at k + 1 ..< next.
                let subEnd = next - 1
                var members: [(key: ArraySlice<UInt8>, range: Range<Int>)] = []
                var m = k + 5
                while m < subEnd {
                    var e = m + 1
                    while e < subEnd && p[e] != 0 { e += 1 }
                    guard e < subEnd, let after = BSONDecoder.valueEnd(type: p[m], bytes: p, at: e + 1, end: subEnd) else { return nil }
                    members.append((b[(m + 1)..<e], m..<after))
                    m = after
                }
                let sorted = members.sorted { $0.key.lexicographicallyPrecedes($1.key) }
                if sorted.map(\.range) == members.map(\.range) { return nil }
                var out = Array(b[..<(k + 5)])
                out.reserveCapacity(b.count)
                for member in sorted { out.append(contentsOf: b[member.range]) }
                out.append(contentsOf: b[subEnd...])
                return out
            }
            return nil
        }
    }

    /// The stored digest of each key of the batch, and the stored values of the fields its items keep.
    private func storedDigests(_ indexes: [Int], items: [UpsertItem], options: UpsertOptions) throws(StoreError)
        -> [BSONValue: (hash: String, kept: BSONDocument)] {
        var b = BSONDocumentBuilder(reservingCapacity: 64 + indexes.count * 24)
        b.openDocument(options.keyField)
        b.openArray("$in")
        for (n, i) in indexes.enumerated() { b.append(BSONDocumentBuilder.index(n), items[i].key) }
        let filter = b.finish()
        var projection: BSONDocument = [options.keyField: 1, options.hashField: 1, "_id": 0]
        var keptNames: Set<String> = []
        for i in indexes { keptNames.formUnion(items[i].keep) }
        for name in keptNames.sorted() { projection.append(name, 1) }
        let cursor = try find(filter, projection: projection, batchSize: max(indexes.count, 1))
        var stored: [BSONValue: (hash: String, kept: BSONDocument)] = [:]
        while let doc = try cursor.next() {
            var key: BSONValue?
            var hash = ""
            var kept = BSONDocument()
            for (k, v) in doc {
                if k == options.keyField { key = v } else if k == options.hashField { hash = v.stringValue ?? "" }
                else if keptNames.contains(k) { kept.append(k, v) }
            }
            if let key { stored[key] = (hash, kept) }
        }
        return stored
    }

    private func writeBatch(_ indexes: [Int], items: [UpsertItem], digests: [String], template: PipelineTemplate,
                            options: UpsertOptions, keysAbsent: Bool, result: inout BulkUpsertResult) throws(StoreError) {
        var digests = digests
        // What each item will be, as far as the stored digests tell: new (inserted), or
        // possibly changed (upserted through the pipeline, which settles it on the server).
        var inserts: [Int] = [], upserts: [Int] = []
        if keysAbsent {
            inserts = indexes
        } else if options.skipUnchanged {
            let stored = try withRetries(options, result: &result) { () throws(StoreError) in
                try storedDigests(indexes, items: items, options: options)
            }
            if !stored.isEmpty { result.foundStoredKeys = true }
            for i in indexes {
                guard let s = stored[items[i].key] else {
                    if options.insertNew { inserts.append(i) } else { upserts.append(i) }
                    continue
                }
                let tracked = items[i].tracked { s.kept[$0] }
                if !items[i].keep.isEmpty {
                    digests[i] = Self.digest(tracked.fields, unset: tracked.unset, unordered: options.unorderedField)
                }
                if s.hash == digests[i] { result.outcomes[i] = .unchanged; continue }
                // Stored before `unorderedField` was: the members in their order.
                if options.unorderedField != nil, s.hash == Self.digest(tracked.fields, unset: tracked.unset) {
                    result.outcomes[i] = .unchanged
                    continue
                }
                upserts.append(i)
            }
        } else {
            upserts = indexes
        }
        if inserts.isEmpty && upserts.isEmpty { return }
        var adopted: [Int: ObjectId] = [:]
        if options.adoptsKeylessById && !inserts.isEmpty {
            adopted = try withRetries(options, result: &result) { () throws(StoreError) in
                try keylessDocuments(inserts, items: items, options: options)
            }
            if !adopted.isEmpty {
                result.foundStoredKeys = true
                inserts.removeAll { adopted[$0] != nil }
                upserts += adopted.keys.sorted()
            }
        }

        let ids = inserts.map { _ in ObjectId() }
        let retriesBefore = result.retries
        let reply = try withRetries(options, result: &result) { () throws(StoreError) -> BSONDocument in
            try executeBulk(inserts: inserts, ids: ids, upserts: upserts, adopted: adopted, items: items,
                            digests: digests, template: template, options: options)
        }

        // Operations are numbered inserts first, then upserts.
        var done = Set<Int>()
        var refusedInserts: [Int] = []
        for entry in reply["writeErrors"]?.arrayValue ?? [] {
            guard let d = entry.documentValue, let n = d["index"]?.int64Value.map(Int.init),
                  n >= 0, n < inserts.count + upserts.count else { continue }
            done.insert(n)
            let code = Int(d["code"]?.int64Value ?? 0)
            if n < inserts.count && code == ServerErrorCode.duplicateKey {
                refusedInserts.append(inserts[n])
                continue
            }
            let message = connection.redactor.scrub(d["errmsg"]?.stringValue ?? "write error")
            result.outcomes[n < inserts.count ? inserts[n] : upserts[n - inserts.count]] = .failed(code: code, message: message)
        }
        for (n, i) in inserts.enumerated() where !done.contains(n) {
            result.outcomes[i] = .inserted(id: .objectId(ids[n]))
        }
        for entry in reply["upserted"]?.arrayValue ?? [] {
            guard let d = entry.documentValue, let n = d["index"]?.int64Value.map(Int.init),
                  n >= inserts.count, n < inserts.count + upserts.count else { continue }
            result.outcomes[upserts[n - inserts.count]] = .inserted(id: d["_id"] ?? .null)
            done.insert(n)
        }
        // The bulk reply counts modifications but does not say which. The digest read already
        // sorted out the unchanged ones, so the rest changed; the count settles the cases it can
        // (a key twice in one batch, a concurrent writer, `skipUnchanged` off).
        let matched = upserts.indices.filter { !done.contains($0 + inserts.count) }
        let nModified = Int(reply["nModified"]?.int64Value ?? 0)
        for n in matched {
            result.outcomes[upserts[n]] = nModified == 0 ? .unchanged : .updated
        }
        if let wce = reply["writeConcernErrors"]?.arrayValue?.first?.documentValue {
            throw .server(code: Int(wce["code"]?.int64Value ?? 64), codeName: "WriteConcernFailed",
                          message: connection.redactor.scrub(wce["errmsg"]?.stringValue ?? "write concern error"),
                          labels: [])
        }
        // An insert sent again after a lost answer, refused because the lost attempt had
        // written it: the stored document has the id this run made, so it is this run's insert,
        // counted as inserted (not as an unchanged place found stored).
        if result.retries > retriesBefore && !refusedInserts.isEmpty {
            var idOf: [Int: ObjectId] = [:]
            for (n, i) in inserts.enumerated() { idOf[i] = ids[n] }
            let mine = try withRetries(options, result: &result) { () throws(StoreError) -> Set<ObjectId> in
                try storedIds(refusedInserts.compactMap { idOf[$0] })
            }
            refusedInserts.removeAll { i in
                guard let id = idOf[i], mine.contains(id) else { return false }
                result.outcomes[i] = .inserted(id: .objectId(id))
                return true
            }
        }
        // Keys stored meanwhile (another run, or a retried batch the server had applied):
        // through the upsert path, digest read first, and counted as what they turn out to be.
        if !refusedInserts.isEmpty {
            result.foundStoredKeys = true
            var upsertOnly = options
            upsertOnly.insertNew = false
            upsertOnly.skipUnchanged = true
            try writeBatch(refusedInserts, items: items, digests: digests, template: template,
                           options: upsertOnly, keysAbsent: false, result: &result)
        }
    }

    /// The items among `indexes` whose key is the `_id` of a stored document that has no key,
    /// with that `_id` (see `UpsertOptions.adoptsKeylessById`). Only keys written as an ObjectId's
    /// 24 hex digits are looked up, so an import with other keys sends no query.
    private func keylessDocuments(_ indexes: [Int], items: [UpsertItem], options: UpsertOptions) throws(StoreError)
        -> [Int: ObjectId] {
        var itemOf: [ObjectId: Int] = [:]
        for i in indexes {
            guard let text = items[i].key.stringValue, text.utf8.count == 24, let id = ObjectId(hex: text) else { continue }
            itemOf[id] = i
        }
        guard !itemOf.isEmpty else { return [:] }
        let filter: BSONDocument = ["_id": .document(["$in": .array(itemOf.keys.map(BSONValue.objectId))]),
                                    options.keyField: .document(["$exists": false])]
        let cursor = try find(filter, projection: ["_id": 1], batchSize: itemOf.count)
        var found: [Int: ObjectId] = [:]
        while let doc = try cursor.next() {
            if let id = doc["_id"]?.objectIdValue, let i = itemOf[id] { found[i] = id }
        }
        return found
    }

    /// Which of `ids` are stored.
    private func storedIds(_ ids: [ObjectId]) throws(StoreError) -> Set<ObjectId> {
        guard !ids.isEmpty else { return [] }
        let filter: BSONDocument = ["_id": .document(["$in": .array(ids.map(BSONValue.objectId))])]
        let cursor = try find(filter, projection: ["_id": 1], batchSize: ids.count)
        var found = Set<ObjectId>()
        while let doc = try cursor.next() { if let id = doc["_id"]?.objectIdValue { found.insert(id) } }
        return found
    }

    /// Runs `body` again while it fails with a transient error, within the connection's retry
    /// bound (`MongoConnection.retrying`). A batch is safe to send again: its places are written
    /// by their unique `importKey` (an upsert, or an insert refused as a duplicate and redone as
    /// one), so an attempt the server applied before its reply was lost is found, not repeated.
    func withRetries<R>(_ options: UpsertOptions, result: inout BulkUpsertResult,
                        _ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        try connection.retrying(retries: &result.retries, body)
    }

    /// One `mongoc_bulk_operation_t`: `inserts` as plain inserts (with `ids`), then `upserts` as
    /// pipeline upserts. Returns the reply when the batch was executed (write errors included);
    /// throws when it was not.
    private func executeBulk(inserts: [Int], ids: [ObjectId], upserts: [Int], adopted: [Int: ObjectId],
                             items: [UpsertItem], digests: [String], template: PipelineTemplate, options: UpsertOptions) throws(StoreError) -> BSONDocument {
        try withCollection { (coll) throws(StoreError) -> BSONDocument in
            let bulkOpts: BSONDocument = ["ordered": false]
            let bulk = LibBSON.withStaticPointer(bulkOpts) { mongoc_collection_create_bulk_operation_with_opts(coll, $0)! }
            defer { mongoc_bulk_operation_destroy(bulk) }
            // Our documents are built by PoiKit; libmongoc's key validation would only cost CPU.
            let updateOpts: BSONDocument = ["upsert": true, "validate": false]
            let insertOpts: BSONDocument = ["validate": false]
            let scratchA = LibBSON.allocateScratch(), scratchB = LibBSON.allocateScratch(), scratchC = LibBSON.allocateScratch()
            defer { scratchA.deallocate(); scratchB.deallocate(); scratchC.deallocate() }
            var error = bson_error_t()
            var doc = BSONDocumentBuilder(reservingCapacity: 1024)
            for (n, i) in inserts.enumerated() {
                let document = template.newDocument(id: ids[n], key: items[i].key, fields: items[i].written,
                                                    digest: digests[i], builder: &doc)
                let ok = LibBSON.withStaticPointer(document, scratch: scratchA) { d in
                    LibBSON.withStaticPointer(insertOpts, scratch: scratchC) { o in
                        mongoc_bulk_operation_insert_with_opts(bulk, d, o, &error)
                    }
                }
                if !ok { throw connection.storeError(error) }
            }
            var sel = BSONDocumentBuilder(reservingCapacity: 64)
            for i in upserts {
                // An adopted document is found by its `_id`; the pipeline sets the key on it.
                if let id = adopted[i] { sel.append("_id", objectId: id) } else { sel.append(options.keyField, items[i].key) }
                let selector = sel.finish()
                let pipeline = template.pipeline(key: items[i].key, fields: items[i].written, unset: items[i].removed,
                                                 digest: digests[i])
                let ok = LibBSON.withStaticPointer(selector, scratch: scratchA) { s in
                    LibBSON.withStaticPointer(pipeline, scratch: scratchB) { p in
                        LibBSON.withStaticPointer(updateOpts, scratch: scratchC) { o in
                            mongoc_bulk_operation_update_one_with_opts(bulk, s, p, o, &error)
                        }
                    }
                }
                if !ok { throw connection.storeError(error) }
            }
            let (server, reply) = LibBSON.withReply { reply in mongoc_bulk_operation_execute(bulk, reply, &error) }
            if server == 0 {
                // Write errors are per item and reported in the reply; anything else sank the batch.
                let writeErrors = reply["writeErrors"]?.arrayValue ?? []
                if writeErrors.isEmpty { throw connection.storeError(error, reply: reply) }
            }
            return reply
        }
    }
}

import PoiTestSupport
import Testing
@testable import PoiStore

@Suite(.tags(.live), .liveServer) struct BulkUpsertTests {
    static func place(_ i: Int, name: String? = nil) -> UpsertItem {
        var b = BSONDocumentBuilder()
        b.append("importKey", string: "k\(i)")
        b.append("name", string: name ?? "Place \(i)")
        b.openDocument("location")
        b.append("type", string: "Point")
        b.openArray("coordinates")
        b.append("0", double: Double(i % 360) - 180 + 0.5)
        b.append("1", double: Double(i % 170) - 85 + 0.25)
        b.close(); b.close()
        b.append("categories", strings: ["c\(i % 7)"])
        return UpsertItem(key: .string("k\(i)"), fields: b.finish())
    }

    @Test func fiveThousandTwiceLeavesFiveThousandAndSecondRunChangesNothing() throws {
        let db = try LiveServer.database("bulk5k")
        defer { LiveServer.drop(db) }
        try db.ensureIndexes()
        let items = (0..<5_000).map { Self.place($0) }
        var options = UpsertOptions()
        options.now = BSONDate(millisecondsSinceEpoch: 1_700_000_000_000)

        let first = try db.locations.upsert(items, options: options)
        #expect(first.outcomes.count == 5_000)
        #expect(first.inserted == 5_000)
        #expect(first.updated == 0 && first.unchanged == 0 && first.failed == 0)
        #expect(try db.locations.count() == 5_000)

        options.now = BSONDate(millisecondsSinceEpoch: 1_800_000_000_000)
        let second = try db.locations.upsert(items, options: options)
        #expect(second.inserted == 0)
        #expect(second.unchanged == 5_000)
        #expect(second.updated == 0 && second.failed == 0)
        #expect(try db.locations.count() == 5_000)
        // Nothing changed, so updated_at kept the first run's time.
        #expect(try db.locations.count(["updated_at": .date(BSONDate(millisecondsSinceEpoch: 1_700_000_000_000))]) == 5_000)
        #expect(try db.locations.count(["created_at": .date(BSONDate(millisecondsSinceEpoch: 1_700_000_000_000))]) == 5_000)
    }

    @Test func updatedAtMovesOnlyWhenSomethingChangedAndCreatedAtNever() throws {
        let db = try LiveServer.database("bulkchange")
        defer { LiveServer.drop(db) }
        try db.ensureIndexes()
        let t1 = BSONDate(millisecondsSinceEpoch: 1_700_000_000_000)
        let t2 = BSONDate(millisecondsSinceEpoch: 1_700_000_100_000)
        var options = UpsertOptions()
        options.now = t1
        _ = try db.locations.upsert([Self.place(1), Self.place(2), Self.place(3)], options: options)
        try db.locations.updateOne(filter: ["importKey": "k2"], set: ["thumbnailId": "5f1d7a0c9b1e8a0012345678"])

        options.now = t2
        let result = try db.locations.upsert([Self.place(1), Self.place(2, name: "Renamed"), Self.place(3)], options: options)
        #expect(result.outcomes == [.unchanged, .updated, .unchanged])

        let renamed = try #require(try db.locations.findOne(["importKey": "k2"]))
        #expect(renamed["name"] == .string("Renamed"))
        #expect(renamed["created_at"] == .date(t1))
        #expect(renamed["updated_at"] == .date(t2))
        #expect(renamed["thumbnailId"] == .string("5f1d7a0c9b1e8a0012345678"))  // not ours: kept
        let same = try #require(try db.locations.findOne(["importKey": "k1"]))
        #expect(same["updated_at"] == .date(t1))

        // Without the client-side digest read, the server-side condition still keeps updated_at.
        options.skipUnchanged = false
        options.now = BSONDate(millisecondsSinceEpoch: 1_700_000_200_000)
        let forced = try db.locations.upsert([Self.place(1)], options: options)
        #expect(forced.outcomes == [.unchanged])
        #expect(try db.locations.findOne(["importKey": "k1"])?["updated_at"] == .date(t1))
    }

    @Test func untrackedFieldsAreWrittenButNeverCountAsAChange() throws {
        let db = try LiveServer.database("untracked")
        defer { LiveServer.drop(db) }
        var item = Self.place(1)
        item.untracked = ["thumbnailId": "aaa"]
        #expect(try db.locations.upsert([item]).inserted == 1)
        #expect(try db.locations.findOne(["importKey": "k1"])?["thumbnailId"] == .string("aaa"))
        // Another job relinks the thumbnail; the same import again is unchanged and keeps it.
        try db.locations.updateMany(filter: ["importKey": "k1"], update: ["$set": .document(["thumbnailId": "bbb"])])
        item.untracked = ["thumbnailId": "bbb"]
        #expect(try db.locations.upsert([item]).unchanged == 1)
        item.untracked = ["thumbnailId": "ccc"]
        #expect(try db.locations.upsert([item]).unchanged == 1)
        #expect(try db.locations.findOne(["importKey": "k1"])?["thumbnailId"] == .string("bbb"))
        // A real change writes the untracked fields along with it.
        var changed = Self.place(1, name: "Renamed")
        changed.untracked = ["thumbnailId": "ddd"]
        #expect(try db.locations.upsert([changed]).updated == 1)
        let doc = try db.locations.findOne(["importKey": "k1"])
        #expect(doc?["name"] == .string("Renamed"))
        #expect(doc?["thumbnailId"] == .string("ddd"))
    }

    /// An item that leaves a field as stored (`keep`) digests like one that sets it
    /// to the stored value, so a file without an image column never makes a place "updated".
    @Test func keptFieldsStayAndCountAsStored() throws {
        let db = try LiveServer.database("kept")
        defer { LiveServer.drop(db) }
        var linked = Self.place(1)
        linked.fields.append("imageId", .string("abc"))
        linked.untracked = ["source": .document(["file": "a.csv", "line": .int64(2)])]
        #expect(try db.locations.upsert([linked]).inserted == 1)
        var keeping = Self.place(1)
        keeping.keep = ["imageId"]
        keeping.untracked = ["source": .document(["file": "b.csv", "line": .int64(9)])]  // provenance: not a change
        #expect(try db.locations.upsert([keeping]).unchanged == 1)
        #expect(try db.locations.findOne(["importKey": "k1"])?["imageId"] == .string("abc"))
        // A kept field that is absent digests like a removal of it.
        var unlinked = Self.place(1)
        unlinked.unset = ["imageId"]
        unlinked.untrackedUnset = ["thumbnailId"]
        #expect(try db.locations.upsert([unlinked]).updated == 1)
        #expect(try db.locations.findOne(["importKey": "k1"])?["imageId"] == nil)
        #expect(try db.locations.upsert([keeping]).unchanged == 1)
        // A change elsewhere is written and leaves the kept field alone.
        try db.locations.updateMany(filter: ["importKey": "k1"], update: ["$set": .document(["imageId": "zzz"])])
        var renamed = Self.place(1, name: "Renamed")
        renamed.keep = ["imageId"]
        #expect(try db.locations.upsert([renamed]).updated == 1)
        #expect(try db.locations.findOne(["importKey": "k1"])?["imageId"] == .string("zzz"))
    }

    @Test func valuesThatLookLikeExpressionsAreStoredLiterallyAndUnsetRemovesFields() throws {
        let db = try LiveServer.database("bulkliteral")
        defer { LiveServer.drop(db) }
        let fields: BSONDocument = [
            "name": "$100 burger", "details": "$$ROOT", "categories": ["$a", "b"],
            "extra": .document(["$weird": 1, "a.b": "x"]), "imageId": "5f1d7a0c9b1e8a0012345678",
        ]
        let r1 = try db.locations.upsert([UpsertItem(key: "$key", fields: fields)])
        guard case .inserted(let id) = r1.outcomes.first else { Issue.record("not inserted: \(r1.outcomes)"); return }
        let doc = try #require(try db.locations.findOne(["_id": id]))
        #expect(doc["importKey"] == .string("$key"))
        #expect(doc["name"] == .string("$100 burger"))
        #expect(doc["details"] == .string("$$ROOT"))
        #expect(doc["categories"] == .array(["$a", "b"]))
        #expect(doc["extra"] == .document(["$weird": 1, "a.b": "x"]))

        var without = fields
        without["imageId"] = nil
        let r2 = try db.locations.upsert([UpsertItem(key: "$key", fields: without, unset: ["imageId"])])
        #expect(r2.outcomes == [.updated])
        #expect(try db.locations.findOne(["_id": id])?["imageId"] == nil)
    }

    @Test func duplicateKeyAndTooLargeDocumentRejectOnlyThatItem() throws {
        let db = try LiveServer.database("bulkerrors")
        defer { LiveServer.drop(db) }
        try db.ensureIndexes()
        try db.locations.createIndexes([IndexModel(name: "code_1", keys: ["code": 1], unique: true, sparse: true)])
        try db.locations.insertOne(["importKey": "existing", "code": "TAKEN"])

        var items = (0..<10).map { Self.place($0) }
        var dup = items[4].fields
        dup.append("code", "TAKEN")
        items[4].fields = dup
        var big = items[7].fields
        big.append("blob", .string(String(repeating: "x", count: 17 * 1024 * 1024)))
        items[7].fields = big

        let result = try db.locations.upsert(items)
        #expect(result.inserted == 8)
        #expect(result.failed == 2)
        guard case .failed(let code, let message) = result.outcomes[4] else {
            Issue.record("item 4: \(result.outcomes[4])"); return
        }
        #expect(code == 11000)
        #expect(message.contains("duplicate key"))
        guard case .failed(let bigCode, let bigMessage) = result.outcomes[7] else {
            Issue.record("item 7: \(result.outcomes[7])"); return
        }
        #expect(bigCode == 10334)
        #expect(bigMessage.contains("maxBsonObjectSize"))
        for i in [0, 1, 2, 3, 5, 6, 8, 9] {
            guard case .inserted = result.outcomes[i] else { Issue.record("item \(i): \(result.outcomes[i])"); continue }
        }
        #expect(try db.locations.count() == 9)  // 8 new + the existing one
        #expect(try db.locations.count(["importKey": "k4"]) == 0)
        #expect(try db.locations.count(["importKey": "k7"]) == 0)
    }

    /// Every document of the collection in key order, without `_id` (the server's or the
    /// client's ObjectId), field order kept.
    static func documents(_ db: MongoDatabase) throws -> [[String]] {
        let cursor = try db.locations.find(BSONDocument(), sort: ["importKey": 1])
        var all: [[String]] = []
        while let d = try cursor.next() {
            all.append(d.filter { $0.key != "_id" }.map { "\($0.key)=\($0.value)" })
        }
        return all
    }

    /// New places go as plain inserts (after a digest read that found nothing, or with
    /// no read at all when the caller knows the keys are absent) and must write exactly what the
    /// pipeline upsert writes — same fields, same order, same timestamps and digest — and a
    /// rerun must find every one unchanged.
    @Test func plainInsertsWriteWhatPipelineUpsertsWrite() throws {
        var items = (0..<300).map { Self.place($0) }
        for i in stride(from: 0, to: 300, by: 3) { items[i].untracked = ["thumbnailId": .string("5f1d7a0c9b1e8a00123456" + String(format: "%02x", i % 256))] }
        var options = UpsertOptions()
        options.now = BSONDate(millisecondsSinceEpoch: 1_700_000_000_000)
        var pipelineOnly = options
        pipelineOnly.insertNew = false

        var results: [[[String]]] = []
        for (label, opts, absent) in [("ins_pipe", pipelineOnly, false), ("ins_read", options, false), ("ins_blind", options, true)] {
            let db = try LiveServer.database(label)
            defer { LiveServer.drop(db) }
            try db.ensureIndexes()
            let first = try db.locations.upsert(items, options: opts, keysAbsent: absent)
            #expect(first.inserted == 300 && first.failed == 0, "\(label)")
            #expect(!first.foundStoredKeys, "\(label)")
            guard case .inserted(let id) = first.outcomes[7], case .objectId = id else {
                Issue.record("\(label): item 7 \(first.outcomes[7])"); continue
            }
            #expect(try db.locations.count(["_id": id]) == 1, "\(label): the reported id is not the stored one")
            var later = options
            later.now = BSONDate(millisecondsSinceEpoch: 1_800_000_000_000)
            let rerun = try db.locations.upsert(items, options: later)
            #expect(rerun.unchanged == 300, "\(label)")
            #expect(rerun.foundStoredKeys, "\(label)")
            results.append(try Self.documents(db))
        }
        #expect(results.count == 3)
        #expect(results[0].count == 300)
        #expect(results[1] == results[0], "inserts after a digest read differ from pipeline upserts")
        #expect(results[2] == results[0], "inserts without a digest read differ from pipeline upserts")
        #expect(results[0].first?.first == #"importKey=string("k0")"#, "\(results[0].first ?? [])")
    }

    /// A caller wrong about the keys being absent (another run stored some meanwhile) costs a
    /// fallback, never a duplicate or a failure: refused inserts go through the upsert path and
    /// count as what they turn out to be.
    @Test func insertsOfKeysStoredMeanwhileFallBackToUpserts() throws {
        let db = try LiveServer.database("ins_fallback")
        defer { LiveServer.drop(db) }
        try db.ensureIndexes()
        var options = UpsertOptions()
        options.now = BSONDate(millisecondsSinceEpoch: 1_700_000_000_000)
        _ = try db.locations.upsert((0..<100).map { Self.place($0) }, options: options)

        options.now = BSONDate(millisecondsSinceEpoch: 1_800_000_000_000)
        let items = (50..<150).map { $0 < 75 ? Self.place($0, name: "Renamed \($0)") : Self.place($0) }
        let result = try db.locations.upsert(items, options: options, keysAbsent: true)
        #expect(result.failed == 0, "\(result.outcomes.filter { if case .failed = $0 { true } else { false } }.prefix(3))")
        #expect(result.updated == 25)
        #expect(result.unchanged == 25)
        #expect(result.inserted == 50)
        #expect(result.foundStoredKeys)
        #expect(try db.locations.count() == 150)
        #expect(try db.locations.count(["name": "Renamed 60"]) == 1)
        // Unchanged ones kept their first timestamp; updated ones moved.
        #expect(try db.locations.count(["updated_at": .date(BSONDate(millisecondsSinceEpoch: 1_700_000_000_000))]) == 50 + 25)
    }

    @Test func batchesRespectTheServersCountAndSizeLimits() throws {
        let db = try LiveServer.database("bulklimits")
        defer { LiveServer.drop(db) }
        let real = try db.connection.writeLimits()
        defer { db.connection.limitsCache.set(real) }
        let items = (0..<50).map { Self.place($0) }
        let itemBytes = items[0].fields.bytes.count + 512  // + the pipeline around it

        db.connection.limitsCache.set(WriteLimits(maxBsonObjectSize: real.maxBsonObjectSize,
                                                  maxMessageSizeBytes: real.maxMessageSizeBytes, maxWriteBatchSize: 7))
        let byCount = try db.locations.upsert(items)
        #expect(byCount.batches == 8)  // 7 × 7 + 1
        #expect(byCount.inserted == 50)

        // Room for exactly three items per message (after the 16 KiB envelope allowance).
        db.connection.limitsCache.set(WriteLimits(maxBsonObjectSize: real.maxBsonObjectSize,
                                                  maxMessageSizeBytes: 16 * 1024 + 3 * itemBytes + 10, maxWriteBatchSize: 100_000))
        var options = UpsertOptions()
        options.skipUnchanged = false
        let bySize = try db.locations.upsert(items, options: options)
        #expect(bySize.batches == 17)  // 16 × 3 + 2
        #expect(bySize.unchanged == 50)
        #expect(try db.locations.count() == 50)
    }

    /// An earlier PoiKit made every original unique by content, uploads included (a second
    /// upload of a stored photo was refused): `ensureIndexes` drops that index and makes the one
    /// over imported originals.
    @Test func ensureIndexesDropsTheRetiredUniqueIndexOverEveryOriginal() throws {
        let db = try LiveServer.database("indexes-retired")
        defer { LiveServer.drop(db) }
        try db.files.createIndexes([IndexModel(name: "sha256_1_original_unique", keys: ["sha256": 1], unique: true,
                                               partialFilter: ["role": "original"])])
        try db.ensureIndexes()
        #expect(try db.files.indexNames().sorted() == ["_id_", "sha256_1", "sha256_1_imported_original_unique", "thumbnailOf_1"])
        try db.files.insertOne(["sha256": "cc", "role": "original", "storedBy": "import"])
        try db.files.insertOne(["sha256": "cc", "role": "original", "storedBy": "upload"])
        #expect(try db.files.count(["sha256": "cc"]) == 2)
        #expect(try db.files.dropIndexes(named: StoreLayout.retiredFileIndexes) == [])
    }

    @Test func ensureIndexesIsIdempotent() throws {
        let db = try LiveServer.database("indexes")
        defer { LiveServer.drop(db) }
        try db.ensureIndexes()
        try db.ensureIndexes()
        #expect(try db.locations.indexNames().sorted() == ["_id_", "categories_1", "imageId_1", "importKey_1", "location_2dsphere", "updated_at_1"])
        #expect(try db.files.indexNames().sorted() == ["_id_", "sha256_1", "sha256_1_imported_original_unique", "thumbnailOf_1"])
        // One imported original per content (two imports storing the same new photo at once);
        // thumbnails, uploads through `poi serve` (each a file of its own) and the backend's own
        // uploads without a sha256 may repeat.
        try db.files.insertOne(["sha256": "aa", "role": "original", "storedBy": "import"])
        try db.files.insertOne(["sha256": "aa", "role": "thumbnail"])
        try db.files.insertOne(["sha256": "aa", "role": "thumbnail"])
        try db.files.insertOne(["sha256": "aa", "role": "original", "storedBy": "upload"])
        try db.files.insertOne(["sha256": "aa", "role": "original", "storedBy": "upload"])
        try db.files.insertOne(["content-type": "image/png"])
        try db.files.insertOne(["content-type": "image/png"])
        do {
            try db.files.insertOne(["sha256": "aa", "role": "original", "storedBy": "import"])
            Issue.record("a second imported original with the same content was stored")
        } catch {
            guard case .server(let code, _, _, _) = error else { Issue.record("\(error)"); return }
            #expect(code == ServerErrorCode.duplicateKey)
        }
        // A database that already holds an original twice (stored before the index) still works:
        // the optional index is left out, the others are there.
        let old = try LiveServer.database("indexes-old")
        defer { LiveServer.drop(old) }
        try old.files.insertOne(["sha256": "bb", "role": "original", "storedBy": "import"])
        try old.files.insertOne(["sha256": "bb", "role": "original", "storedBy": "import"])
        try old.ensureIndexes()
        #expect(try old.files.indexNames().sorted() == ["_id_", "sha256_1", "thumbnailOf_1"])
        // The app's own places have no importKey: the sparse unique index lets many coexist.
        try db.locations.insertOne(["name": "app place 1"])
        try db.locations.insertOne(["name": "app place 2"])
        #expect(try db.locations.count() == 2)
        // Same name, other keys: reported, not dropped.
        #expect(throws: StoreError.self) {
            try db.locations.createIndexes([IndexModel(name: "categories_1", keys: ["name": 1])])
        }
    }

    @Test func cursorStreamsInBatchesWithSortAndProjection() throws {
        let db = try LiveServer.database("cursor")
        defer { LiveServer.drop(db) }
        _ = try db.locations.upsert((0..<250).map { Self.place($0) })
        let cursor = try db.locations.find(["categories": "c3"], sort: ["importKey": 1],
                                           projection: ["importKey": 1, "_id": 0], batchSize: 7)
        var keys: [String] = []
        while let d = try cursor.next() {
            #expect(d.keys == ["importKey"])
            keys.append(d["importKey"]?.stringValue ?? "")
        }
        let expected = (0..<250).filter { $0 % 7 == 3 }.map { "k\($0)" }.sorted()
        #expect(keys == expected)
        #expect(try cursor.next() == nil)
        #expect(try db.locations.count(["categories": "c3"]) == expected.count)
    }

    @Test func cursorErrorsAreTypedNotAnEarlyEnd() throws {
        let db = try LiveServer.database("cursorerr")
        defer { LiveServer.drop(db) }
        try db.locations.insertOne(["a": 1])
        #expect {
            let cursor = try db.locations.find(["a": .document(["$noSuchOperator": 1])])
            _ = try cursor.next()
        } throws: { error in
            guard let e = error as? StoreError, case .server = e else { return false }
            return true
        }
    }
}

/// A place's `extra` members in another order are the same content (a CSV export
/// writes them in column order), and a digest stored before that rule still matches.
@Suite(.tags(.unit)) struct UnorderedDigestTests {
    @Test func membersInAnotherOrderDigestAlikeAndSortedOnesAsBefore() throws {
        func fields(_ extra: BSONDocument) -> BSONDocument { ["name": "A", "extra": .document(extra), "details": ""] }
        let ba = fields(["b": "x", "a": .int32(1), "c": .document(["z": 1, "y": 2])])
        let ab = fields(["a": .int32(1), "b": "x", "c": .document(["z": 1, "y": 2])])
        #expect(MongoCollection.digest(ba, unordered: "extra") == MongoCollection.digest(ab, unordered: "extra"))
        // Members already in order: the digest is the one stored before the rule.
        #expect(MongoCollection.digest(ab, unordered: "extra") == MongoCollection.digest(ab))
        #expect(MongoCollection.digest(ba) != MongoCollection.digest(ab))
        // Only the member order is free: a nested object's order, and the values, still count.
        let nested = fields(["a": .int32(1), "b": "x", "c": .document(["y": 2, "z": 1])])
        #expect(MongoCollection.digest(nested, unordered: "extra") != MongoCollection.digest(ab, unordered: "extra"))
        let other = fields(["a": .int32(2), "b": "x", "c": .document(["z": 1, "y": 2])])
        #expect(MongoCollection.digest(other, unordered: "extra") != MongoCollection.digest(ab, unordered: "extra"))
        #expect(MongoCollection.membersSorted(ba, in: "extra").map { BSONDocument(bytes: $0) } == ab)
    }
}

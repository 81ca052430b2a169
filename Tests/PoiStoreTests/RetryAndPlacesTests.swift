import PoiTestSupport
import Testing
@testable import PoiStore

@Suite(.tags(.live)) struct RetryAndPlacesTests {
    func collection(retryForMS: Int = 500) throws -> MongoCollection {
        var options = ConnectionOptions()
        options.retryForMS = retryForMS
        let connection = try MongoConnection(uri: "mongodb://127.0.0.1:1", options: options)
        return MongoDatabase(connection: connection, name: "x").locations
    }

    /// Retries back off 100, 200, 400 … ms within `retryForMS`: 500 ms allows two retries (the
    /// third wait would end past it); past the bound, the last error and how long it tried.
    @Test func transientErrorsAreRetriedWithinTheBound() throws {
        let options = UpsertOptions()
        var result = BulkUpsertResult(outcomes: [])
        var calls = 0
        let value = try collection().withRetries(options, result: &result) { () throws(StoreError) -> Int in
            calls += 1
            if calls < 3 { throw .network(reason: "connection reset") }
            return 42
        }
        #expect(value == 42 && calls == 3 && result.retries == 2)

        calls = 0
        #expect(throws: StoreError.retried(attempts: 3, seconds: 0, last: .network(reason: "still down"))) {
            _ = try collection().withRetries(options, result: &result) { () throws(StoreError) -> Int in
                calls += 1
                throw .network(reason: "still down")
            }
        }
        #expect(calls == 3)
        #expect(StoreError.retried(attempts: 3, seconds: 0, last: .network(reason: "still down")).description
                == "lost the connection to MongoDB: still down (still failing after 3 attempts over 0 s of retries)")

        // --retry-for 0: no retry, the error as it is.
        calls = 0
        #expect(throws: StoreError.network(reason: "down")) {
            _ = try collection(retryForMS: 0).withRetries(options, result: &result) { () throws(StoreError) -> Int in
                calls += 1
                throw .network(reason: "down")
            }
        }
        #expect(calls == 1)

        calls = 0
        #expect(throws: StoreError.self) {
            _ = try collection().withRetries(options, result: &result) { () throws(StoreError) -> Int in
                calls += 1
                throw .server(code: 2, codeName: "BadValue", message: "no", labels: [])
            }
        }
        #expect(calls == 1)  // not transient: no retry
        // A server never reached (a wrong URI, a firewall) is reported at once, not retried.
        calls = 0
        #expect(throws: StoreError.unreachable(hosts: "db1:27017", reason: "down")) {
            _ = try collection().withRetries(options, result: &result) { () throws(StoreError) -> Int in
                calls += 1
                throw .unreachable(hosts: "db1:27017", reason: "down")
            }
        }
        #expect(calls == 1)
        // After "not primary" answers, a selection timeout is reported as the election it is.
        calls = 0
        let notPrimary = StoreError.server(code: 10107, codeName: "", message: "not primary", labels: ["RetryableWriteError"])
        #expect(throws: StoreError.retried(attempts: 3, seconds: 0, last: notPrimary)) {
            _ = try collection().withRetries(options, result: &result) { () throws(StoreError) -> Int in
                calls += 1
                throw calls == 1 ? notPrimary : .unreachable(hosts: "db1:27017", reason: "No suitable servers found")
            }
        }
        #expect(notPrimary.description == "MongoDB error 10107 (NotWritablePrimary): not primary; the replica set has no "
                + "writable primary now (an election or a failover)")
        #expect(StoreError.server(code: 10107, codeName: "NotWritablePrimary", message: "", labels: []).isTransient)
        #expect(StoreError.server(code: 1, codeName: "", message: "", labels: ["RetryableWriteError"]).isTransient)
    }

    /// "Newer" must be "greater" for thumbnails: an id made in the same second by another
    /// process can be smaller (its random middle bytes); `greater(than:)` never is.
    @Test func greaterIdsAreGreater() {
        let high = ObjectId(hex: "fffffff000000000ffffff00")!
        let next = (0..<100).map { _ in ObjectId.greater(than: [high]) }
        #expect(next.allSatisfy { $0 > high && $0.hex.hasPrefix("fffffff0000000") }, "\(next.prefix(3))")
        #expect(Set(next).count == 100, "two runs at once must not make the same id")
        let carry = ObjectId(hex: "7fffffffffffffffffffffff")!
        #expect(ObjectId.greater(than: [carry]).hex.hasPrefix("80000000"))
        let old = ObjectId(hex: "000000000000000000000001")!
        let fresh = ObjectId.greater(than: [old])
        #expect(fresh > old && fresh.hex != "000000000000000000000002", "a fresh id when it is greater already")
        #expect(ObjectId.greater(than: []) > old)
    }

    @Test(.liveServer) func thumbnailLinksAndReferencedFiles() throws {
        let db = try LiveServer.database("places")
        defer { LiveServer.drop(db) }
        let image = ObjectId(), thumb = ObjectId()
        let t1 = BSONDate(millisecondsSinceEpoch: 1_700_000_000_000)
        var options = UpsertOptions()
        options.now = t1
        let r = try db.locations.upsert([
            UpsertItem(key: "a", fields: ["name": "A", "imageId": .string(image.hex)]),
            UpsertItem(key: "b", fields: ["name": "B", "imageId": .string(image.hex)]),
            UpsertItem(key: "c", fields: ["name": "C"]),
        ], options: options)
        #expect(r.inserted == 3)
        // A relink is a change for `export --since`: the relinked places' updated_at moves.
        let t2 = BSONDate(millisecondsSinceEpoch: 1_700_000_100_000)
        #expect(try db.setThumbnail(thumb, forImage: image, updatedAt: t2) == 2)
        #expect(try db.locations.count(["thumbnailId": .string(thumb.hex)]) == 2)
        #expect(try db.locations.count(["updated_at": .date(t2)]) == 2)
        #expect(try db.locations.count(["updated_at": .date(t1)]) == 1)  // "c" shows no image
        // Places already showing it are left alone, updated_at included.
        let t3 = BSONDate(millisecondsSinceEpoch: 1_700_000_200_000)
        #expect(try db.setThumbnail(thumb, forImage: image, updatedAt: t3) == 0)
        #expect(try db.locations.count(["updated_at": .date(t2)]) == 2)
        #expect(try db.referencedFileIds() == [image, thumb])
        #expect(try db.setThumbnail(nil, forImage: image, updatedAt: t3) == 2)
        #expect(try db.locations.count(["thumbnailId": .document(["$exists": true])]) == 0)
        #expect(try db.locations.count(["updated_at": .date(t3)]) == 2)
        #expect(try db.setThumbnail(nil, forImage: image, updatedAt: t3) == 0)
    }

    /// Two thumbnail runs that overlap each relink; the newer thumbnail wins whatever
    /// order the relinks come in, so the older run never points places at a thumbnail the newer
    /// run deleted; and a thumbnail a place still shows reads as in use.
    @Test(.liveServer) func theNewestThumbnailWinsOverlappingRelinks() throws {
        let db = try LiveServer.database("relinks")
        defer { LiveServer.drop(db) }
        let image = ObjectId(), first = ObjectId(), older = ObjectId(), newer = ObjectId()
        #expect(first < older && older < newer)
        _ = try db.locations.upsert([
            UpsertItem(key: "a", fields: ["name": "A", "imageId": .string(image.hex), "thumbnailId": .string(first.hex)]),
            UpsertItem(key: "b", fields: ["name": "B", "imageId": .string(image.hex)]),
            UpsertItem(key: "c", fields: ["name": "C", "imageId": .string(image.hex), "thumbnailId": .null]),
        ], options: UpsertOptions())
        #expect(try db.setThumbnail(newer, forImage: image) == 3)
        // The other run's relink, late: nothing moves back to its older thumbnail.
        #expect(try db.setThumbnail(older, forImage: image) == 0)
        #expect(try db.locations.count(["thumbnailId": .string(newer.hex)]) == 3)
        #expect(try db.thumbnailInUse(newer))
        #expect(try !db.thumbnailInUse(older))
        #expect(try !db.thumbnailInUse(first))
    }
}

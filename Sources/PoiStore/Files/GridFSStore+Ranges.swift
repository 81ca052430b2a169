/// Reading a GridFS file a few chunks at a time, for downloads that send it as it is read
/// (`poi serve --gridfs`): memory per download stays at a few chunks whatever the file's size,
/// and a byte range reads only the chunks that hold it.
extension GridFSStore {
    /// What a ranged read needs from a file's `<bucket>.files` document.
    public struct ChunkLayout: Sendable, Equatable {
        /// The file's size in bytes.
        public var length: Int
        /// Bytes per chunk (every chunk but the last holds exactly this many).
        public var chunkSize: Int

        public init(length: Int, chunkSize: Int) {
            self.length = length
            self.chunkSize = chunkSize
        }
    }

    /// The length and chunk size of `file`'s bytes; nil when the bucket has no such file (never
    /// stored, or deleted since its `files` document was read). `.bytesDamaged` when they are not
    /// the `files` document's length, as `bytes(of:)` reports it.
    public func chunkLayout(of file: StoredFile) throws(StoreError) -> ChunkLayout? {
        let d = try database.collection(bucket.bucketName + ".files")
            .findOne(["_id": .objectId(file.id)], projection: ["_id": 0, "length": 1, "chunkSize": 1])
        guard let d else { return nil }
        guard let length = d["length"]?.int64Value, length >= 0,
              let chunkSize = d["chunkSize"]?.int64Value, chunkSize > 0 else {
            throw .bytesDamaged(id: file.id, fileName: file.fileName, reason: "its GridFS entry has no valid length and chunkSize")
        }
        if let problem = Self.sizeProblem(stored: Int(length), documented: file.length) {
            throw .bytesDamaged(id: file.id, fileName: file.fileName, reason: problem)
        }
        return ChunkLayout(length: Int(length), chunkSize: Int(chunkSize))
    }

    /// Bytes of `file` from `range.lowerBound`, reading at most `maxChunks` chunks: the pieces, in
    /// order, up to `range.upperBound` or the end of the last chunk read, whichever comes first.
    /// The caller asks again from where they end.
    ///
    /// One query per call (`files_id` and `n`, the bucket's own index), on a pooled client that
    /// is given back before it returns: a download paused by a slow reader holds no database
    /// connection. A chunk missing, out of order or of the wrong size is `.bytesDamaged` (also
    /// what a reader sees when the file is deleted under it).
    public func read(_ file: StoredFile, layout: ChunkLayout, range: Range<Int>, maxChunks: Int) throws(StoreError) -> [[UInt8]] {
        precondition(range.lowerBound >= 0 && range.upperBound <= layout.length && maxChunks > 0)
        guard !range.isEmpty else { return [] }
        let size = layout.chunkSize
        let first = range.lowerBound / size
        let last = min((range.upperBound - 1) / size, first + maxChunks - 1)
        let cursor = try database.collection(bucket.bucketName + ".chunks").find(
            ["files_id": .objectId(file.id), "n": .document(["$gte": .int64(Int64(first)), "$lte": .int64(Int64(last))])],
            sort: ["n": 1], projection: ["_id": 0, "n": 1, "data": 1])
        defer { cursor.close() }
        func damaged(_ reason: String) -> StoreError { .bytesDamaged(id: file.id, fileName: file.fileName, reason: reason) }
        var pieces: [[UInt8]] = []
        var n = first
        while let d = try cursor.next() {
            guard n <= last, d["n"]?.int64Value == Int64(n) else { throw damaged("GridFS chunk \(n) is missing") }
            guard case .binary(_, let data)? = d["data"] else { throw damaged("GridFS chunk \(n) holds no binary data") }
            let start = n * size
            let expected = min(size, layout.length - start)
            guard data.count == expected else { throw damaged("GridFS chunk \(n) has \(data.count) of \(expected) bytes") }
            let lo = max(range.lowerBound, start) - start
            let hi = min(range.upperBound, start + expected) - start
            pieces.append(lo == 0 && hi == data.count ? data : Array(data[lo..<hi]))
            n += 1
        }
        guard n == last + 1 else { throw damaged("GridFS chunk \(n) is missing") }
        return pieces
    }
}

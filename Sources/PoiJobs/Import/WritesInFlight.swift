import PoiFormats
import PoiModel
import PoiStore

/// A valid record on its way to the server: the place, the record as read (for the rejects file,
/// should the place be refused later) and, once its image is stored, the image it shows.
struct PendingPlace {
    var place: Place
    var raw: RawRecord?
    var links: PlaceDocument.ImageLinks?
}

/// A window whose images are stored and whose places are ready to be written.
struct PreparedWindow {
    var pending: [PendingPlace]
    var writes: [UpsertItem]
    /// For each write, its place's index in `pending`.
    var writeIndex: [Int]
}

/// The windows whose places are at the server, and what follows each write.
///
/// A window's places go to the server off the import's thread (an `OrderedWork`: libmongoc
/// blocks its thread while the server works) while the import reads the next window and stores
/// its images, so the server and the client work at
/// the same time. Windows are collected oldest first; after each write the images the window
/// links to get their thumbnails settled (`settleThumbnails`) before the outcomes are handed
/// back to be counted. After a failure, `abandon` waits for the writes still at the server, so
/// nothing of the job is writing once it has returned.
final class WritesInFlight {
    /// How many windows may be at the server at once: it works on one (or reads the next one's
    /// digests) while the client reads, hashes images and encodes the next. Each window in
    /// flight holds its places in memory, so this bounds memory at `depth + 1` windows.
    let depth = 2
    private let places: any PlaceRepository
    private let images: any ImageRepository
    /// Windows at the server, oldest first; `writes` holds their writes in the same order.
    private var windows: [PreparedWindow] = []
    private var writes: OrderedWork<Result<[UpsertOutcome], StoreError>>

    init(places: any PlaceRepository, images: any ImageRepository) {
        self.places = places
        self.images = images
        writes = OrderedWork(label: "poi.import.write", depth: depth, concurrent: true)
    }

    /// Sends a window's places to the server. The caller makes room first (`collectOldest`).
    /// Each key is written at most once per run, so windows in flight never write the same place,
    /// and their order at the server does not matter.
    func send(_ window: PreparedWindow) {
        let (places, writes) = (places, window.writes)
        windows.append(window)
        self.writes.start { Result { () throws(StoreError) in try places.upsert(writes) } }
    }

    /// While more than `limit` windows are in flight: waits for the oldest, settles its
    /// thumbnails and returns it with its outcomes; nil once at most `limit` are left. A write
    /// that failed as a whole throws. `imageGone` hears of each image deleted from the database
    /// while the window linked places to it, with how many places it wrote showing it.
    func collectOldest(leaving limit: Int,
                       imageGone: (ObjectId, Int) -> Void) throws(JobError) -> (window: PreparedWindow, outcomes: [UpsertOutcome])? {
        guard windows.count > limit else { return nil }
        let window = windows.removeFirst()
        let outcomes: [UpsertOutcome]
        switch writes.next()! {
        case .success(let value): outcomes = value
        case .failure(let error): throw .store(error)
        }
        do { try settleThumbnails(outcomes, of: window, imageGone: imageGone) } catch { throw .store(error) }
        return (window, outcomes)
    }

    /// After a failure: lets the writes at the server finish (their outcomes no longer matter).
    func abandon() {
        while writes.next() != nil {}
        windows.removeAll()
    }

    /// After a window's write, each image it links to ends with one thumbnail, the newest, that
    /// every place showing it links to. Runs beside this import can leave it otherwise:
    /// - a `poi thumbnails` run may have replaced the thumbnail this import looked up before the
    ///   write, relinked the places that existed then (not these) and deleted the old one;
    /// - another import storing the same new photo at once may have made a thumbnail of its own.
    /// Read after the write, the newest thumbnail is either one made since (its places are
    /// relinked here) or one made before the write (whose run's relink, which follows its store,
    /// covered these places): no place is left on a deleted thumbnail, and the older ones no
    /// place shows go. One lookup per image of the window; writes only when there is more than
    /// one thumbnail.
    private func settleThumbnails(_ outcomes: [UpsertOutcome], of window: PreparedWindow,
                                  imageGone: (ObjectId, Int) -> Void) throws(StoreError) {
        var shownImages = Set<ObjectId>()
        var linked: [ObjectId: ObjectId] = [:]  // per image, the newest thumbnail the window linked
        var shown: [ObjectId: Int] = [:]  // places written (inserted or updated) per image
        for (k, outcome) in outcomes.enumerated() {
            if case .failed = outcome { continue }
            guard let links = window.pending[window.writeIndex[k]].links else { continue }
            switch outcome {
            case .inserted, .updated: shown[links.imageId, default: 0] += 1
            default: break
            }
            shownImages.insert(links.imageId)
            if let thumbnail = links.thumbnailId { linked[links.imageId] = max(linked[links.imageId] ?? thumbnail, thumbnail) }
        }
        guard !shownImages.isEmpty else { return }
        // An original deleted after this import found it (a `poi gc --delete` beside it that
        // judged it before the import marked it reused): said, never a silent broken link; a
        // rerun stores the content anew.
        let present = try images.storedIds(shown.keys.sorted())
        for (gone, count) in shown.sorted(by: { $0.key < $1.key }) where !present.contains(gone) {
            imageGone(gone, count)
        }
        let thumbnails = try images.thumbnailIds(of: shownImages.sorted())
        for (original, ids) in thumbnails.sorted(by: { $0.key < $1.key }) {
            guard let newest = ids.max(), ids.count > 1 || linked[original].map({ $0 < newest }) ?? true else { continue }
            try places.relinkThumbnail(imageId: original, thumbnailId: newest)
            _ = try images.deleteUnusedThumbnails(of: original)
        }
    }
}

import Foundation
import Synchronization

/// Folders made once per test process and shared by its tests (fixtures in a `static let`): no
/// test owns them, so they are removed when the process exits, however the tests went.
public enum ProcessScratch {
    private static let folders = Mutex<[URL]>([])

    /// `folder`, to be removed with what it holds when the test process exits.
    @discardableResult
    public static func removedAtExit(_ folder: URL) -> URL {
        folders.withLock { list in
            if list.isEmpty { atexit { ProcessScratch.removeAll() } }
            list.append(folder)
        }
        return folder
    }

    private static func removeAll() {
        for folder in folders.withLock({ $0 }) { try? FileManager.default.removeItem(at: folder) }
    }
}

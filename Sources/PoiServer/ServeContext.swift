import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// The request context of `poi serve`: Hummingbird's basic one plus the connection's channel, so
/// a large download can pace itself to the socket (see `FileRoutes.fileBody`).
struct ServeContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

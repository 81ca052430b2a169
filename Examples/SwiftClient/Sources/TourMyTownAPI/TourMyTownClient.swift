import Foundation
@_exported import OpenAPIRuntime
import OpenAPIURLSession
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Client {
    /// A client of the `poi serve` at `serverURL` (the document's server is `/`: the address is
    /// the app's). The session keeps no cache of its own: the app's 304s are the app's, sent
    /// with the ETag it kept (a cache in between would answer them 200 from its copy).
    public static func tourMyTown(serverURL: URL) -> Client {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let transport = URLSessionTransport(configuration: .init(session: URLSession(configuration: configuration)))
        return Client(serverURL: serverURL, transport: transport)
    }
}

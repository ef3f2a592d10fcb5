public import Hummingbird
import NIOCore

/// The request context of the reference server: Hummingbird's core context plus the TCP peer's IP
/// address, from which (with the trusted proxies' header) the OTP rate limits find the client's.
public struct ServerRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The peer's IP address as seen on the socket (`ServerRoutes.clientAddress` reads proxies' headers).
    public let remoteAddress: String
    /// This request's id (`X-Request-Id`, RequestID.swift), stored in the audit rows it appends.
    public internal(set) var requestId: String

    /// Creates the context for a request arriving on a channel.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        requestId = ""
    }
}

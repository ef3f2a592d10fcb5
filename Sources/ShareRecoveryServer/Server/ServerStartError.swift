#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import NIOCore

/// Why the reference server could not start: the server's own failures, with stable codes and a
/// reason that says what to do (docs/newcomer-errors.md). Bad configuration values stay
/// `ShareRecoveryError` `invalidParameters`, as before.
public struct ServerStartError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code.
    public enum Code: String, Sendable {
        /// Another process listens on the address and port.
        case addressInUse
        /// The host is not an address of this machine, or the port needs privileges.
        case addressUnavailable
        /// The database cannot be opened or created.
        case databaseUnavailable
    }

    /// The stable code.
    public let code: Code
    /// What happened and what to do; never a secret (database passwords are not in it).
    public let reason: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - reason: What happened and what to do.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }

    /// A bind failure as a start error; any other error unchanged.
    static func mapping(_ error: any Error, host: String, port: Int) -> any Error {
        guard let io = error as? IOError else { return error }
        let address = "\(host):\(port)"
        switch io.errnoCode {
        case EADDRINUSE:
            return ServerStartError(
                .addressInUse,
                "\(address) is already in use by another process: stop that process, or choose another --port (0 picks a free one)")
        case EADDRNOTAVAIL:
            return ServerStartError(
                .addressUnavailable, "\(host) is not an address of this machine: use 127.0.0.1, or an address this machine has")
        case EACCES:
            return ServerStartError(
                .addressUnavailable, "port \(port) needs privileges this process lacks: choose a port above 1023")
        default:
            return error
        }
    }
}

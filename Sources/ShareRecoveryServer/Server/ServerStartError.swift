#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// Why the reference server could not start: the server's own failures, with stable codes and a
/// reason that says what to do (docs/newcomer-errors.md).
public struct ServerStartError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code.
    public enum Code: String, Sendable {
        /// Another process listens on the address and port.
        case addressInUse
        /// The host is not an address of this machine, or the port needs privileges.
        case addressUnavailable
        /// The database cannot be opened or created, or (PostgreSQL) cannot be reached or logged in to.
        case databaseUnavailable
        /// The database lacks a migration this build needs (it is empty, or its server is older than
        /// this tool): `share-recovery migrate` applies them (on SQLite, starting `serve` once does too).
        case databaseNotMigrated
        /// The database has migrations of a newer release: `share-recovery migrate` of this build
        /// changes nothing on it (the newer release's does).
        case schemaNewerThanBuild
        /// Another process held the migration lock beyond the lock timeout.
        case migrationInProgress
        /// A configuration value that cannot be used: a missing or malformed master key or webhook
        /// secret, a PostgreSQL URL that does not parse; the reason names which (never a secret).
        case invalidConfiguration
        /// A `--trusted-proxy` network that is not an IPv4 or IPv6 network in CIDR notation (or is a /0,
        /// which would let every client choose its address).
        case invalidTrustedProxy
        /// The server stopped before it listened (a failure during start-up that the log names).
        case stoppedBeforeListening
        /// The PKCS#11 module holding the master key's wrapping key cannot be loaded or initialized.
        case pkcs11ModuleUnavailable
        /// No token with the given label (or no session on it).
        case pkcs11TokenNotFound
        /// The token has no (or no single) AES secret key with the given label.
        case pkcs11KeyNotFound
        /// The token refused the user PIN (wrong, locked, or login failed).
        case pkcs11PinIncorrect
        /// The wrapped master key file is not one, or does not open under the token's key.
        case pkcs11UnwrapFailed
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

    /// Errors compare by code, like every error type of this project: the reason is for people.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    public var description: String { "\(code.rawValue): \(reason)" }

    /// A bind failure as a start error; any other error unchanged.
    static func mapping(_ error: any Error, host: String, port: Int) -> any Error {
        guard let io = error as? IOError else { return error }
        let address = "\(host):\(port)"
        switch io.errnoCode {
        case EADDRINUSE:
            return ServerStartError(
                .addressInUse,
                "\(address) is already in use by another process: stop that process, or choose another --port (0 picks a free one)"
            )
        case EADDRNOTAVAIL:
            return ServerStartError(
                .addressUnavailable,
                "\(host) is not an address of this machine: use 127.0.0.1, or an address this machine has")
        case EACCES:
            return ServerStartError(
                .addressUnavailable, "port \(port) needs privileges this process lacks: choose a port above 1023")
        default:
            return error
        }
    }
}

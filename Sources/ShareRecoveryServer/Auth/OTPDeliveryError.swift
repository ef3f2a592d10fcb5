/// Why a one-time code did not reach its user, or could not be read back from a file inbox. The
/// server answers a failed delivery with 502 `sourceFailure` and logs this error; the reason never
/// holds the code itself.
public struct OTPDeliveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code.
    public enum Code: String, Sendable {
        /// The sender could not hand the code on: the file cannot be written, the gateway refused it.
        case deliveryFailed
        /// A file inbox that cannot be read, or has no code for the flow.
        case noCode
    }

    /// The stable code.
    public let code: Code
    /// What happened; never the one-time code.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }
}

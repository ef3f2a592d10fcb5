import ShareCrypto
import ShareRecovery

/// What a token allows: the reference server issues each token for one purpose (the API's
/// `/recovery/flows` with `purpose`), and write tokens are single-use. The one definition, shared by
/// the server (which issues and checks tokens) and its clients (which ask a ``TokenProvider`` for them).
public enum TokenPurpose: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Reading a cipherText, listing recovery methods, and custodian sessions of purpose recovery.
    case recover
    /// Storing a cipherText (single use), and custodian sessions of purpose backup.
    case addOrUpdateRecovery
    /// Deleting a cipherText (single use).
    case deleteRecovery
    /// Creating the user's wallet with the custodian as party 2 (DKG), signing with it, and refreshing
    /// the signing set (custodian sessions of purpose refresh).
    case sign
    /// Eject (docs/eject.md): the custodian releases its signing share once, so the user can rebuild
    /// the full private key and leave; the wallet signs with the custodian no more.
    case eject
    /// Adding a device to the user's wallet: the approving device's two requests and the new
    /// device's reading of its enrolment (docs/devices.md).
    case addDevice
    /// Removing a device from the user's wallet (single use).
    case removeDevice

    /// The purpose's name.
    public var description: String { rawValue }
}

/// Returns a bearer token (without the `Bearer ` prefix) for a purpose. Called once per operation,
/// not per retry; its errors end the operation (a `ShareRecoveryError` or ``TransportError`` as
/// thrown, anything else as ``TransportError/Code/tokenProviderFailed``).
public typealias TokenProvider = @Sendable (TokenPurpose) async throws -> String

/// Builds credential headers and checks their values. Values only ever enter ``HTTPCall/Header``
/// marked secret, so no description or log shows them.
enum Credentials {
    /// `Authorization: Bearer …` from a provider.
    static func bearer(_ provider: TokenProvider, _ purpose: TokenPurpose, operation: String) async throws
        -> HTTPCall.Header
    {
        let token: String
        do {
            token = try await provider(purpose)
        } catch let error as ShareRecoveryError {
            throw error
        } catch let error as TransportError {
            throw error
        } catch is CancellationError {
            throw ShareRecoveryError(.cancelled, "\(operation) was cancelled")
        } catch {
            // The type only: a provider's message could quote the token.
            throw TransportError(.tokenProviderFailed, "\(operation): the token provider failed (\(type(of: error)))")
        }
        guard isHeaderSafe(token.utf8) else {
            throw ShareRecoveryError(.invalidParameters, "\(operation): the bearer token is empty or not visible ASCII")
        }
        return HTTPCall.Header(name: "Authorization", value: "Bearer " + token, isSecret: true)
    }

    /// `X-Webhook-Secret: …`.
    static func webhookSecret(_ secret: SecureBytes, operation: String) throws(ShareRecoveryError) -> HTTPCall.Header {
        let bytes = secret.revealedBytes()
        guard isHeaderSafe(bytes) else {
            throw ShareRecoveryError(
                .invalidParameters, "\(operation): the webhook secret is empty or not visible ASCII")
        }
        return HTTPCall.Header(name: "X-Webhook-Secret", value: String(decoding: bytes, as: UTF8.self), isSecret: true)
    }

    /// Visible ASCII only, so a value can neither break the header framing nor be re-encoded on the way.
    static func isHeaderSafe(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy { (0x21...0x7E).contains($0) }
    }
}

/// URL pieces: base URLs as configured, path segments percent-encoded.
enum URLText {
    /// The base URL without trailing slashes.
    static func base(_ text: String) -> String {
        var text = text
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// A base URL for descriptions: any `user:password@` part is redacted.
    static func redacted(_ base: String) -> String {
        guard let schemeEnd = base.firstRange(of: "://") else { return base }
        let rest = base[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return base }
        return String(base[..<schemeEnd.upperBound]) + "<redacted>" + String(rest[at...])
    }

    /// One path segment, percent-encoded (RFC 3986: everything but unreserved characters).
    /// - Throws: `invalidParameters` for an empty segment or one of `.`/`..`, which servers resolve as paths.
    static func segment(_ text: String, field: String) throws(ShareRecoveryError) -> String {
        guard !text.isEmpty, text != ".", text != ".." else {
            throw ShareRecoveryError(.invalidParameters, "\(field) must not be empty, \".\" or \"..\"")
        }
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(Self.hexDigits[Int(byte >> 4)]) + String(Self.hexDigits[Int(byte & 0x0F)])
            }
        }
        return out
    }

    private static let hexDigits = Array("0123456789ABCDEF")
}

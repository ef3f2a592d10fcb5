import ShareCrypto
import ShareRecoveryHTTP

/// A token from `otp verify`, kept in a file so it stays out of shell history and process lists.
enum TokenFile {
    /// A provider that answers every purpose with the file's token: the server refuses one of the
    /// wrong purpose (403), so a mismatch surfaces as a typed error, not a silent retry.
    static func provider(_ path: String) throws -> TokenProvider {
        let token = try Files.readSecretLine(path)
        return { _ in String(decoding: token.revealedBytes(), as: UTF8.self) }
    }
}

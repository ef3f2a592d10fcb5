import ShareRecovery

/// The integrator backup API's resources (`/users/{userId}/…`), shared by ``HTTPCipherTextSource``
/// and ``HTTPCipherTextStore``.
struct IntegratorAPI: Sendable {
    static let backupShareOperation = "/users/{userId}/user-backup-share"
    static let methodsOperation = "/users/{userId}/recovery-methods"

    let baseURL: String
    let transport: HTTPTransport

    /// `{base}/users/{userId}/user-backup-share?backupMethod=M`.
    func backupShareURL(userId: String, method: BackupMethod) throws(ShareRecoveryError) -> String {
        "\(baseURL)/users/\(try URLText.segment(userId, field: "userId"))/user-backup-share?backupMethod=\(method.apiName)"
    }

    /// `{base}/users/{userId}/recovery-methods`.
    func methodsURL(userId: String) throws(ShareRecoveryError) -> String {
        "\(baseURL)/users/\(try URLText.segment(userId, field: "userId"))/recovery-methods"
    }

    /// A call with an optional bearer token of `purpose`.
    func call(
        _ method: HTTPCall.Method, url: String, operation: String, purpose: TokenPurpose, tokenProvider: TokenProvider?,
        body: [UInt8]? = nil
    ) async throws -> HTTPCall {
        var call = HTTPCall(method: method, url: url, operation: "\(method.rawValue) \(operation)", body: body)
        if let tokenProvider {
            call.headers.append(try await Credentials.bearer(tokenProvider, purpose, operation: call.operation))
        }
        return call
    }
}

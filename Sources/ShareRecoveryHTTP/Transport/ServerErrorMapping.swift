import ShareRecovery

/// Turns the API's error bodies (`{"error": {"code": "…", "message": "…"}}`) into errors: a
/// `ShareRecoveryError` where the server ran a check the engine also runs, a ``TransportError``
/// otherwise. Error bodies are read leniently: a proxy's HTML page still yields an error with the
/// HTTP status, just without a server code.
enum ServerErrorMapping {
    /// Server codes taken over as the engine's own (``APIErrorTable``'s `engine` rows): the format and
    /// resharing checks the server runs with the same meaning as in process (so an HTTP custodian
    /// fails like `LocalCustodian`), and `operationInProgress` (the account's single flight, like the
    /// device's). Never `authenticationFailed`: here it means a wrong backup secret.
    static let sharedCodes = Set(
        APIErrorTable.rows.compactMap { row -> ShareRecoveryError.Code? in
            guard case .engine(let code) = row.client else { return nil }
            return code
        })

    /// The API's own refusals, kept as transport codes of the same name (the table's `transport` rows).
    static let apiCodes = Set(APIErrorTable.rows.compactMap(transportCode))

    /// The only codes a 401 or 403 may carry: credential problems, never a local check's code.
    static let credentialCodes = Set(
        APIErrorTable.rows.filter { $0.status == 401 || $0.status == 403 }.compactMap(transportCode))

    private static func transportCode(_ row: APIErrorTable.Row) -> TransportError.Code? {
        guard case .transport(let code, _) = row.client else { return nil }
        return code
    }

    /// The server's error code and message, when the body has the API's error shape.
    static func serverError(_ reply: HTTPReply) -> (code: String?, message: String?) {
        guard let value = try? StrictJSON.parse(reply.body, maximumSize: reply.body.count),
            let error = value["error"], case .object = error
        else { return (nil, nil) }
        var code: String?
        var message: String?
        if case .string(let text)? = error["code"],
            (1...64).contains(text.utf8.count),
            text.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || $0.properties.numericType != nil
                        || "_-.".unicodeScalars.contains($0))
            })
        {
            code = text
        }
        if case .string(let text)? = error["message"] {
            message = sanitized(text)
        }
        return (code, message)
    }

    /// The server's error code alone, for reasons.
    static func serverCode(_ reply: HTTPReply) -> String? { serverError(reply).code }

    /// A 404: `notFound`, or a shared code the server named (the server answers `noMatchingShare` with a 404).
    static func notFound(_ operation: String, _ reply: HTTPReply, quotingMessage: Bool = true) -> ShareRecoveryError {
        let code = serverError(reply).code.flatMap(ShareRecoveryError.Code.init(name:))
        return ShareRecoveryError(
            code.flatMap { sharedCodes.contains($0) ? $0 : nil } ?? .notFound,
            "\(operation): \(summary(reply, quotingMessage: quotingMessage))")
    }

    /// Any other 4xx: a shared check's `ShareRecoveryError` (never on a 401/403), the API's refusal
    /// as a ``TransportError`` of the same name (only a credential code on a 401/403), else
    /// `requestRejected`.
    /// - Parameter quotingMessage: Whether the reason quotes the server's message (not where the
    ///   server may echo a secret the client sent).
    static func rejected(_ operation: String, _ reply: HTTPReply, quotingMessage: Bool = true) -> any Error {
        let summary = summary(reply, quotingMessage: quotingMessage)
        let serverCode = serverError(reply).code
        let credentials = reply.status == 401 || reply.status == 403
        if !credentials, let code = serverCode.flatMap(ShareRecoveryError.Code.init(name:)), sharedCodes.contains(code)
        {
            return ShareRecoveryError(code, "\(operation): \(summary)")
        }
        let allowed = credentials ? credentialCodes : apiCodes
        let code = serverCode.flatMap(TransportError.Code.init(rawValue:)).flatMap { allowed.contains($0) ? $0 : nil }
        return TransportError(
            code ?? .requestRejected, "\(operation): \(summary)", status: reply.status, serverCode: serverCode,
            retryAfterSeconds: reply.retryAfterSeconds)
    }

    /// `HTTP 400, server code "x": message`.
    static func summary(_ reply: HTTPReply, quotingMessage: Bool = true) -> String {
        let (code, message) = serverError(reply)
        var text = "HTTP \(reply.status)"
        text += code.map { ", server code \"\($0)\"" } ?? ", no server code"
        if quotingMessage, let message, !message.isEmpty { text += ": \(message)" }
        return text
    }

    /// No control characters: a server message is text for people, nothing more. It is kept whole,
    /// since what to do comes last ("…; retry in 60 seconds"); the transport's limit on a response
    /// body already bounds its length.
    private static func sanitized(_ text: String) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }
}

package import ShareRecovery

/// The API's error codes, one row each: the HTTP status the reference server answers with, and
/// what a client of this module makes of it (with the hint an app shows). The server takes its
/// statuses from here and ``ServerErrorMapping`` its mapping, so a code is added in one place;
/// `ErrorCodeTests` fails when a code the server answers with has no row, or a row no line in
/// docs/openapi.yaml.
package enum APIErrorTable {
    /// What a client makes of an error body with the row's code.
    package enum ClientMapping: Sendable, Equatable {
        /// The engine's check of the same name, so a remote custodian fails like an in-process one
        /// (the hint is the engine's).
        case engine(ShareRecoveryError.Code)
        /// The API's own refusal, as the transport code of the same name, with what to do.
        case transport(TransportError.Code, hint: String)
        /// A failure on the server's side (5xx): retried, then ``TransportError/Code/unavailable``.
        case unavailable
    }

    /// One code of the API.
    package struct Row: Sendable {
        /// The code on the wire.
        package let code: String
        /// The HTTP status it is answered with.
        package let status: Int
        /// What the client makes of it.
        package let client: ClientMapping
    }

    /// Every code, the server's own refusals first, then the engine checks it runs on client input.
    package static let rows: [Row] = [
        transport(.unauthorized, 401, hint: "Verify your identity again (a new one-time code), then retry."),
        transport(.forbidden, 403, hint: "Verify your identity again (a new one-time code), then retry."),
        transport(
            .wrongCode, 401, hint: "The one-time code does not match; enter it again (the flow ends after five)."),
        transport(.flowEnded, 410, hint: "The one-time code flow has ended; start a new one, then retry."),
        transport(.rateLimited, 429, hint: "Too many attempts; wait a few minutes, then try again."),
        transport(.methodNotAllowed, 405, hint: reportHint),
        transport(.payloadTooLarge, 413, hint: reportHint),
        transport(.idempotencyKeyReused, 422, hint: reportHint),
        transport(
            .requestInProgress, 409, hint: "The server is still finishing this request; try again in a moment."),
        transport(
            .deviceLimitReached, 409,
            hint:
                "The wallet has as many devices as the server allows; remove one (`device remove`), then add the new one."
        ),
        transport(
            .refreshRequired, 409,
            hint:
                "The wallet's shares are older than the server allows; refresh them (`share-recovery refresh --server`), then sign again."
        ),
        transport(
            .conflict, 409, hint: "The request does not fit the account's current state; reload and try again."),
        Row(code: "sourceFailure", status: 502, client: .unavailable),
        Row(code: "internalError", status: 500, client: .unavailable),
        Row(code: "notReady", status: 503, client: .unavailable),
        engine(.notFound, 404), engine(.noMatchingShare, 404),
        engine(.inconsistentShares, 409), engine(.nonceReused, 409), engine(.operationInProgress, 409),
        engine(.walletEjected, 409), engine(.pairSetupStale, 409),
        engine(.malformedRecord, 400), engine(.malformedCipherText, 400), engine(.malformedCustodianShare, 400),
        engine(.malformedInput, 400), engine(.unsupportedVersion, 400), engine(.unsupportedMethod, 400),
        engine(.invalidParameters, 400), engine(.invalidScalar, 400), engine(.invalidPoint, 400),
        engine(.invalidShare, 400), engine(.publicKeyMismatch, 400), engine(.tamperedShare, 400),
        engine(.unsealFailed, 400), engine(.dealerCheckFailed, 400), engine(.subShareCheckFailed, 400),
        engine(.dkgProofFailed, 400), engine(.invalidSignatureShare, 400), engine(.ecdsaCheckFailed, 400),
    ]

    /// The rows by code.
    package static let byCode: [String: Row] = Dictionary(uniqueKeysWithValues: rows.map { ($0.code, $0) })

    /// The hint of an API refusal the client reads back as a transport code; nil for the
    /// transport's own codes (no answer, no token).
    static func hint(for code: TransportError.Code) -> String? {
        guard case .transport(_, let hint)? = byCode[code.rawValue]?.client else { return nil }
        return hint
    }

    static let reportHint = "The server refused the request; report this with the request id."

    private static func transport(_ code: TransportError.Code, _ status: Int, hint: String) -> Row {
        Row(code: code.rawValue, status: status, client: .transport(code, hint: hint))
    }

    private static func engine(_ code: ShareRecoveryError.Code, _ status: Int) -> Row {
        Row(code: code.description, status: status, client: .engine(code))
    }
}

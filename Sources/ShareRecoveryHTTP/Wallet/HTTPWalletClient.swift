public import ShareCrypto
public import ShareRecovery

/// The device's side of a 2-of-2 wallet whose other party is the reference server's custodian
/// (`/wallets`): the wallet's birth by DKG (docs/formats.md §10) and its signatures (§11). The device
/// runs the engine's roles (`DKGParty`, `SigningParty`) and checks everything the server sends:
/// its proof, its sub-share, its signature share.
///
/// Every call sends a bearer token of purpose ``TokenPurpose/sign``. Sub-shares never travel in
/// clear: the server's is sealed to a fresh per-wallet key of the device, the device's to the
/// custodian key.
public struct HTTPWalletClient: Sendable, CustomStringConvertible {
    private let baseURL: String
    private let tokenProvider: TokenProvider
    private let transport: HTTPTransport

    /// - Parameters:
    ///   - baseURL: The server's base URL (trailing slashes are ignored).
    ///   - tokenProvider: Supplies `sign` tokens, and for the device calls `addDevice` and `removeDevice` ones.
    ///   - transport: Timeouts, retries and limits.
    public init(baseURL: String, tokenProvider: @escaping TokenProvider, transport: HTTPTransport = HTTPTransport()) {
        self.baseURL = URLText.base(baseURL)
        self.tokenProvider = tokenProvider
        self.transport = transport
    }

    /// Creates a 2-of-2 wallet: the device is party 1, the server's custodian party 2.
    /// - Parameters:
    ///   - clientId: The user.
    ///   - walletId: The wallet's id, agreed before the DKG.
    ///   - curve: The curve.
    ///   - random: The device's random source.
    /// - Returns: The device's signing share (generation 0), once the server reported the same key.
    /// - Throws: `ShareRecoveryError`: `dkgProofFailed` or `subShareCheckFailed` (party 2) when the
    ///   server's messages do not verify; `publicKeyMismatch` when it combined another key; `conflict`
    ///   when the user already has a wallet; the transport's errors.
    public func createWallet(
        clientId: String, walletId: String, curve: Curve, using random: some RandomSource = SystemRandom()
    )
        async throws -> ShareRecord
    {
        let parameters = try DKGParameters(curve: curve, walletId: walletId, threshold: 2, parties: 2)
        let party = try DKGParty(parameters: parameters, partyIndex: 1, using: random)
        let sessionKey = SealingKeyPair(using: random)
        var operation = "POST /wallets/dkg"
        var reply = try await send(
            "/wallets/dkg", operation: operation,
            body: JSONBody.encode([
                ("clientId", .string(clientId)), ("walletId", .string(walletId)), ("curve", .string(curve.name)),
                ("threshold", .number("2")), ("parties", .number("2")),
                ("round1", ProtocolWire.encode(party.round1Message)),
                ("clientKey", .string(Hex.encode(sessionKey.publicKey))),
            ]))
        var fields = try JSONBody.object(
            reply, required: ["sessionId", "round1", "sealedSubShare", "custodianKey"], operation: operation)
        let sessionId = try URLText.segment(try fields.string("sessionId"), field: "sessionId")
        let broadcast = try ProtocolWire.decodeRound1(try fields.value("round1"), sender: 2, curve: curve)
        let (state, outgoing) = try party.receive(round1: [broadcast])
        guard let sealed = Base64.decode(try fields.string("sealedSubShare")) else {
            throw ShareRecoveryError(.malformedInput, "\(operation): sealedSubShare is not base64")
        }
        let custodianKey = try fields.hex("custodianKey", count: 32)
        let subShare = try mappingCryptoErrors { () throws -> Scalar in
            let opened: SecureBytes
            do {
                opened = try SealedBox.open(sealed, with: sessionKey)
            } catch {
                throw ShareRecoveryError(
                    .unsealFailed, "\(operation): the server's sub-share is not sealed to this device", party: 2)
            }
            return try Scalar(secure: opened, curve: curve)
        }
        let share = try state.finish(round2: [DKGRound2Message(sender: 2, receiver: 1, subShare: subShare)])

        operation = "POST /wallets/dkg/{id}/finish"
        let ownSealed = try mappingCryptoErrors {
            try SealedBox.seal(outgoing[0].subShare.rawRepresentation, to: custodianKey, using: random)
        }
        reply = try await send(
            "/wallets/dkg/\(sessionId)/finish", operation: operation,
            body: JSONBody.encode([("sealedSubShare", .string(Base64.encode(ownSealed)))]))
        fields = try JSONBody.object(reply, required: ["publicKey", "setId", "generation"], operation: operation)
        guard try fields.string("publicKey") == share.publicKey.hex, try fields.string("setId") == share.setId.hex
        else {
            throw ShareRecoveryError(
                .publicKeyMismatch, "the server combined another wallet key or set; discard this wallet", party: 2)
        }
        return share
    }

    /// Signs with the device's share and the server's.
    /// - Parameters:
    ///   - share: The device's signing share (party 1), of the wallet's current set.
    ///   - clientId: The user.
    ///   - message: The message.
    ///   - mode: The mode (default: the curve's).
    ///   - tweaks: A derivation path and/or Taproot (mode bip340 on secp256k1 only): the custodian
    ///     signs for the same child or output key, and the signature verifies under it.
    ///   - random: The device's random source.
    /// - Returns: The package and the signature, verified under the wallet key (or the tweaked key).
    /// - Throws: `ShareRecoveryError`: `conflict` when the server signs with another set (the device's
    ///   share is from before a recovery); `invalidSignatureShare` (party 2) when the server's share
    ///   does not verify; `nonceReused` when the server's session already signed; the transport's errors.
    public func sign(
        share: ShareRecord, clientId: String, message: [UInt8], mode: SigningMode? = nil, tweaks: SigningTweaks = .none,
        using random: some RandomSource = SystemRandom()
    ) async throws -> (package: SigningPackage, signature: [UInt8]) {
        let mode = mode ?? .default(for: share.curve)
        let signer = try SigningParty(share: share, mode: mode)
        guard share.partyIndex == 1, share.parties == 2 else {
            throw ShareRecoveryError(
                .invalidParameters, "signing with the server needs the device's share (party 1) of a 2-of-2 wallet")
        }
        // Refused here, before the server is asked: tweaks need mode bip340 on secp256k1.
        try tweaks.check(mode: mode, curve: share.curve)
        var opening: [(key: String, value: JSONValue)] = [
            ("clientId", .string(clientId)), ("walletId", .string(share.walletId)), ("mode", .string(mode.rawValue)),
            ("setId", .string(share.setId.hex)),
        ]
        if !tweaks.isEmpty {
            opening += [("path", .string(tweaks.path.description)), ("taproot", .bool(tweaks.taproot))]
        }
        var operation = "POST /wallets/signing-sessions"
        var reply = try await send("/wallets/signing-sessions", operation: operation, body: JSONBody.encode(opening))
        var fields = try JSONBody.object(reply, required: ["sessionId", "commitment"], operation: operation)
        let sessionId = try URLText.segment(try fields.string("sessionId"), field: "sessionId")
        let custodianCommitment = try ProtocolWire.decodeCommitment(
            try fields.value("commitment"), party: 2, curve: share.curve)
        let nonce = try signer.commit(message: message, tweaks: tweaks, using: random)
        let package = try SigningPackage(
            signingSet: share, message: message, mode: mode,
            commitments: [1: nonce.commitment, 2: custodianCommitment],
            tweaks: tweaks)

        operation = "POST /wallets/signing-sessions/{id}/sign"
        reply = try await send(
            "/wallets/signing-sessions/\(sessionId)/sign", operation: operation,
            body: JSONBody.encode([
                ("message", .string(Base64.encode(message))), ("commitment", ProtocolWire.encode(nonce.commitment)),
            ]))
        fields = try JSONBody.object(reply, required: ["signatureShare"], operation: operation)
        let custodianShare = try ProtocolWire.decodeSignatureShare(
            try fields.value("signatureShare"), party: 2, curve: share.curve)
        let own = try signer.sign(nonce: nonce, package: package)
        return (package, try package.aggregate(signatureShares: [1: own, 2: custodianShare]))
    }

    /// The base URL (credentials redacted); never a token.
    public var description: String { "HTTPWalletClient(\(URLText.redacted(baseURL)), token: <redacted>)" }

    /// One call with a token of `purpose` (`sign` for the wallet's own calls; the device calls of
    /// HTTPWalletClient+Devices.swift take theirs).
    func send(
        _ path: String, operation: String, body: [UInt8]?, method: HTTPCall.Method = .post,
        purpose: TokenPurpose = .sign
    ) async throws -> HTTPReply {
        var call = HTTPCall(method: method, url: baseURL + path, operation: operation, body: body)
        call.headers.append(try await Credentials.bearer(tokenProvider, purpose, operation: operation))
        return try await transport.send(call)
    }
}

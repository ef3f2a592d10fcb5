public import ShareCrypto
public import ShareRecovery

/// ECDSA with the custodian as the second signer (docs/formats.md §12, docs/ecdsa.md), behind
/// `/wallets/ecdsa`: the device's pair setup with the custodian, then signatures of three rounds over
/// it. The device runs the engine's roles (`PairSetupParty`, `ECDSASigningParty`) and checks every
/// message the server sends; a failed check on either side aborts the signature and discards the
/// pair setup on both (the device tells the server when its own check failed).
extension HTTPWalletClient {
    /// Makes the device's ECDSA pair setup with the custodian, bound to the share's set and generation.
    /// Keep the result sealed beside the share (`KeptPairSetup.seal`); it replaces
    /// any earlier setup of the set on the server.
    /// - Parameters:
    ///   - share: The device's secp256k1 signing share of a 2-of-2 wallet with the custodian.
    ///   - clientId: The user.
    ///   - seed: 32 bytes the device draws the setup's random values from; fresh by default.
    /// - Returns: The device's side of the setup.
    /// - Throws: `ShareRecoveryError`: `ecdsaCheckFailed` (party 2) when the server's messages fail a
    ///   check; `pairSetupStale` when the server's share of the set is of another generation;
    ///   `operationInProgress` while a backup, recovery or ECDSA signature of the account runs; the
    ///   transport's errors.
    public func makePairSetup(
        share: ShareRecord, clientId: String, seed: SecureBytes = SystemRandom().secureBytes(count: 32)
    ) async throws -> PairSetup {
        let party = try PairSetupParty(share: share, peer: Self.custodianIndex(of: share), seed: seed)
        var operation = "POST /wallets/ecdsa/pair-setups"
        var reply = try await send(
            "/wallets/ecdsa/pair-setups", operation: operation,
            body: JSONBody.encode(
                Self.binding(share, clientId: clientId) + [("round1", Self.base64(party.round1Message))]))
        var fields = try JSONBody.object(reply, required: ["sessionId", "round1", "round2"], operation: operation)
        let sessionId = try URLText.segment(try fields.string("sessionId"), field: "sessionId")
        let round2 = try party.round2(peerMessage: try Self.message(fields, "round1", operation: operation))
        let setup = try party.finish(peerMessage: try Self.message(fields, "round2", operation: operation))

        operation = "POST /wallets/ecdsa/pair-setups/{id}/finish"
        reply = try await send(
            "/wallets/ecdsa/pair-setups/\(sessionId)/finish", operation: operation,
            body: JSONBody.encode([("round2", Self.base64(round2))]))
        fields = try JSONBody.object(reply, required: ["setId", "generation"], operation: operation)
        guard try fields.string("setId") == share.setId.hex else {
            throw ShareRecoveryError(.malformedInput, "\(operation): the server kept the setup for another set")
        }
        return setup
    }

    /// Signs a 32-byte digest with the device's share and the custodian's, over their pair setup.
    /// - Parameters:
    ///   - share: The device's secp256k1 signing share (with its secret) of the wallet's current set.
    ///   - setup: The device's pair setup with the custodian for this share (``makePairSetup(share:clientId:seed:)``).
    ///   - clientId: The user.
    ///   - digest: The 32-byte digest, never hashed again.
    ///   - path: A non-hardened BIP-32 path from the wallet key; root by default.
    ///   - seed: 32 bytes the device draws the session's random values from; fresh by default.
    /// - Returns: The signature (low-s, with its recovery id), verified under the signing key.
    /// - Throws: `ShareRecoveryError`: `ecdsaCheckFailed` when a check failed on either side (the
    ///   setup is then discarded here and on the server: make a fresh one); `pairSetupStale` when the
    ///   setup is older than the share, or the server keeps none for it; `nonceReused` when a round
    ///   was answered before; `operationInProgress` while another session of the account runs; the
    ///   transport's errors.
    public func signECDSA(
        share: ShareRecord, setup: PairSetup, clientId: String, digest: [UInt8], path: DerivationPath = .root,
        seed: SecureBytes = SystemRandom().secureBytes(count: 32)
    ) async throws -> ECDSASignature {
        let custodian = try Self.custodianIndex(of: share)
        let party = try ECDSASigningParty(
            share: share, signers: [1, 2], setups: [setup], digest: digest, path: path, seed: seed)
        var opening = Self.binding(share, clientId: clientId) + [("digest", .string(Hex.encode(digest)))]
        if path != .root { opening.append(("path", .string(path.description))) }
        opening.append(("round1", Self.base64(try party.round1()[custodian] ?? [])))
        var operation = "POST /wallets/ecdsa/signing-sessions"
        var reply = try await serverRound(setup) {
            try await send("/wallets/ecdsa/signing-sessions", operation: operation, body: JSONBody.encode(opening))
        }
        var fields = try JSONBody.object(reply, required: ["sessionId", "round1"], operation: operation)
        let sessionId = try URLText.segment(try fields.string("sessionId"), field: "sessionId")
        let session = "/wallets/ecdsa/signing-sessions/\(sessionId)"

        let round2 = try await deviceRound(session, check: "round1") {
            try party.round2([custodian: try Self.message(fields, "round1", operation: operation)])
        }
        operation = "POST /wallets/ecdsa/signing-sessions/{id}/round2"
        reply = try await serverRound(setup) {
            try await send(
                session + "/round2", operation: operation,
                body: JSONBody.encode([("round2", Self.base64(round2[custodian] ?? []))]))
        }
        fields = try JSONBody.object(reply, required: ["round2"], operation: operation)
        let broadcast = try await deviceRound(session, check: "round2") {
            try party.round3([custodian: try Self.message(fields, "round2", operation: operation)])
        }
        operation = "POST /wallets/ecdsa/signing-sessions/{id}/round3"
        reply = try await serverRound(setup) {
            try await send(
                session + "/round3", operation: operation, body: JSONBody.encode([("round3", Self.base64(broadcast))]))
        }
        fields = try JSONBody.object(reply, required: ["round3", "signature"], operation: operation)
        let signature = try await deviceRound(session, check: "round3") {
            try party.signature([
                share.partyIndex: broadcast, custodian: try Self.message(fields, "round3", operation: operation),
            ])
        }
        // The server combined the same broadcasts; a different answer means it signed something else.
        guard try fields.string("signature") == Hex.encode(signature.recoverable) else {
            throw ShareRecoveryError(
                .malformedInput, "\(operation): the server's signature differs from the one the rounds make", party: 2)
        }
        return signature
    }

    /// Signs as ``signECDSA(share:setup:clientId:digest:path:seed:)`` does, making the pair setup
    /// when there is none or it is stale, and once more after an abort: one fresh setup and one more
    /// attempt, then the abort is reported.
    /// - Parameters:
    ///   - share: The device's secp256k1 signing share of a 2-of-2 wallet with the custodian.
    ///   - setup: The device's kept pair setup of that share, or nil when it has none.
    ///   - clientId: The user.
    ///   - digest: The 32-byte digest, never hashed again.
    ///   - path: A non-hardened BIP-32 path from the wallet key; root by default.
    ///   - keep: Called with each fresh setup before it signs, to keep it (sealed) in place of
    ///     `setup`, so that a device cut off afterwards still has the setup the server now has.
    /// - Returns: The signature and the setup it was made over.
    /// - Throws: As ``signECDSA(share:setup:clientId:digest:path:seed:)``; `ecdsaCheckFailed` when the
    ///   attempt over a fresh setup aborts too (the device or the server misbehaves: stop and report).
    public func signECDSA(
        share: ShareRecord, setup: PairSetup?, clientId: String, digest: [UInt8], path: DerivationPath = .root,
        keep: (PairSetup) async throws -> Void = { _ in }
    ) async throws -> (signature: ECDSASignature, setup: PairSetup) {
        var current = setup
        for attempt in 0..<2 {
            if current == nil || current?.isDiscarded == true {
                let fresh = try await makePairSetup(share: share, clientId: clientId)
                try await keep(fresh)
                current = fresh
            }
            guard let used = current else { continue }
            do {
                return (
                    try await signECDSA(share: share, setup: used, clientId: clientId, digest: digest, path: path), used
                )
            } catch let error as ShareRecoveryError where error.code == .pairSetupStale && attempt == 0 {
                current = nil
            } catch let error as ShareRecoveryError where error.code == .ecdsaCheckFailed && attempt == 0 {
                current = nil
            } catch let error as ShareRecoveryError where error.code == .ecdsaCheckFailed {
                throw ShareRecoveryError(
                    .ecdsaCheckFailed,
                    "the ECDSA signature aborted again over a fresh pair setup (\(error.reason)); stop and report this device and the server's request ids",
                    party: error.party)
            }
        }
        throw ShareRecoveryError(.pairSetupStale, "the server refused a fresh ECDSA pair setup as stale")
    }

    /// A request of a signing round; the server's `ecdsaCheckFailed` discarded its setup, so this
    /// side discards its own.
    private func serverRound(_ setup: PairSetup, _ request: () async throws -> HTTPReply) async throws -> HTTPReply {
        do {
            return try await request()
        } catch let error as ShareRecoveryError where error.code == .ecdsaCheckFailed {
            setup.discard()
            throw error
        }
    }

    /// A device round: when its check of the custodian's round `check` fails, the engine has
    /// discarded the setup here, and the server is told to discard its own before the error is thrown.
    private func deviceRound<R>(_ session: String, check: String, _ round: () throws -> R) async throws -> R {
        do {
            return try round()
        } catch let error as ShareRecoveryError where error.code == .ecdsaCheckFailed {
            _ = try? await send(
                session + "/abort", operation: "POST /wallets/ecdsa/signing-sessions/{id}/abort",
                body: JSONBody.encode([("check", .string(check))]))
            throw error
        }
    }

    /// The custodian's index in the device's 2-of-2 set.
    private static func custodianIndex(of share: ShareRecord) throws(ShareRecoveryError) -> Int {
        guard share.curve == .secp256k1, share.kind == .signing, share.parties == 2, share.threshold == 2 else {
            throw ShareRecoveryError(
                .invalidParameters, "ECDSA with the server needs the device's secp256k1 share of a 2-of-2 wallet")
        }
        return share.partyIndex == 1 ? 2 : 1
    }

    private static func binding(_ share: ShareRecord, clientId: String) -> [(key: String, value: JSONValue)] {
        [
            ("clientId", .string(clientId)), ("walletId", .string(share.walletId)), ("setId", .string(share.setId.hex)),
            ("generation", .number(String(share.generation))),
        ]
    }

    private static func base64(_ bytes: [UInt8]) -> JSONValue { .string(Base64.encode(bytes)) }

    private static func message(_ fields: StrictObject, _ key: String, operation: String) throws -> [UInt8] {
        guard let bytes = Base64.decode(try fields.string(key)) else {
            throw ShareRecoveryError(.malformedInput, "\(operation): \(key) is not base64", party: 2)
        }
        return bytes
    }
}

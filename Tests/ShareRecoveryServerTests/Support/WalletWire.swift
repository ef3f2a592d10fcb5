import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

/// The device's side of `/wallets` spelled out request by request through ``TestWorld/send`` (so every
/// answer is checked against the OpenAPI document), with the engine's own roles doing the protocol.
enum WalletWire {
    /// A DKG with the server as party 2; returns the device's share.
    static func createWallet(
        world: TestWorld, userId: String, walletId: String, curve: Curve, token: String, server: Int = 0
    )
        async throws -> ShareRecord
    {
        let parameters = try DKGParameters(curve: curve, walletId: walletId, threshold: 2, parties: 2)
        let party = try DKGParty(parameters: parameters, partyIndex: 1)
        let key = SealingKeyPair()
        let opened = try await world.send(
            .POST, "/wallets/dkg",
            json: .object([
                ("clientId", .string(userId)), ("walletId", .string(walletId)), ("curve", .string(curve.name)),
                ("threshold", .number("2")), ("parties", .number("2")),
                ("round1", ProtocolWire.encode(party.round1Message)),
                ("clientKey", .string(Hex.encode(key.publicKey))),
            ]), headers: world.bearer(token), server: server)
        try #require(opened.status == 201, "\(opened.text)")
        let json = try #require(opened.json)
        let round1 = try #require(json["round1"])
        let broadcast = try ProtocolWire.decodeRound1(round1, sender: 2, curve: curve)
        let (state, outgoing) = try party.receive(round1: [broadcast])
        let sealedText = try #require(opened.string("sealedSubShare"))
        let sealed = try #require(Base64.decode(sealedText))
        let subShare = try Scalar(secure: try SealedBox.open(sealed, with: key), curve: curve)
        let share = try state.finish(round2: [DKGRound2Message(sender: 2, receiver: 1, subShare: subShare)])
        let keyText = try #require(opened.string("custodianKey"))
        let custodianKey = try #require(Hex.decode(keyText))
        let dkgSession = try #require(opened.string("sessionId"))
        let finished = try await world.send(
            .POST, "/wallets/dkg/\(dkgSession)/finish",
            json: .object([
                (
                    "sealedSubShare",
                    .string(Base64.encode(try SealedBox.seal(outgoing[0].subShare.rawRepresentation, to: custodianKey)))
                )
            ]), headers: world.bearer(token), server: server)
        try #require(finished.status == 200, "\(finished.text)")
        #expect(finished.string("publicKey") == share.publicKey.hex)
        return share
    }

    /// One signing session's round 1: the server's commitment and the session id.
    /// - Parameter tweaks: Sent as `path` and `taproot` unless empty; `extra` members are added as they are.
    static func openSigning(
        world: TestWorld, share: ShareRecord, userId: String, mode: SigningMode, token: String, server: Int = 0,
        tweaks: SigningTweaks = .none, extra: [(key: String, value: JSONValue)] = []
    ) async throws -> APIResponse {
        var members: [(key: String, value: JSONValue)] = [
            ("clientId", .string(userId)), ("walletId", .string(share.walletId)), ("mode", .string(mode.rawValue)),
            ("setId", .string(share.setId.hex)),
        ]
        if !tweaks.isEmpty {
            members += [("path", .string(tweaks.path.description)), ("taproot", .bool(tweaks.taproot))]
        }
        return try await world.send(
            .POST, "/wallets/signing-sessions", json: .object(members + extra), headers: world.bearer(token),
            server: server)
    }

    /// A whole signature with the server; returns the signature and the server's answers.
    static func sign(
        world: TestWorld, share: ShareRecord, userId: String, message: [UInt8], mode: SigningMode, token: String,
        server: Int = 0,
        tweaks: SigningTweaks = .none
    ) async throws -> [UInt8] {
        let opened = try await openSigning(
            world: world, share: share, userId: userId, mode: mode, token: token, server: server, tweaks: tweaks)
        try #require(opened.status == 201, "\(opened.text)")
        let json = try #require(opened.json)
        let commitmentValue = try #require(json["commitment"])
        let commitment = try ProtocolWire.decodeCommitment(commitmentValue, party: 2, curve: share.curve)
        let signer = try SigningParty(share: share, mode: mode)
        let nonce = try signer.commit(message: message, tweaks: tweaks)
        let package = try SigningPackage(
            signingSet: share, message: message, mode: mode, commitments: [1: nonce.commitment, 2: commitment],
            tweaks: tweaks)
        let sessionId = try #require(opened.string("sessionId"))
        let signed = try await world.send(
            .POST, "/wallets/signing-sessions/\(sessionId)/sign",
            json: .object([
                ("message", .string(Base64.encode(message))), ("commitment", ProtocolWire.encode(nonce.commitment)),
            ]),
            headers: world.bearer(token), server: server)
        try #require(signed.status == 200, "\(signed.text)")
        let shareValue = try #require(signed.json?["signatureShare"])
        let custodianShare = try ProtocolWire.decodeSignatureShare(shareValue, party: 2, curve: share.curve)
        return try package.aggregate(signatureShares: [
            1: try signer.sign(nonce: nonce, package: package), 2: custodianShare,
        ])
    }
}

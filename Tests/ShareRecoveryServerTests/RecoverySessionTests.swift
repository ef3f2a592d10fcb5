import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// Complete backup and recovery sessions against the server, client side with ShareRecovery directly.
@Suite("Resharing sessions")
struct RecoverySessionTests {
    struct Shape: Sendable, CustomTestStringConvertible {
        let curve: Curve
        let parties: Int
        var testDescription: String { "\(curve) 2-of-\(parties)" }
    }

    static let cases: [(TestBackend, Shape)] =
        TestBackend.allCases.map { ($0, Shape(curve: .secp256k1, parties: 2)) } + [
            (.sqlite, Shape(curve: .ed25519, parties: 3))
        ]

    @Test("backup, lose the device, recover: new signing set current only after confirm", arguments: cases)
    func backupAndRecovery(backend: TestBackend, shape: Shape) async throws {
        try await TestWorld.with(backend, servers: 2) { world in
            let client = SessionClient(world: world, clientId: "client-\(shape.curve)")
            let signing = try KeyGeneration.generate(
                curve: shape.curve, walletId: "w-1", threshold: 2, parties: shape.parties)
            for share in signing.dropFirst() { try await client.register(share, server: 1) }
            let oldSet = signing[0].setId.hex
            #expect(try await client.storedSigningSets() == signing.dropFirst().map { "\($0.partyIndex):\(oldSet):0" })

            // Backup: open on one server, finish on the other, confirm on the first.
            let backupToken = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let backup = try await client.open(
                purpose: "backup", method: .password, ownShare: signing[0], token: backupToken, server: 0)
            #expect(backup.plan.newKind == .backup && backup.plan.newGeneration == 0)
            let finished = try await client.finish(backup, token: backupToken, server: 1)
            #expect(finished.status == 200)
            #expect(finished.json?["newCommitments"] == SessionWire.encode(points: backup.newShare.commitments))
            guard case .array(let shareValues)? = finished.json?["custodianBackupShares"] else {
                Issue.record("no custodianBackupShares")
                return
            }
            #expect(shareValues.count == shape.parties - 1)
            let cipherText = try CipherText.encrypt(
                backup.newShare, method: .password, secret: .text("correct horse"), argon2: .minimum)
            for case .string(let share) in shareValues {
                let delivered = try await world.send(
                    .POST, "/webhook/backup",
                    json: .object([("clientId", .string(client.clientId)), ("backupShare", .string(share))]),
                    headers: world.webhookHeaders)
                #expect(delivered.status == 204)
            }
            let put = try await world.send(
                .PUT, "/users/\(client.clientId)/user-backup-share?backupMethod=PASSWORD",
                json: .object([("cipherText", .string(cipherText.base64))]), headers: world.bearer(backupToken))
            #expect(put.status == 204)
            // The write spent the token for writes, not for the session it belongs to.
            #expect(try await client.confirm(backup.sessionId, token: backupToken, server: 0).status == 204)
            #expect(try await client.storedSigningSets() == signing.dropFirst().map { "\($0.partyIndex):\(oldSet):0" })

            // Recovery on a new device: only the cipherText and the password.
            let recoverToken = try await world.token(for: client.clientId, purpose: "recover", server: 1)
            let fetched = try await world.send(
                .GET, "/users/\(client.clientId)/user-backup-share?backupMethod=PASSWORD",
                headers: world.bearer(recoverToken))
            let userShare = try CipherText(base64: try #require(fetched.string("cipherText"))).decrypt(
                secret: .text("correct horse"))
            let recovery = try await client.open(
                purpose: "recovery", method: .password, ownShare: userShare, token: recoverToken, server: 1)
            #expect(recovery.plan.newKind == .signing && recovery.plan.newGeneration == 1)
            #expect(recovery.newShare.publicKey == signing[0].publicKey)
            #expect(try await client.finish(recovery, token: recoverToken, server: 0).status == 200)

            // Finished but not confirmed: the old signing set is still the custodian's, and the recovery
            // still holds the account (a device may have staged its share).
            #expect(try await client.storedSigningSets() == signing.dropFirst().map { "\($0.partyIndex):\(oldSet):0" })
            let during = try await client.openResponse(
                purpose: "backup", method: .passkey, ownShare: signing[0], token: backupToken)
            #expect(during.status == 409 && during.errorCode == "operationInProgress", "\(during.text)")

            #expect(try await client.confirm(recovery.sessionId, token: recoverToken, server: 1).status == 204)
            let newSet = recovery.newShare.setId.hex
            #expect(try await client.storedSigningSets() == signing.dropFirst().map { "\($0.partyIndex):\(newSet):1" })
            // The lost device's share no longer finds a custodian share; the new one does.
            let refused = try await client.openResponse(
                purpose: "backup", method: .passkey, ownShare: signing[0], token: backupToken)
            #expect(refused.status == 404 && refused.errorCode == "noMatchingShare")
            let fresh = try await client.open(
                purpose: "backup", method: .passkey, ownShare: recovery.newShare, token: backupToken)
            #expect(fresh.plan.newGeneration == 1)
            #expect(try await client.abort(fresh.sessionId, token: backupToken).status == 204)
            // A confirm retried after its answer was lost lands on a confirmed session: 204 again, nothing
            // changes, and the row keeps no secrets. It cannot be finished or aborted any more.
            let confirmedSets = try await client.storedSigningSets()
            #expect(try await client.confirm(recovery.sessionId, token: recoverToken).status == 204)
            #expect(try await client.confirm(recovery.sessionId, token: recoverToken, server: 1).status == 204)
            #expect(try await client.storedSigningSets() == confirmedSets)
            #expect(try await client.finish(recovery, token: recoverToken).status == 409)
            let abortConfirmed = try await client.abort(recovery.sessionId, token: recoverToken)
            #expect(abortConfirmed.status == 409 && abortConfirmed.errorCode == "conflict")
            let inspected = try world.inspector()
            let row = try #require(
                try await inspected.protocolSession(id: recovery.sessionId, kind: .resharing, now: 0))
            await inspected.close()
            #expect(row.state == .done && row.sealedState.isEmpty)

            // The stored custodian shares are valid shares of the new set (opened with the test's master key).
            let storage = try world.inspector()
            let sealer = AtRestSealer(keys: [try DerivedKeys(masterKey: world.masterKey)])
            let clientId = client.clientId
            let rows = try await storage.signingShares(clientId: clientId)
            await storage.close()
            for row in rows {
                let record = try ShareRecord(
                    binary: try sealer.open(
                        row.sealedRecord, table: "signing_shares", row: [clientId, String(row.partyIndex), row.setId]))
                #expect(record.isSameSet(as: recovery.newShare) && record.kind == .signing)
                // The AAD binds the row: the same value does not open as another party's.
                #expect(throws: ShareRecoveryError.self) {
                    try sealer.open(
                        row.sealedRecord, table: "signing_shares",
                        row: [clientId, String(row.partyIndex + 1), row.setId])
                }
            }

            // A device cut off for longer than the session's lifetime still learns that its confirm
            // landed: confirming moved the row's expiry to the retention (30 days), so a late retry is
            // 204 again and changes nothing.
            world.clock.advance(seconds: Int64(ServerConfiguration().sessionLifetimeSeconds) + 60)
            let lateToken = try await world.token(for: client.clientId, purpose: "recover")
            #expect(try await client.confirm(recovery.sessionId, token: lateToken).status == 204)
            #expect(try await client.storedSigningSets() == confirmedSets)
        }
    }

    @Test("abort changes nothing; confirm needs finish; finish happens once", arguments: TestBackend.allCases)
    func sessionStates(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let client = SessionClient(world: world, clientId: "states")
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-2")
            try await client.register(signing[1])
            let token = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let before = try await world.snapshot()

            let session = try await client.open(
                purpose: "backup", method: .password, ownShare: signing[0], token: token)
            #expect(try await client.confirm(session.sessionId, token: token).status == 409)
            #expect(try await client.finish(session, token: token).status == 200)
            #expect(try await client.finish(session, token: token).status == 409)
            #expect(try await client.abort(session.sessionId, token: token).status == 204)
            #expect(try await client.confirm(session.sessionId, token: token).status == 404)
            #expect(try await client.abort(session.sessionId, token: token).status == 404)
            #expect(try await world.snapshot() == before)
        }
    }

    @Test(
        "a dishonest or misaddressed client dealing is refused and the session stays open",
        arguments: TestBackend.allCases)
    func badDealings(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let client = SessionClient(world: world, clientId: "dealer")
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-3")
            try await client.register(signing[1])
            let token = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let session = try await client.open(
                purpose: "backup", method: .password, ownShare: signing[0], token: token)

            // Commitments out of order: the constant term is not λ_1·X_1.
            let forged = Dealing(
                dealerIndex: 1, commitments: session.ownDealing.commitments.reversed(),
                subShares: session.ownDealing.subShares)
            let cases: [(JSONValue, String)] = [
                (try client.outgoing(session, dealing: forged), "dealerCheckFailed"),
                (
                    try client.outgoing(
                        session,
                        dealing: Dealing(
                            dealerIndex: 2, commitments: session.ownDealing.commitments,
                            subShares: session.ownDealing.subShares)), "dealerCheckFailed"
                ),
                (
                    try SessionWire.encode(session.ownDealing, sealingTo: [2: SealingKeyPair().publicKey]),
                    "unsealFailed"
                ),
                (try SessionWire.encode(session.ownDealing, sealingTo: [:]), "subShareCheckFailed"),
                (.object([("dealerIndex", .number("1"))]), "malformedInput"),
                (.string("x"), "malformedInput"),
            ]
            for (dealing, code) in cases {
                let response = try await client.finish(session, token: token, dealing: dealing)
                #expect(response.status == 400 && response.errorCode == code, "\(response.text)")
            }
            #expect(try await client.finish(session, token: token).status == 200)
        }
    }

    /// The server answers the custodian role's codes, as `LocalCustodian` does (ResharingCustodianTests).
    @Test(
        "a backup of a backup share is the caller's mistake; a set the custodian does not hold is noMatchingShare",
        arguments: TestBackend.allCases)
    func refusedBackups(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let client = SessionClient(world: world, clientId: "refused")
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-5")
            try await client.register(signing[1])
            let token = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let backupSet = try Resharing.reshare(
                signing, newThreshold: 2, newParties: 2, newKind: .backup, newGeneration: 0)
            let before = try await world.snapshot()
            let ofBackup = try await client.openResponse(
                purpose: "backup", method: .password, ownShare: backupSet[0], token: token)
            #expect(ofBackup.status == 400 && ofBackup.errorCode == "invalidParameters", "\(ofBackup.text)")
            let otherSet = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-5")
            let unknown = try await client.openResponse(
                purpose: "backup", method: .password, ownShare: otherSet[0], token: token)
            #expect(unknown.status == 404 && unknown.errorCode == "noMatchingShare", "\(unknown.text)")
            #expect(try await world.snapshot() == before)
        }
    }

    @Test(
        "a client may choose its session's id: echoed, refused when malformed or taken",
        arguments: TestBackend.allCases)
    func chosenSessionIds(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let client = SessionClient(world: world, clientId: "chooser")
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-6")
            try await client.register(signing[1])
            let token = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let before = try await world.snapshot()
            for bad: JSONValue in [
                .string("ABCDEF0123456789abcdef0123456789"), .string("abc"), .number("1"),
                .string(String(repeating: "0", count: 33)),
            ] {
                let refused = try await client.openResponse(
                    purpose: "backup", method: .password, ownShare: signing[0], token: token, sessionId: bad)
                #expect(refused.status == 400 && refused.errorCode == "malformedInput", "\(bad): \(refused.text)")
            }
            #expect(try await world.snapshot() == before)
            let id = "00112233445566778899aabbccddeeff"
            let opened = try await client.openResponse(
                purpose: "backup", method: .password, ownShare: signing[0], token: token, sessionId: .string(id))
            #expect(opened.status == 201 && opened.json?["sessionId"] == .string(id), "\(opened.text)")
            #expect(try await client.abort(id, token: token).status == 204)
            // Aborted rows are gone, but a confirmed one stays: its id cannot be reused while it does.
            let again = try await client.open(purpose: "backup", method: .password, ownShare: signing[0], token: token)
            #expect(try await client.finish(again, token: token).status == 200)
            #expect(try await client.confirm(again.sessionId, token: token).status == 204)
            let taken = try await client.openResponse(
                purpose: "backup", method: .password, ownShare: signing[0], token: token,
                sessionId: .string(again.sessionId))
            #expect(taken.status == 409 && taken.errorCode == "conflict", "\(taken.text)")
        }
    }

    @Test(
        "one backup or recovery per account at a time, across servers: a second open is operationInProgress until the first ends",
        arguments: TestBackend.allCases)
    func singleFlightPerAccount(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2) { world in
            let client = SessionClient(world: world, clientId: "racer")
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-4")
            try await client.register(signing[1])
            let backupToken = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let backup = try await client.open(
                purpose: "backup", method: .recoveryCode, ownShare: signing[0], token: backupToken)
            // While the backup runs, neither server admits another session for the account.
            let during = try await client.openResponse(
                purpose: "backup", method: .password, ownShare: signing[0], token: backupToken, server: 1)
            #expect(during.status == 409 && during.errorCode == "operationInProgress", "\(during.text)")
            let finished = try await client.finish(backup, token: backupToken)
            // Finished but not confirmed: a device may have staged, so still in progress.
            let pending = try await client.openResponse(
                purpose: "backup", method: .password, ownShare: signing[0], token: backupToken, server: 0)
            #expect(pending.status == 409 && pending.errorCode == "operationInProgress", "\(pending.text)")
            #expect(try await client.deliverBackupShares(of: finished) == 1)
            #expect(try await client.confirm(backup.sessionId, token: backupToken).status == 204)

            // Confirmed: the account is free. Two recoveries race; the first open wins, the second is refused.
            let token = try await world.token(for: client.clientId, purpose: "recover")
            let first = try await client.open(
                purpose: "recovery", method: .recoveryCode, ownShare: backup.newShare, token: token, server: 0)
            let second = try await client.openResponse(
                purpose: "recovery", method: .recoveryCode, ownShare: backup.newShare, token: token, server: 1)
            #expect(second.status == 409 && second.errorCode == "operationInProgress", "\(second.text)")
            // An abandoned session frees the account at once; an expired one frees it too.
            #expect(try await client.abort(first.sessionId, token: token, server: 1).status == 204)
            let third = try await client.open(
                purpose: "recovery", method: .recoveryCode, ownShare: backup.newShare, token: token, server: 1)
            world.clock.advance(seconds: 3_600)  // past the default 15-minute session lifetime (and the token's)
            let fresh = try await world.token(for: client.clientId, purpose: "recover")
            let fourth = try await client.open(
                purpose: "recovery", method: .recoveryCode, ownShare: backup.newShare, token: fresh, server: 0)
            #expect(
                try await client.finish(third, token: fresh, server: 0).status == 404, "the expired session is gone")
            #expect(try await client.finish(fourth, token: fresh, server: 1).status == 200)
            #expect(try await client.confirm(fourth.sessionId, token: fresh, server: 0).status == 204)
            #expect(try await client.storedSigningSets() == ["2:\(fourth.newShare.setId.hex):1"])
        }
    }

    @Test(
        "a method's cipherText and custodian shares cannot be deleted while a backup or recovery of the account runs",
        arguments: TestBackend.allCases)
    func methodDeletionWaitsForTheAccountsSession(backend: TestBackend) async throws {
        // Seven tokens for one user: more flows than the standard limit allows in one window.
        try await TestWorld.with(backend, servers: 2, configure: WalletSessionTests.unlimitedFlows) { world in
            let client = SessionClient(world: world, clientId: "deleter")
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-5")
            try await client.register(signing[1])
            // A confirmed PASSWORD backup: its cipherText and custodian share stored.
            let add = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let backup = try await client.open(purpose: "backup", method: .password, ownShare: signing[0], token: add)
            #expect(try await client.deliverBackupShares(of: try await client.finish(backup, token: add)) == 1)
            let cipherText = try CipherText.encrypt(
                backup.newShare, method: .password, secret: .text("correct horse"), argon2: .minimum)
            let path = "/users/\(client.clientId)/user-backup-share?backupMethod=PASSWORD"
            let put = try await world.send(
                .PUT, path, json: .object([("cipherText", .string(cipherText.base64))]), headers: world.bearer(add))
            #expect(put.status == 204)
            #expect(try await client.confirm(backup.sessionId, token: add).status == 204)

            func deleteCipherText(_ token: String, server: Int) async throws -> APIResponse {
                try await world.send(.DELETE, path, headers: world.bearer(token), server: server)
            }
            func deleteShares(server: Int) async throws -> APIResponse {
                try await world.send(
                    .POST, "/webhook/backup/delete",
                    json: .object([("clientId", .string(client.clientId)), ("backupMethod", .string("PASSWORD"))]),
                    headers: world.webhookHeaders, server: server)
            }
            func storedShares() async throws -> Int {
                let fetched = try await world.send(
                    .POST, "/webhook/backup/fetch", json: .object([("clientId", .string(client.clientId))]),
                    headers: world.webhookHeaders)
                guard case .array(let shares)? = fetched.json?["backupShares"] else { return -1 }
                return shares.count
            }
            func expectRefused(_ response: APIResponse, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(
                    response.status == 409 && response.errorCode == "operationInProgress", "\(response.text)",
                    sourceLocation: sourceLocation)
            }

            // A recovery runs, open and then finished: neither server deletes anything, and the refused
            // delete leaves its single-use token unspent.
            let recover = try await world.token(for: client.clientId, purpose: "recover")
            let recovery = try await client.open(
                purpose: "recovery", method: .password, ownShare: backup.newShare, token: recover, server: 0)
            let delete = try await world.token(for: client.clientId, purpose: "deleteRecovery")
            expectRefused(try await deleteCipherText(delete, server: 1))
            expectRefused(try await deleteShares(server: 1))
            #expect(try await client.finish(recovery, token: recover).status == 200)
            expectRefused(try await deleteCipherText(delete, server: 0))
            expectRefused(try await deleteShares(server: 0))
            #expect(try await world.send(.GET, path, headers: world.bearer(recover)).status == 200)
            #expect(try await storedShares() == 1)

            // Abandoned, the recovery frees the account (the confirmed backup never held it), and the
            // token the refusals did not spend deletes the cipherText.
            #expect(try await client.abort(recovery.sessionId, token: recover, server: 1).status == 204)
            #expect(try await deleteCipherText(delete, server: 1).status == 204)
            #expect(try await deleteShares(server: 0).status == 204)
            #expect(try await storedShares() == 0)

            // The deletions held nothing: a backup opens at once, and holds the account until it expires.
            let again = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let stored = try await world.send(
                .PUT, path, json: .object([("cipherText", .string(cipherText.base64))]), headers: world.bearer(again))
            #expect(stored.status == 204)
            _ = try await client.open(purpose: "backup", method: .passkey, ownShare: signing[0], token: add)
            expectRefused(
                try await deleteCipherText(
                    try await world.token(for: client.clientId, purpose: "deleteRecovery"), server: 1))
            world.clock.advance(seconds: 3_600)  // past the default 15-minute session lifetime (and the tokens')
            let fresh = try await world.token(for: client.clientId, purpose: "deleteRecovery")
            #expect(try await deleteCipherText(fresh, server: 0).status == 204)
            let methods = try await world.send(
                .GET, "/users/\(client.clientId)/recovery-methods",
                headers: world.bearer(try await world.token(for: client.clientId, purpose: "recover")))
            #expect(methods.json?["methods"] == .array([]))
        }
    }
}

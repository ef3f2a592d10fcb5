import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// The audit trail (docs/server.md, "Audit trail"): every security-relevant action appends exactly its
/// rows, in its own transaction, with its request id and never a secret; the chain shows a deleted,
/// edited or reordered row; the integrator lists an account's rows page by page.
@Suite("Audit trail")
struct AuditTrailTests {
    // MARK: Events of a lifecycle

    @Test(
        "a lifecycle appends exactly its events, each with its request id, and no row or listing holds any of its secrets",
        arguments: TestBackend.allCases)
    func lifecycle(backend: TestBackend) async throws {
        try await TestWorld.with(backend, configure: Self.looseLimits) { world in
            let audit = AuditWatcher(world: world)
            var secrets = [
                SecretForms("master key", secret: world.masterKey),
                SecretForms("webhook secret", bytes: Array(world.webhookSecret.utf8)),
            ]
            var codes: [String] = []
            func token(_ identifier: String, _ purpose: String) async throws -> String {
                let flowId = try await world.createFlow(identifier: identifier, purpose: purpose)
                let code = try #require(world.otp.code(flowId: flowId))
                codes.append(code)
                let verified = try await world.send(
                    .POST, "/recovery/flows/\(flowId)/verify", json: .object([("code", .string(code))]))
                try #require(verified.status == 200)
                let row = try #require(
                    try await audit.appended([.tokenIssued], by: verified, account: identifier).first)
                #expect(
                    row.detail
                        == #"{"flowId":"\#(flowId)","purpose":"\#(purpose)","expiresAt":"\#(try #require(verified.string("expiresAt")))"}"#
                )
                let text = try #require(verified.string("token"))
                secrets.append(SecretForms("\(purpose) token", bytes: Array(text.utf8)))
                return text
            }
            let alice = "alice"
            let client = SessionClient(world: world, clientId: alice)
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-audit")
            for share in signing {
                secrets.append(
                    SecretForms(
                        "signing share \(share.partyIndex)", secret: try #require(share.secret).rawRepresentation))
            }

            // The custodian's share registered (webhook secret).
            let keyText = try #require(try await world.send(.GET, "/custodian/key").string("publicKey"))
            let sealed = try SealedBox.seal(try signing[1].binary(), to: try #require(Hex.decode(keyText)))
            secrets.append(SecretForms("sealed signing share", bytes: sealed))
            let registered = try await world.send(
                .POST, "/custodian/wallets",
                json: .object([("clientId", .string(alice)), ("sealedShare", .string(Base64.encode(sealed)))]),
                headers: world.webhookHeaders)
            try #require(registered.status == 204)
            try await audit.appended([.walletRegistered], by: registered, account: alice)

            // A wrong code, then the right one.
            let flowId = try await world.createFlow(identifier: alice, purpose: "addOrUpdateRecovery")
            let code = try #require(world.otp.code(flowId: flowId))
            codes.append(code)
            let wrong = Self.wrongCode(for: code)
            codes.append(wrong)
            let failed = try await world.send(
                .POST, "/recovery/flows/\(flowId)/verify", json: .object([("code", .string(wrong))]))
            #expect(failed.status == 401 && failed.errorCode == "wrongCode")
            let failedRow = try await audit.appended([.otpFailed], by: failed, account: alice)
            #expect(failedRow.first?.detail == #"{"flowId":"\#(flowId)","remaining":4}"#)
            let verified = try await world.send(
                .POST, "/recovery/flows/\(flowId)/verify", json: .object([("code", .string(code))]))
            try await audit.appended([.tokenIssued], by: verified, account: alice)
            let add = try #require(verified.string("token"))
            secrets.append(SecretForms("add token", bytes: Array(add.utf8)))

            // A backup: open, finish, shares to the integrator, cipherText, confirm (twice).
            let backupOpen = try await client.openResponse(
                purpose: "backup", method: .password, ownShare: signing[0], token: add)
            try #require(backupOpen.status == 201)
            let backup = try client.opened(backupOpen, ownShare: signing[0])
            try await audit.appended([.backupStarted], by: backupOpen, account: alice)
            secrets.append(
                SecretForms("user backup share", secret: try #require(backup.newShare.secret).rawRepresentation))
            let finished = try await client.finish(backup, token: add)
            try await audit.appended([], by: finished, account: alice)
            guard case .array(let shareValues)? = finished.json?["custodianBackupShares"] else {
                Issue.record("no custodianBackupShares")
                return
            }
            for case .string(let share) in shareValues {
                secrets.append(
                    SecretForms(
                        "sealed custodian backup share", bytes: try CustodianBackupShare(json: share).sealedShare))
                let delivered = try await world.send(
                    .POST, "/webhook/backup",
                    json: .object([("clientId", .string(alice)), ("backupShare", .string(share))]),
                    headers: world.webhookHeaders)
                try await audit.appended([.custodianShareStored], by: delivered, account: alice)
            }
            let password = "audit trail password \(backend)"
            secrets.append(SecretForms("password", bytes: Array(password.utf8)))
            let cipherText = try CipherText.encrypt(
                backup.newShare, method: .password, secret: .text(password), argon2: .minimum)
            secrets.append(SecretForms("cipherText", bytes: Array(cipherText.base64.utf8)))
            secrets.append(SecretForms("cipherText bytes", bytes: try #require(Base64.decode(cipherText.base64))))
            let path = "/users/\(alice)/user-backup-share?backupMethod=PASSWORD"
            let put = try await world.send(
                .PUT, path, json: .object([("cipherText", .string(cipherText.base64))]), headers: world.bearer(add))
            #expect(put.status == 204)
            let added = try await audit.appended([.methodAdded], by: put, account: alice)
            #expect(added.first?.detail == #"{"method":"PASSWORD"}"#)
            let confirmed = try await client.confirm(backup.sessionId, token: add)
            #expect(confirmed.status == 204)
            try await audit.appended([.backupCompleted], by: confirmed, account: alice)
            let again = try await client.confirm(backup.sessionId, token: add)
            #expect(again.status == 204)
            try await audit.appended([], by: again, account: alice)

            // The same method again: a rotation.
            let rotate = try await token(alice, "addOrUpdateRecovery")
            let rotated = try await world.send(
                .PUT, path, json: .object([("cipherText", .string(cipherText.base64))]), headers: world.bearer(rotate))
            #expect(rotated.status == 204)
            try await audit.appended([.methodRotated], by: rotated, account: alice)

            // A recovery: the cipherText read, the custodian's shares served to its own webhook, open,
            // finish, confirm.
            let recover = try await token(alice, "recover")
            let read = try await world.send(.GET, path, headers: world.bearer(recover))
            #expect(read.status == 200)
            try await audit.appended([.cipherTextRead], by: read, account: alice)
            // A method without a cipherText: nothing served, nothing recorded.
            let missing = try await world.send(
                .GET, "/users/\(alice)/user-backup-share?backupMethod=\(BackupMethod.passkey.apiName)",
                headers: world.bearer(recover))
            #expect(missing.status == 404)
            try await audit.appended([], by: missing, account: alice)
            let recoveryOpen = try await client.openResponse(
                purpose: "recovery", method: .password, ownShare: backup.newShare, token: recover)
            try #require(recoveryOpen.status == 201)
            let recovery = try client.opened(recoveryOpen, ownShare: backup.newShare)
            let opened = try await audit.appended(
                [.custodianSharesServed, .recoveryStarted], by: recoveryOpen, account: alice)
            #expect(opened.first?.detail == #"{"count":\#(shareValues.count)}"#)
            #expect(opened.last?.detail == #"{"sessionId":"\#(recovery.sessionId)","method":"PASSWORD"}"#)
            try await audit.appended([], by: try await client.finish(recovery, token: recover), account: alice)
            let recovered = try await client.confirm(recovery.sessionId, token: recover)
            #expect(recovered.status == 204)
            let completed = try await audit.appended([.recoveryCompleted], by: recovered, account: alice)
            #expect(
                completed.first?.detail
                    == #"{"sessionId":"\#(recovery.sessionId)","method":"PASSWORD","setId":"\#(recovery.newShare.setId.hex)","generation":1}"#
            )

            // A recovery abandoned, one refused (a share of another wallet), a backup refused (of a backup
            // share) and one abandoned.
            let second = try await client.open(
                purpose: "recovery", method: .password, ownShare: backup.newShare, token: recover)
            _ = try await audit.appended([.custodianSharesServed, .recoveryStarted], account: alice)
            try await audit.appended(
                [.recoveryAborted], by: try await client.abort(second.sessionId, token: recover), account: alice)
            let stranger = try Fixtures.backupSet()[0]
            let refused = try await client.openResponse(
                purpose: "recovery", method: .password, ownShare: stranger, token: recover)
            #expect(refused.status == 404 && refused.errorCode == "noMatchingShare")
            let refusedRows = try await audit.appended(
                [.custodianSharesServed, .recoveryFailed], by: refused, account: alice)
            #expect(
                refusedRows.last?.detail.hasSuffix(#","method":"PASSWORD","step":"open","reason":"noMatchingShare"}"#)
                    == true)
            let badBackup = try await client.openResponse(
                purpose: "backup", method: .passkey, ownShare: backup.newShare, token: add)
            #expect(badBackup.status == 400)
            try await audit.appended([.backupFailed], by: badBackup, account: alice)
            let abandoned = try await client.open(
                purpose: "backup", method: .passkey, ownShare: recovery.newShare, token: add)
            _ = try await audit.appended([.backupStarted], account: alice)
            try await audit.appended(
                [.backupAborted], by: try await client.abort(abandoned.sessionId, token: add), account: alice)

            // The method deleted: its cipherText, then its custodian shares; a direct fetch of none.
            let delete = try await token(alice, "deleteRecovery")
            let deleted = try await world.send(.DELETE, path, headers: world.bearer(delete))
            #expect(deleted.status == 204)
            try await audit.appended([.methodDeleted], by: deleted, account: alice)
            let sharesDeleted = try await world.send(
                .POST, "/webhook/backup/delete",
                json: .object([("clientId", .string(alice)), ("backupMethod", .string("PASSWORD"))]),
                headers: world.webhookHeaders)
            let sharesRow = try await audit.appended([.custodianSharesDeleted], by: sharesDeleted, account: alice)
            #expect(sharesRow.first?.detail == #"{"method":"PASSWORD","count":\#(shareValues.count)}"#)
            let fetched = try await world.send(
                .POST, "/webhook/backup/fetch", json: .object([("clientId", .string(alice))]),
                headers: world.webhookHeaders)
            let served = try await audit.appended([.custodianSharesServed], by: fetched, account: alice)
            #expect(served.first?.detail == #"{"count":0}"#)

            // Five wrong codes end a flow; a sixth attempt changes nothing.
            let doomed = try await world.createFlow(identifier: alice, purpose: "recover")
            let doomedCode = try #require(world.otp.code(flowId: doomed))
            codes.append(doomedCode)
            for attempt in 1...6 {
                let answer = try await world.send(
                    .POST, "/recovery/flows/\(doomed)/verify",
                    json: .object([("code", .string(Self.wrongCode(for: doomedCode)))]))
                let expected: [AuditEventKind] = attempt < 5 ? [.otpFailed] : attempt == 5 ? [.otpExhausted] : []
                #expect(answer.status == (attempt < 5 ? 401 : 410))
                try await audit.appended(expected, by: answer, account: alice)
            }

            // Another user's wallet by DKG, and one signature.
            let sign = try await token("bob", "sign")
            let device = try await WalletWire.createWallet(
                world: world, userId: "bob", walletId: "w-bob", curve: .secp256k1, token: sign)
            secrets.append(SecretForms("device share", secret: try #require(device.secret).rawRepresentation))
            let created = try await audit.appended([.walletCreated], account: "bob")
            #expect(
                created.first?.detail.contains(#""walletId":"w-bob","setId":"\#(device.setId.hex)","generation":0"#)
                    == true)
            _ = try await WalletWire.sign(
                world: world, share: device, userId: "bob", message: Array("pay 1".utf8), mode: .bip340, token: sign)
            let released = try await audit.appended([.signatureShareReleased], account: "bob")
            #expect(
                released.first?.detail.hasSuffix(#""walletId":"w-bob","setId":"\#(device.setId.hex)","mode":"bip340"}"#)
                    == true)
            // ECDSA with the custodian: a pair setup, a signature, and one aborted by a tampered round.
            let ecdsa = HTTPWalletClient(baseURL: world.servers[0].baseURL(), tokenProvider: { _ in sign })
            let setup = try await ecdsa.makePairSetup(share: device, clientId: "bob")
            let made = try await audit.appended([.ecdsaPairSetupMade], account: "bob")
            #expect(
                made.first?.detail.hasSuffix(#""walletId":"w-bob","setId":"\#(device.setId.hex)","generation":0}"#)
                    == true)
            let digest = Keccak256.hash(Array("pay 2".utf8))
            _ = try await ecdsa.signECDSA(share: device, setup: setup, clientId: "bob", digest: digest)
            try await audit.appended([.ecdsaSigned], account: "bob")
            let tampered = try await ECDSAWire.sign(
                world: world, share: device, setup: setup, userId: "bob", token: sign, digest: digest,
                tamperRound2: true)
            let abortRows = try await audit.appended([.ecdsaAborted], by: tampered.last, account: "bob")
            #expect(abortRows.first?.detail.hasSuffix(#""check":"round2","culprit":1}"#) == true)
            // A second device of bob's wallet, added and removed (docs/devices.md).
            let addDevice = try await token("bob", "addDevice")
            let phone = try await DeviceWire.add(
                world: world, approver: device, userId: "bob", deviceId: "phone", token: addDevice)
            secrets.append(SecretForms("added device share", secret: try #require(phone.secret).rawRepresentation))
            let deviceAdded = try await audit.appended([.deviceAdded], account: "bob")
            #expect(
                deviceAdded.first?.detail.contains(
                    #""walletId":"w-bob","setId":"\#(phone.setId.hex)","generation":0,"deviceId":"phone""#) == true,
                "\(deviceAdded)")
            let removal = try await DeviceWire.remove(
                world: world, deviceId: "phone", token: try await token("bob", "removeDevice"))
            #expect(removal.status == 204)
            let removed = try await audit.appended([.deviceRemoved], by: removal, account: "bob")
            #expect(removed.first?.detail == #"{"deviceId":"phone"}"#)

            // Refreshes of bob's wallet (docs/formats.md §3): one abandoned, one refused (the removed
            // device's set), one confirmed into generation 1.
            let refreshes = SessionClient(world: world, clientId: "bob")
            let dropped = try await refreshes.open(purpose: "refresh", method: nil, ownShare: device, token: sign)
            _ = try await audit.appended([.refreshStarted], account: "bob")
            try await audit.appended(
                [.refreshAborted], by: try await refreshes.abort(dropped.sessionId, token: sign), account: "bob")
            let refusedRefresh = try await refreshes.openResponse(
                purpose: "refresh", method: nil, ownShare: phone, token: sign)
            #expect(refusedRefresh.status == 404 && refusedRefresh.errorCode == "noMatchingShare")
            try await audit.appended([.refreshFailed], by: refusedRefresh, account: "bob")
            let refresh = try await refreshes.open(purpose: "refresh", method: nil, ownShare: device, token: sign)
            _ = try await audit.appended([.refreshStarted], account: "bob")
            secrets.append(
                SecretForms("refreshed device share", secret: try #require(refresh.newShare.secret).rawRepresentation))
            try await audit.appended([], by: try await refreshes.finish(refresh, token: sign), account: "bob")
            let refreshed = try await audit.appended(
                [.refreshCompleted], by: try await refreshes.confirm(refresh.sessionId, token: sign), account: "bob")
            #expect(
                refreshed.first?.detail
                    == #"{"sessionId":"\#(refresh.sessionId)","setId":"\#(refresh.newShare.setId.hex)","generation":1}"#
            )

            // Last, its eject (no device joins an ejected wallet): the custodian's share released once, for a token of purpose eject.
            let eject = try await token("bob", "eject")
            let ejected = try await WalletWire.eject(
                world: world, share: refresh.newShare, userId: "bob", token: eject)
            #expect(ejected.status == 200)
            let ejectedRows = try await audit.appended([.walletEjected], by: ejected, account: "bob")
            #expect(
                ejectedRows.first?.detail
                    == #"{"walletId":"w-bob","setId":"\#(refresh.newShare.setId.hex)","generation":1}"#)

            // Every kind was exercised; the chain is intact; the listing shows alice's rows and only hers.
            let rows = try await world.auditRows()
            #expect(Set(rows.map(\.event)) == Set(AuditEventKind.allCases.map(\.rawValue)))
            #expect(rows.count == audit.seen)
            let storage = try world.inspector()
            let verification = try await AuditTrail.verify(storage)
            await storage.close()
            #expect(
                verification.count == Int64(rows.count) && verification.chains == Set(rows.map(\.account)).count)
            let listing = try await world.send(
                .GET, "/users/\(alice)/audit-events?limit=200", headers: world.webhookHeaders)
            #expect(listing.status == 200)
            guard case .array(let events)? = listing.json?["events"] else {
                Issue.record("no events: \(listing.text)")
                return
            }
            let aliceRows = rows.filter { $0.account == alice }
            #expect(events.map { $0["sequence"] } == aliceRows.map { .number(String($0.sequence)) })
            #expect(events.map { $0["event"] } == aliceRows.map { .string($0.event) })
            #expect(events.map { $0["hash"] } == aliceRows.map { .string(Hex.encode($0.hash)) })

            // No secret in any column of any row, nor in the listing.
            let stored = rows.map { row in
                [
                    String(row.sequence), String(row.at), row.account, row.event, row.requestId, row.detail,
                    Hex.encode(row.previousHash), Hex.encode(row.hash), Base64.encode(row.previousHash),
                    Base64.encode(row.hash),
                ].joined(separator: " ")
            }
            #expect(secrets.count > 15)
            for text in stored + [listing.text] {
                #expect(SecretForms.leaks(of: secrets, in: text).isEmpty, "\(text)")
                for code in codes {
                    #expect(!Self.containsNumber(code, in: text), "a one-time code in \(text)")
                }
            }
            // The search finds a secret where one is.
            #expect(!SecretForms.leaks(of: secrets, in: "x \(add) y").isEmpty)
            #expect(Self.containsNumber(codes[0], in: "\"code\":\"\(codes[0])\""))
        }
    }

    // MARK: Rollback

    @Test(
        "a change that rolls back leaves no success row; its failure is recorded after the rollback",
        arguments: TestBackend.allCases)
    func rollback(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            // In storage: a transaction that appended and then failed left nothing.
            let storage = try world.inspector()
            try await storage.recordAudit(AuditEvent(.methodAdded, account: "r", requestId: "before", at: 1))
            await #expect(throws: RollbackFailure.self) {
                try await Self.appendThenFail(
                    storage, AuditEvent(.methodRotated, account: "r", requestId: "rolled-back", at: 2))
            }
            try await storage.recordAudit(AuditEvent(.methodDeleted, account: "r", requestId: "after", at: 3))
            #expect(try await storage.auditChain(after: 0, limit: 10).map(\.requestId) == ["before", "after"])
            #expect(try await AuditTrail.verify(storage).count == 2)
            await storage.close()

            // Over HTTP: a recovery whose signing set moved before its confirm is refused (409); the
            // confirm's transaction rolls back with no recoveryCompleted, and recoveryFailed follows it.
            let audit = AuditWatcher(world: world)
            try await audit.skip()
            let client = SessionClient(world: world, clientId: "moved")
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-moved")
            try await client.register(signing[1])
            let add = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let backup = try await client.open(purpose: "backup", method: .password, ownShare: signing[0], token: add)
            guard case .array(let shares)? = try await client.finish(backup, token: add).json?["custodianBackupShares"]
            else {
                Issue.record("no custodian shares")
                return
            }
            for case .string(let share) in shares {
                try await world.send(
                    .POST, "/webhook/backup",
                    json: .object([("clientId", .string(client.clientId)), ("backupShare", .string(share))]),
                    headers: world.webhookHeaders)
            }
            #expect(try await client.confirm(backup.sessionId, token: add).status == 204)
            let recover = try await world.token(for: client.clientId, purpose: "recover")
            let recovery = try await client.open(
                purpose: "recovery", method: .password, ownShare: backup.newShare, token: recover)
            #expect(try await client.finish(recovery, token: recover).status == 200)
            let other = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-moved")
            try await client.register(other[1])
            let setsBefore = try await client.storedSigningSets()
            try await audit.skip()
            let refused = try await client.confirm(recovery.sessionId, token: recover)
            #expect(refused.status == 409)
            let rows = try await audit.appended([.recoveryFailed], by: refused, account: client.clientId)
            #expect(
                rows.first?.detail
                    == #"{"sessionId":"\#(recovery.sessionId)","method":"PASSWORD","step":"confirm","reason":"conflict"}"#
            )
            #expect(try await client.storedSigningSets() == setsBefore)
            #expect(try await world.auditRows().filter { $0.event == "recoveryCompleted" }.isEmpty)

            // A spent token writes nothing, so records nothing.
            let path = "/users/moved/user-backup-share?backupMethod=PASSWORD"
            let text = try CipherText.encrypt(backup.newShare, method: .password, secret: .text("pw"), argon2: .minimum)
                .base64
            #expect(
                try await world.send(
                    .PUT, path, json: .object([("cipherText", .string(text))]), headers: world.bearer(add)
                ).status == 204)
            _ = try await audit.appended([.methodAdded], account: "moved")
            let spent = try await world.send(
                .PUT, path, json: .object([("cipherText", .string(text))]), headers: world.bearer(add))
            #expect(spent.status == 401)
            try await audit.appended([], by: spent, account: "moved")
        }
    }

    /// Opens the existential for the static append.
    static func appendThenFail<Storage: ServerStorage>(_ storage: Storage, _ event: AuditEvent) async throws {
        try await storage.transaction { transaction in
            try await Storage.appendAudit([event], in: transaction)
            throw RollbackFailure()
        }
    }

    struct RollbackFailure: Error {}

    // MARK: Tampering

    /// A change made to the stored rows, and what verification must then say.
    struct Tampering: Sendable, CustomTestStringConvertible {
        let name: String
        let statements: [String]
        /// `nil`: the trail still verifies (without an external anchor).
        let expected: (AuditChainError.Code, AuditChainName, Int64)?
        var testDescription: String { name }
    }

    /// Against ``withChain(_:_:)``: account `odd` holds rows 1, 3, 5, 7 (positions 1…4), `even` rows
    /// 2, 4, 6, 8; anchor 1 names positions 2, anchor 2 positions 3; positions 4 are unanchored.
    static let tamperings: [Tampering] = [
        Tampering(
            name: "a middle row of one account deleted", statements: ["DELETE FROM audit_events WHERE seq = 3"],
            expected: (.rowsMissing, .account("odd"), 2)),
        Tampering(
            name: "an account's first row deleted", statements: ["DELETE FROM audit_events WHERE seq = 1"],
            expected: (.rowsMissing, .account("odd"), 1)),
        Tampering(
            name: "a row's time edited", statements: ["UPDATE audit_events SET at = at + 1 WHERE seq = 2"],
            expected: (.rowEdited, .account("even"), 1)),
        Tampering(
            name: "a row's detail edited", statements: ["UPDATE audit_events SET detail = '{}' WHERE seq = 5"],
            expected: (.rowEdited, .account("odd"), 3)),
        Tampering(
            name: "a row moved to another account",
            statements: ["UPDATE audit_events SET account = 'even', chain_position = 5 WHERE seq = 7"],
            expected: (.rowEdited, .account("even"), 5)),
        Tampering(
            name: "two rows of one account swapped",
            statements: [
                "UPDATE audit_events SET chain_position = 100 WHERE seq = 3",
                "UPDATE audit_events SET chain_position = 2 WHERE seq = 5",
                "UPDATE audit_events SET chain_position = 3 WHERE seq = 3",
            ], expected: (.rowsReordered, .account("odd"), 2)),
        Tampering(
            name: "a row deleted and the account's later rows renumbered",
            statements: [
                "DELETE FROM audit_events WHERE seq = 3", "UPDATE audit_events SET chain_position = 2 WHERE seq = 5",
                "UPDATE audit_events SET chain_position = 3 WHERE seq = 7",
                "UPDATE audit_chain_heads SET chain_position = 3 WHERE account = 'odd'",
            ], expected: (.brokenLink, .account("odd"), 2)),
        Tampering(
            name: "an account's unanchored newest row deleted", statements: ["DELETE FROM audit_events WHERE seq = 7"],
            expected: (.headMismatch, .account("odd"), 4)),
        Tampering(
            name: "an account's anchored newest rows deleted, its head record rewound",
            statements: [
                "DELETE FROM audit_events WHERE seq IN (5, 7)",
                "UPDATE audit_chain_heads SET chain_position = 2, hash = (SELECT hash FROM audit_events WHERE seq = 3) WHERE account = 'odd'",
            ], expected: (.anchorMismatch, .account("odd"), 3)),
        Tampering(
            name: "an account's whole chain deleted",
            statements: [
                "DELETE FROM audit_events WHERE account = 'even'",
                "DELETE FROM audit_chain_heads WHERE account = 'even'",
            ], expected: (.anchorMismatch, .account("even"), 3)),
        Tampering(
            name: "an anchor edited", statements: ["UPDATE audit_anchors SET at = at + 1 WHERE seq = 1"],
            expected: (.rowEdited, .anchors, 1)),
        Tampering(
            name: "the first anchor deleted", statements: ["DELETE FROM audit_anchors WHERE seq = 1"],
            expected: (.rowsMissing, .anchors, 1)),
        Tampering(
            name: "two anchors swapped",
            statements: [
                "UPDATE audit_anchors SET seq = 100 WHERE seq = 1", "UPDATE audit_anchors SET seq = 1 WHERE seq = 2",
                "UPDATE audit_anchors SET seq = 2 WHERE seq = 100",
            ], expected: (.rowsReordered, .anchors, 1)),
        // The documented blind spot between anchors: the row and its head record together.
        Tampering(
            name: "an unanchored newest row deleted with its head record rewound",
            statements: [
                "DELETE FROM audit_events WHERE seq = 7",
                "UPDATE audit_chain_heads SET chain_position = 3, hash = (SELECT hash FROM audit_events WHERE seq = 5) WHERE account = 'odd'",
            ], expected: nil),
        Tampering(
            name: "the newest anchor deleted", statements: ["DELETE FROM audit_anchors WHERE seq = 2"],
            expected: (.headMismatch, .anchors, 2)),
        // Caught by the operator's copy of the newest anchor only.
        Tampering(
            name: "the newest anchor deleted, the anchors' head rewound",
            statements: [
                "DELETE FROM audit_anchors WHERE seq = 2",
                "UPDATE audit_anchor_head SET seq = 1, hash = (SELECT hash FROM audit_anchors WHERE seq = 1)",
            ], expected: nil),
    ]

    @Test(
        "deleting, editing or reordering a row or an anchor makes verification fail naming it",
        arguments: TestBackend.allCases, tamperings)
    func tampering(backend: TestBackend, tampering: Tampering) async throws {
        try await Self.withChain(backend) { storage, anchor in
            try await storage.transaction { transaction in
                for statement in tampering.statements { try await transaction.query(statement, []) }
            }
            guard let (code, chain, sequence) = tampering.expected else {
                let verified = try await AuditTrail.verify(storage)
                #expect(verified.count == (verified.anchors == 2 ? 7 : 8) && verified.chains == 2)
                if verified.anchors == 2 {
                    // The row went with its head record, after the newest anchor: nothing shows it.
                    #expect(verified.unanchored == 1 && verified.head == anchor)
                    return
                }
                // The operator kept the newest anchor before the change.
                let error = await #expect(throws: AuditChainError.self) {
                    try await AuditTrail.verify(storage, anchors: [anchor])
                }
                #expect(error?.code == .anchorMismatch && error?.chain == .anchors && error?.sequence == 2)
                #expect(error?.reason.contains("anchor 2") == true, "\(String(describing: error))")
                return
            }
            let error = await #expect(throws: AuditChainError.self) { try await AuditTrail.verify(storage) }
            #expect(
                error?.code == code && error?.chain == chain && error?.sequence == sequence,
                "\(String(describing: error))")
            #expect(error?.reason.contains(chain.row(sequence)) == true, "\(String(describing: error))")
        }
    }

    @Test(
        "an append after an account's newest row was deleted links to the deleted row, so the gap shows",
        arguments: TestBackend.allCases)
    func appendAfterDeletedHead(backend: TestBackend) async throws {
        try await Self.withChain(backend) { storage, _ in
            let deleted = try #require(try await storage.auditChain(after: 6, limit: 1).first)
            _ = try await storage.transaction { transaction in
                try await transaction.query("DELETE FROM audit_events WHERE seq = 7", [])
            }
            try await storage.recordAudit(
                AuditEvent(.custodianSharesServed, account: "odd", requestId: "r9", at: 2_000))
            let error = await #expect(throws: AuditChainError.self) { try await AuditTrail.verify(storage) }
            #expect(
                error?.code == .rowsMissing && error?.chain == .account("odd") && error?.sequence == 4,
                "\(String(describing: error))")
            let appended = try await storage.auditChain(after: 8, limit: 10)
            #expect(appended.map(\.position) == [5] && appended.first?.previousHash == deleted.hash)
        }
    }

    @Test(
        "an intact trail verifies, with or without the operator's anchors; a rewritten chain fails its anchor",
        arguments: TestBackend.allCases)
    func anchors(backend: TestBackend) async throws {
        try await Self.withChain(backend) { storage, anchor in
            let intact = try await AuditTrail.verify(storage)
            #expect(intact.count == 8 && intact.chains == 2 && intact.anchors == 2 && intact.unanchored == 2)
            #expect(intact.head == anchor && AuditAnchor(anchor.text) == anchor && anchor.text.hasPrefix("anchor:2:"))
            let first = try #require(try await storage.auditAnchors(after: 0, limit: 1).first)
            let anchors = [AuditAnchor(chain: .anchors, sequence: 1, hash: first.hash), anchor]
            #expect(try await AuditTrail.verify(storage, anchors: anchors).count == 8)
            // odd's position 2 edited and every later row re-chained, its head record too: consistent,
            // but not what the anchors named.
            let odd = try await storage.auditChain(after: 0, limit: 100).filter { $0.account == "odd" }
            var previous = odd[0].hash
            for row in odd[1...] {
                let requestId = row.position == 2 ? "forged" : row.requestId
                let hash = AuditChain.hash(
                    previous: previous, at: row.at, account: row.account, event: row.event, requestId: requestId,
                    detail: row.detail)
                let link = previous
                _ = try await storage.transaction { transaction in
                    try await transaction.query(
                        "UPDATE audit_events SET request_id = ?, previous_hash = ?, hash = ? WHERE seq = ?",
                        [.text(requestId), .blob(link), .blob(hash), .integer(row.sequence)])
                    try await transaction.query(
                        "UPDATE audit_chain_heads SET hash = ? WHERE account = 'odd'", [.blob(hash)])
                }
                previous = hash
            }
            let rewritten = await #expect(throws: AuditChainError.self) { try await AuditTrail.verify(storage) }
            // Named at the newest anchored row, 3: the rewrite began there or earlier.
            #expect(
                rewritten?.code == .anchorMismatch && rewritten?.chain == .account("odd") && rewritten?.sequence == 3)
            // And the anchors deleted too: only the operator's anchor shows it.
            _ = try await storage.transaction { transaction in
                try await transaction.query("DELETE FROM audit_anchors", [])
                try await transaction.query("DELETE FROM audit_anchored", [])
                try await transaction.query("UPDATE audit_anchor_head SET seq = 0", [])
            }
            #expect(try await AuditTrail.verify(storage).anchors == 0)
            let error = await #expect(throws: AuditChainError.self) {
                try await AuditTrail.verify(storage, anchors: [anchor])
            }
            #expect(error?.code == .anchorMismatch && error?.chain == .anchors && error?.sequence == 2)
        }
    }

    @Test(
        "the per-account chains' migration keeps the rows of the single chain verifying, and the first anchor names its newest row",
        arguments: TestBackend.allCases)
    func migrationKeepsSingleChain(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            // The database as the previous release left it: the per-account chains' migration undone,
            // rows in one chain.
            let version = Int64(try #require(Migrations.all.firstIndex(of: Migrations.auditChains)) + 1)
            try await storage.transaction { transaction in
                try await Self.undoAuditChains(in: transaction, version: version)
                var previous = AuditChain.genesis
                for sequence in Int64(1)...3 {
                    let hash = AuditChain.hash(
                        previous: previous, at: 500 + sequence, account: "old", event: "methodAdded",
                        requestId: "o\(sequence)", detail: "{}")
                    try await transaction.query(
                        """
                        INSERT INTO audit_events (seq, at, account, event, request_id, detail, previous_hash, hash)
                        VALUES (?, ?, 'old', 'methodAdded', ?, '{}', ?, ?)
                        """,
                        [
                            .integer(sequence), .integer(500 + sequence), .text("o\(sequence)"), .blob(previous),
                            .blob(hash),
                        ])
                    previous = hash
                }
            }
            #expect(try await AuditTrail.verify(storage).count == 3)
            try await storage.migrate()
            for account in ["old", "new"] {
                try await storage.recordAudit(AuditEvent(.methodRotated, account: account, requestId: "n", at: 600))
            }
            let rows = try await storage.auditChain(after: 0, limit: 10)
            #expect(rows.map(\.position) == [nil, nil, nil, 1, 1] && rows.map(\.sequence) == [1, 2, 3, 4, 5])
            #expect(try await storage.writeAuditAnchor(at: 700))
            #expect(try await !storage.writeAuditAnchor(at: 701))
            let verified = try await AuditTrail.verify(storage)
            #expect(verified.count == 5 && verified.chains == 2 && verified.anchors == 1 && verified.unanchored == 0)
            // The single chain's newest row is anchored: deleting it now shows.
            _ = try await storage.transaction { transaction in
                try await transaction.query("DELETE FROM audit_events WHERE seq = 3", [])
            }
            let error = await #expect(throws: AuditChainError.self) { try await AuditTrail.verify(storage) }
            #expect(error?.code == .anchorMismatch && error?.chain == .legacy && error?.sequence == 3)
        }
    }

    @Test("the hashes: rows over the previous hash and length-prefixed fields, anchors likewise over their heads")
    func hashEncoding() {
        // Built here byte by byte from docs/server.md's description, not with the encoder under test.
        var expected = Array("SRAU".utf8) + [1, 0, 0, 0, 0, 0x69, 0x2A, 0x5B, 0x80]
        for field in ["alice", "tokenIssued", "req-1", "{}"] {
            expected += [0, 0, 0, UInt8(field.utf8.count)] + Array(field.utf8)
        }
        let previous = [UInt8](repeating: 0xAB, count: 32)
        #expect(
            AuditChain.encoding(
                at: 0x692A_5B80, account: "alice", event: "tokenIssued", requestId: "req-1", detail: "{}") == expected)
        #expect(
            AuditChain.hash(
                previous: previous, at: 0x692A_5B80, account: "alice", event: "tokenIssued", requestId: "req-1",
                detail: "{}")
                == SHA256.hash(previous + expected))
        // Moving a byte from one field to the next changes the encoding.
        #expect(
            AuditChain.encoding(at: 1, account: "ab", event: "c", requestId: "", detail: "")
                != AuditChain.encoding(at: 1, account: "a", event: "bc", requestId: "", detail: ""))
        let heads = #"{"chains":[{"account":"a","position":1,"hash":"\#(String(repeating: "ab", count: 32))"}]}"#
        let anchorEncoding =
            Array("SRAN".utf8) + [1, 0, 0, 0, 0, 0, 0, 0, 7] + [0, 0, 0, UInt8(heads.utf8.count)] + Array(heads.utf8)
        #expect(
            AuditAnchorRecord.hash(previous: previous, at: 7, heads: heads) == SHA256.hash(previous + anchorEncoding))
        #expect(
            AuditAnchorRecord(text: heads)
                == AuditAnchorRecord(legacy: nil, chains: [.init(account: "a", position: 1, hash: previous)]))
        #expect(AuditAnchorRecord(text: heads)?.text == heads)
        #expect(
            AuditAnchor("6:" + String(repeating: "ab", count: 32))
                == AuditAnchor(sequence: 6, hash: [UInt8](repeating: 0xAB, count: 32)))
        #expect(
            AuditAnchor("anchor:6:" + String(repeating: "ab", count: 32))
                == AuditAnchor(chain: .anchors, sequence: 6, hash: [UInt8](repeating: 0xAB, count: 32)))
        for bad in [
            "6", "0:" + String(repeating: "a", count: 64), "6:" + String(repeating: "a", count: 63), "x:y",
            "6:" + String(repeating: "g", count: 64), "anchors:6:" + String(repeating: "a", count: 64),
            "anchor:0:" + String(repeating: "a", count: 64),
        ] {
            #expect(AuditAnchor(bad) == nil, "\(bad)")
        }
    }

    // MARK: Concurrency

    @Test(
        "concurrent appends on two servers keep every account's chain, on PostgreSQL in fewer commits than rows",
        arguments: TestBackend.allCases)
    func concurrentAppends(backend: TestBackend) async throws {
        let (tasks, requests) = backend == .postgres ? (48, 8) : (12, 5)
        try await TestWorld.with(backend, servers: 2) { world in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<tasks {
                    group.addTask {
                        for request in 0..<requests {
                            let answer = try await world.send(
                                .POST, "/webhook/backup/fetch",
                                json: .object([("clientId", .string("c\(task % 6)"))]),
                                headers: world.webhookHeaders + [("X-Request-Id", "t\(task)-r\(request)")],
                                server: task + request)
                            #expect(answer.status == 200)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let rows = try await world.auditRows()
            #expect(Set(rows.map(\.sequence)).count == tasks * requests)
            #expect(Set(rows.map(\.requestId)).count == tasks * requests)
            for account in 0..<6 {
                let chain = rows.filter { $0.account == "c\(account)" }
                #expect(chain.map(\.position) == (1...Int64(chain.count)).map { $0 })
            }
            let storage = try world.inspector()
            let verified = try await AuditTrail.verify(storage)
            #expect(verified.count == Int64(tasks * requests) && verified.chains == 6)
            if backend == .postgres {
                // The served shares' rows were joined (AuditBatches): fewer commits than rows.
                let commits = try await storage.read { transaction in
                    try await transaction.query("SELECT COUNT(DISTINCT xmin::text) AS commits FROM audit_events").first?
                        .integer("commits")
                }
                #expect(try #require(commits) < Int64(tasks * requests))
            }
            await storage.close()
        }
    }

    /// Signals between a test and a transaction it holds open.
    final class Gate: Sendable {
        private let stream: AsyncStream<Void>
        private let continuation: AsyncStream<Void>.Continuation

        init() { (stream, continuation) = AsyncStream.makeStream() }
        func open() { continuation.yield() }
        func wait() async { for await _ in stream { return } }
    }

    @Test(
        "an account's append holding its head does not hold another account's append; it holds its own account's",
        arguments: TestBackend.allCases)
    func appendsOfTwoAccountsDoNotSerialise(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            guard storage.dialect == .postgres else {
                // SQLite has one writer, so every transaction serialises anyway; what holds is that no
                // shared row moves: one head record per account, the single head untouched.
                let before = try await storage.read { try await $0.query("SELECT hash FROM audit_head", []) }
                for account in ["a", "b", "a"] {
                    try await storage.recordAudit(AuditEvent(.methodAdded, account: account, requestId: "x", at: 1))
                }
                let heads = try await storage.auditChainHeads()
                #expect(heads.mapValues(\.sequence) == ["a": 2, "b": 1])
                let after = try await storage.read { try await $0.query("SELECT hash FROM audit_head", []) }
                #expect(try before.map { try $0.blob("hash") } == after.map { try $0.blob("hash") })
                return
            }
            let holding = Gate()
            let release = Gate()
            // Account a's append, its head moved and locked (the deferred trigger fired now), kept open.
            let held = Task { try await Self.holdAppend(storage, holding: holding, release: release) }
            await holding.wait()
            // Account b's append completes meanwhile (within 10 s, or the test fails and lets a go).
            let other = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await storage.recordAudit(AuditEvent(.methodAdded, account: "b", requestId: "free", at: 2))
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(10))
                    return false
                }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
            #expect(other, "account b's append waited for account a's")
            // Account a's second append waits for the first.
            let finished = Locked(false)
            let same = Task {
                try await storage.recordAudit(AuditEvent(.methodAdded, account: "a", requestId: "queued", at: 3))
                finished.withLock { $0 = true }
            }
            try await Task.sleep(for: .milliseconds(500))
            #expect(!finished.withLock { $0 }, "account a's appends did not queue on its head")
            release.open()
            try await held.value
            try await same.value
            let rows = try await storage.auditChain(after: 0, limit: 10)
            #expect(rows.filter { $0.account == "a" }.map(\.requestId) == ["held", "queued"])
            #expect(try await AuditTrail.verify(storage).count == 3)
        }
    }

    /// Appends a row of account `a` in a transaction that moves the head at once (the deferred
    /// trigger fired), opens `holding`, and commits only once `release` opens.
    static func holdAppend<Storage: ServerStorage>(_ storage: Storage, holding: Gate, release: Gate) async throws {
        try await storage.transaction { transaction in
            try await Storage.appendAudit(
                [AuditEvent(.methodAdded, account: "a", requestId: "held", at: 1)], in: transaction)
            try await transaction.query("SET CONSTRAINTS ALL IMMEDIATE", [])
            holding.open()
            await release.wait()
        }
    }

    // MARK: The listing

    @Test(
        "the listing: the webhook secret, one account, opaque cursors, bounded pages", arguments: TestBackend.allCases)
    func listing(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            for (account, count) in [("a", 5), ("b", 3)] {
                for _ in 0..<count {
                    try await world.send(
                        .POST, "/webhook/backup/fetch", json: .object([("clientId", .string(account))]),
                        headers: world.webhookHeaders)
                }
            }
            let rows = try await world.auditRows().filter { $0.account == "a" }
            var cursor: String?
            var listed: [JSONValue] = []
            var pages = 0
            repeat {
                let page = try await world.send(
                    .GET, "/users/a/audit-events?limit=2" + (cursor.map { "&after=\($0)" } ?? ""),
                    headers: world.webhookHeaders)
                #expect(page.status == 200)
                guard case .array(let events)? = page.json?["events"] else { break }
                listed += events
                cursor = page.string("nextCursor")
                pages += 1
            } while cursor != nil && pages < 10
            #expect(pages == 3)
            #expect(listed.map { $0["sequence"] } == rows.map { .number(String($0.sequence)) })
            #expect(
                listed.allSatisfy {
                    $0["event"] == .string("custodianSharesServed")
                        && $0["detail"] == .object([("count", .number("0"))])
                })
            let all = try await world.send(.GET, "/users/a/audit-events", headers: world.webhookHeaders)
            #expect(
                all.json?["events"].map { if case .array(let e) = $0 { e.count } else { 0 } } == 5
                    && all.string("nextCursor") == nil)
            let nobody = try await world.send(.GET, "/users/nobody/audit-events", headers: world.webhookHeaders)
            #expect(nobody.json == .object([("events", .array([]))]))

            let token = try await world.token(for: "a", purpose: "recover")
            for headers in [[], [("X-Webhook-Secret", "wrong")], world.bearer(token)] {
                let refused = try await world.send(.GET, "/users/a/audit-events", headers: headers)
                #expect(refused.status == 401 && refused.errorCode == "unauthorized", "\(headers)")
            }
            for query in [
                "after=xyz", "after=000000000000000G", "after=00000000000000001",
                "after=0000000000000001&after=0000000000000002",
                "limit=0", "limit=201", "limit=abc", "limit=01", "limit=-1", "limit=1&limit=2",
            ] {
                let refused = try await world.send(
                    .GET, "/users/a/audit-events?\(query)", headers: world.webhookHeaders)
                #expect(refused.status == 400 && refused.errorCode == "malformedInput", "\(query): \(refused.text)")
            }
            #expect(
                try await world.send(.GET, "/users/a/audit-events?limit=200", headers: world.webhookHeaders).status
                    == 200)
            #expect(try await world.send(.GET, "/users/%00/audit-events", headers: world.webhookHeaders).status == 400)
        }
    }

    // MARK: Request ids

    @Test("every response carries X-Request-Id: the client's when well formed, else a fresh one; rows store it")
    func requestIds() async throws {
        try await TestWorld.with(.sqlite) { world in
            func id(_ response: APIResponse) -> String? {
                response.headers.first { $0.0.lowercased() == "x-request-id" }?.1
            }
            let first = try await world.send(.GET, "/health")
            let second = try await world.send(.GET, "/health")
            let fresh = try #require(id(first))
            #expect(fresh.utf8.count == 32 && Hex.decode(fresh) != nil && id(second) != fresh)
            // Errors too: an unknown route, a missing credential, a malformed body.
            for response in [
                try await world.send(.GET, "/nope", checkSpec: false),
                try await world.send(.GET, "/users/a/recovery-methods"),
                try await world.send(.POST, "/recovery/flows", body: Array("{".utf8)),
            ] {
                #expect(response.status >= 400 && id(response).map { $0.utf8.count == 32 } == true, "\(response.text)")
            }
            let chosen = "trace-01:A.b_c-D"
            let echoed = try await world.send(
                .POST, "/webhook/backup/fetch", json: .object([("clientId", .string("ids"))]),
                headers: world.webhookHeaders + [("X-Request-Id", chosen)])
            #expect(id(echoed) == chosen)
            #expect(try await world.auditRows().last?.requestId == chosen)
            for bad in [String(repeating: "a", count: 65), "two words", "semi;colon", "slash/ed", ""] {
                let replaced = try await world.send(.GET, "/health", headers: [("X-Request-Id", bad)])
                #expect(id(replaced).map { $0 != bad && $0.utf8.count == 32 } == true, "\(bad)")
            }
            let twice = try await world.send(
                .GET, "/health", headers: [("X-Request-Id", "one"), ("X-Request-Id", "two")])
            #expect(id(twice).map { $0.utf8.count == 32 } == true)
            #expect(RequestID.isWellFormed(String(repeating: "z", count: 64)) && !RequestID.isWellFormed("a/b"))
        }
    }

    // MARK: Helpers

    /// Rate limits no lifecycle test reaches.
    static func looseLimits(_ configuration: inout ServerConfiguration) {
        let loose = ServerConfiguration.RateLimit(limit: 1_000, windowSeconds: 900)
        configuration.rateLimits = .init(
            verifyPerIdentifier: loose, verifyPerAddress: loose, flowCreationPerIdentifier: loose,
            flowCreationPerAddress: loose)
    }

    /// Another six-digit code.
    static func wrongCode(for code: String) -> String {
        let first = code.utf8.first.map { $0 == UInt8(ascii: "9") ? "0" : String(UnicodeScalar($0 + 1)) } ?? "1"
        return first + code.dropFirst()
    }

    /// Whether `number` occurs in `text` with no digit on either side (a six-digit code inside a longer
    /// number, such as a time, is not it).
    static func containsNumber(_ number: String, in text: String) -> Bool {
        let bytes = Array(text.utf8)
        let needle = Array(number.utf8)
        guard bytes.count >= needle.count else { return false }
        func isDigit(_ index: Int) -> Bool { bytes.indices.contains(index) && (0x30...0x39).contains(bytes[index]) }
        for start in 0...(bytes.count - needle.count) where Array(bytes[start..<start + needle.count]) == needle {
            if !isDigit(start - 1) && !isDigit(start + needle.count) { return true }
        }
        return false
    }

    /// Undoes the per-account chains' migration (numbered `version`): the schema of the release before it.
    static func undoAuditChains(in transaction: any SQLTransaction, version: Int64) async throws {
        for statement in [
            "DROP INDEX audit_events_chain", "ALTER TABLE audit_events DROP COLUMN chain_position",
            "DROP TABLE audit_chain_heads", "DROP TABLE audit_anchors", "DROP TABLE audit_anchor_head",
            "DROP TABLE audit_anchored",
        ] {
            try await transaction.query(statement, [])
        }
        try await transaction.query("DELETE FROM schema_migrations WHERE version = ?", [.integer(version)])
        if transaction.dialect == .postgres {
            // The replaced append function stays: re-applying the migration replaces it again.
            try await transaction.query("DROP SEQUENCE audit_events_seq", [])
        } else {
            for statement in Migrations.statements(Migrations.auditHead, dialect: .sqlite)
            where statement.contains("CREATE TRIGGER") {
                try await transaction.query(statement, [])
            }
        }
    }

    /// A fresh migrated database holding eight rows of two accounts, `odd` (rows 1, 3, 5, 7) and
    /// `even` (2, 4, 6, 8), with an anchor written after row 4 and another after row 6; `body` gets the
    /// newest anchor, as an operator would have kept it.
    static func withChain(_ backend: TestBackend, _ body: (any ServerStorage, AuditAnchor) async throws -> Void)
        async throws
    {
        try await TestWorld.withStorage(backend) { storage in
            for index in 1...8 {
                var detail = AuditEvent.Detail()
                detail.count = index
                try await storage.recordAudit(
                    AuditEvent(
                        .custodianSharesServed, account: index % 2 == 0 ? "even" : "odd", requestId: "r\(index)",
                        at: 1_000 + Int64(index), detail: detail))
                if index == 4 || index == 6 {
                    try #require(try await storage.writeAuditAnchor(at: 1_000 + Int64(index)))
                }
            }
            let rows = try await storage.auditChain(after: 0, limit: 100)
            try #require(rows.map(\.sequence) == Array(1...8))
            let verified = try await AuditTrail.verify(storage)
            let anchor = try #require(verified.head)
            try await body(storage, anchor)
        }
    }
}

/// Reads the rows appended since the last look, to check what one request appended.
final class AuditWatcher {
    let world: TestWorld
    private(set) var seen = 0

    init(world: TestWorld) { self.world = world }

    /// Moves past every row so far.
    func skip() async throws { seen = try await world.auditRows().count }

    /// The rows appended since the last look: exactly `kinds`, all of `account`, all carrying the
    /// response's request id (rows appended by the server's own webhook call for that request too:
    /// the call sends the request's id on).
    @discardableResult
    func appended(
        _ kinds: [AuditEventKind], by response: APIResponse? = nil, account: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [AuditRow] {
        let rows = Array(try await world.auditRows().dropFirst(seen))
        seen += rows.count
        #expect(rows.map(\.event) == kinds.map(\.rawValue), sourceLocation: sourceLocation)
        #expect(rows.allSatisfy { $0.account == account }, "\(rows.map(\.account))", sourceLocation: sourceLocation)
        if let response {
            let requestId = response.headers.first { $0.0.lowercased() == "x-request-id" }?.1
            #expect(requestId != nil, sourceLocation: sourceLocation)
            // The server's own webhook call for the request carries the request's id too.
            #expect(rows.allSatisfy { $0.requestId == requestId }, sourceLocation: sourceLocation)
        }
        return rows
    }
}

extension TestWorld {
    /// Every audit row, in chain order.
    func auditRows() async throws -> [AuditRow] {
        let storage = try inspector()
        do {
            let rows = try await storage.auditChain(after: 0, limit: 1_000_000)
            await storage.close()
            return rows
        } catch {
            await storage.close()
            throw error
        }
    }
}

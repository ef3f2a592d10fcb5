import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// The custodian backup share webhooks.
@Suite("Webhooks")
struct WebhookTests {
    func fetch(_ world: TestWorld, _ client: String) async throws -> [String] {
        let response = try await world.send(
            .POST, "/webhook/backup/fetch", json: .object([("clientId", .string(client))]),
            headers: world.webhookHeaders)
        guard case .array(let elements)? = response.json?["backupShares"] else { return [] }
        return elements.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }

    func deliver(_ world: TestWorld, _ client: String, _ share: String, server: Int = 0) async throws -> APIResponse {
        try await world.send(
            .POST, "/webhook/backup", json: .object([("clientId", .string(client)), ("backupShare", .string(share))]),
            headers: world.webhookHeaders, server: server)
    }

    @Test(
        "backup delivery is idempotent, a new set replaces the old one, fetch and delete",
        arguments: TestBackend.allCases)
    func backupDeliveryAndFetch(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2) { world in
            let key = Fixtures.anyKey
            let setA = try Fixtures.custodianShares(custodianKey: key, method: .password, parties: 3)
            let setB = try Fixtures.custodianShares(custodianKey: key, method: .password, parties: 3)
            let other = try Fixtures.custodianShares(custodianKey: key, method: .passkey, parties: 2)
            #expect(try await fetch(world, "c1").isEmpty)

            #expect(try await deliver(world, "c1", setA[0]).status == 204)
            #expect(try await deliver(world, "c1", setA[0], server: 1).status == 204)
            #expect(try await fetch(world, "c1") == [setA[0]])
            #expect(try await deliver(world, "c1", setA[1], server: 1).status == 204)
            #expect(Set(try await fetch(world, "c1")) == Set(setA))
            #expect(try await deliver(world, "c1", other[0]).status == 204)

            // A share of a new set for the same method and curve voids every share of the old set.
            #expect(try await deliver(world, "c1", setB[0]).status == 204)
            #expect(Set(try await fetch(world, "c1")) == [setB[0], other[0]])
            #expect(try await fetch(world, "c2").isEmpty)

            let deleted = try await world.send(
                .POST, "/webhook/backup/delete",
                json: .object([("clientId", .string("c1")), ("backupMethod", .string("PASSWORD"))]),
                headers: world.webhookHeaders)
            #expect(deleted.status == 204)
            #expect(try await fetch(world, "c1") == [other[0]])
        }
    }

    @Test(
        "a share that does not parse as a docs/formats.md custodian backup share is refused",
        arguments: TestBackend.allCases)
    func malformedShares(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let share = try Fixtures.custodianShares(custodianKey: Fixtures.anyKey)[0]
            let bad = [
                "", "{}", "not json", share.replacingOccurrences("\"generation\":0", "\"generation\":-1"),
                share.replacingOccurrences("\"password\"", "\"PASSWORD\""), share + " x",
                share.replacingOccurrences(
                    "share-recovery/custodian-backup-share@1", "share-recovery/custodian-backup-share@2"),
            ]
            for text in bad {
                let response = try await deliver(world, "c", text)
                #expect(response.status == 400, "\(text.prefix(40))")
            }
            #expect(try await world.snapshot().isEmpty)
        }
    }
}

extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

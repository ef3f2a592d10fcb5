import ShareCrypto
import Testing

@testable import ShareRecovery

/// A device's ECDSA pair setup kept at rest (docs/ecdsa.md "Kept between runs"): it opens only with
/// the share it was made for, signs after the round trip, and a store keeps it while unlocked.
@Suite("Kept ECDSA pair setups")
struct KeptPairSetupTests {
    static let digest = Keccak256.hash(Array("a kept setup signs".utf8))

    /// A 2-of-2 wallet by DKG and its pair setups by party.
    static func wallet() throws -> (shares: [ShareRecord], setups: [Int: [PairSetup]]) {
        let shares = try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: .secp256k1, walletId: "kept-setup", threshold: 2, parties: 2))
        return (shares, try ThresholdECDSA.pairSetups(shares: shares))
    }

    /// The same key and party as `share`, in another set of the next generation (as after a recovery).
    static func nextGeneration(of share: ShareRecord) throws -> ShareRecord {
        try ShareRecord(
            walletId: share.walletId, curve: share.curve, kind: .signing, threshold: share.threshold,
            parties: share.parties, partyIndex: share.partyIndex, generation: share.generation + 1, setId: .random(),
            secret: share.secret, commitments: share.commitments)
    }

    @Test("a kept setup opens with its share and signs; with any other share it opens as none")
    func opensOnlyWithItsShare() throws {
        let (shares, setups) = try Self.wallet()
        let device = shares[0]
        let sealed = try KeptPairSetup.seal(try #require(setups[1]?.first), share: device)
        let opened = try #require(try KeptPairSetup.open(sealed, share: device))
        let (signature, key) = try ThresholdECDSA.sign(
            shares: shares, setups: [1: [opened], 2: try #require(setups[2])], digest: Self.digest)
        #expect(signature.isValid(digest: Self.digest, publicKey: key))

        #expect(try KeptPairSetup.open(sealed, share: try Self.nextGeneration(of: device)) == nil)
        #expect(try KeptPairSetup.open(sealed, share: shares[1]) == nil)
        for index in [0, 4, 10, sealed.count - 1] {
            var damaged = sealed
            damaged[index] ^= 1
            #expect(try KeptPairSetup.open(damaged, share: device) == nil, "byte \(index)")
        }
        #expect(try KeptPairSetup.open(Array(sealed.dropLast()), share: device) == nil)
    }

    @Test("sealing refuses a share without its secret, a setup of another share and a discarded setup")
    func sealRefusals() async throws {
        let (shares, setups) = try Self.wallet()
        let setup = try #require(setups[1]?.first)
        await StoreTestSupport.expectError(.invalidParameters) {
            _ = try KeptPairSetup.seal(setup, share: shares[0].publicDescription)
        }
        await StoreTestSupport.expectError(.invalidParameters) {
            _ = try KeptPairSetup.seal(setup, share: try Self.nextGeneration(of: shares[0]))
        }
        await StoreTestSupport.expectError(.invalidParameters) {
            _ = try KeptPairSetup.open(
                try KeptPairSetup.seal(setup, share: shares[0]), share: shares[0].publicDescription)
        }
        setup.discard()
        await StoreTestSupport.expectError(.ecdsaCheckFailed) { _ = try KeptPairSetup.seal(setup, share: shares[0]) }
    }

    @Test("a store keeps the setup until replaced, forgotten or removed, and shows it only while unlocked")
    func storeKeepsItBesideTheCurrentShare() async throws {
        let (shares, setups) = try Self.wallet()
        let directory = StoreTestSupport.makeDirectory("kept-setup")
        defer { StoreTestSupport.removeDirectory(directory) }
        let store = try await StoreTestSupport.open(directory)
        let passcode = StoreTestSupport.passcode("482916")
        try await store.createPasscode(passcode, confirmation: passcode)
        try await store.stage(shares[0])
        try await store.promoteStaged()
        #expect(try await store.keptPairSetup() == nil)
        let sealed = try KeptPairSetup.seal(try #require(setups[1]?.first), share: shares[0])
        try await store.keepPairSetup(sealed)
        #expect(try await store.keptPairSetup() == sealed)
        #expect(StoreTestSupport.names(in: directory).contains(StoreLayout.pairSetupName))
        await store.lock()
        await StoreTestSupport.expectError(.notAuthenticated) { _ = try await store.keptPairSetup() }
        try await store.authenticate(passcode)

        try await store.forgetPairSetup()
        #expect(try await store.keptPairSetup() == nil)
        try await store.keepPairSetup(sealed)
        let next = try Self.nextGeneration(of: shares[0])
        try await store.stage(next)
        try await store.promoteStaged()
        // The old generation's setup does not open with the new current share: it counts as none.
        let kept = try #require(try await store.keptPairSetup())
        #expect(try KeptPairSetup.open(kept, share: try #require(try await store.currentShare())) == nil)

        try await store.keepPairSetup(sealed)
        try await store.remove()
        #expect(!StoreTestSupport.names(in: directory).contains(StoreLayout.pairSetupName))
    }
}

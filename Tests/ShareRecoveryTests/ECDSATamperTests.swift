import Foundation
import ShareCrypto
import ShareRecovery
import Testing

/// Every field of every DKLs23 message, tampered in transit: the signature aborts with
/// `ecdsaCheckFailed`, names the sender where the protocol can tell, and the detecting party's setup
/// with the culprit is discarded, so a second signature over it is refused.
@Suite("Threshold ECDSA: tampered messages")
struct ECDSATamperTests {
    struct Field: Sendable, CustomStringConvertible {
        let round: Int
        let name: String
        let offset: Int
        /// Whether the protocol can tell who sent it (ψ and the round-3 values only spoil the sum).
        let attributable: Bool
        var description: String { "round \(round) \(name)" }
    }

    // Offsets from docs/ecdsa.md's layouts (round 1: nonce, commitment, u, x, t; round 2: R, salt, pk,
    // ψ, Γ^u, Γ^v, τ, η, μ; round 3: u_i, w_i).
    static let fields = [
        Field(round: 1, name: "nonce", offset: 5, attributable: true),
        Field(round: 1, name: "commitment", offset: 40, attributable: true),
        Field(round: 1, name: "extension u", offset: 64 + 1000, attributable: true),
        Field(round: 1, name: "check x", offset: 64 + 21504 + 3, attributable: true),
        Field(round: 1, name: "check t", offset: 64 + 21504 + 16 + 20, attributable: true),
        Field(round: 2, name: "R", offset: 10, attributable: true),
        Field(round: 2, name: "salt", offset: 33 + 4, attributable: true),
        Field(round: 2, name: "pk", offset: 66 + 10, attributable: true),
        Field(round: 2, name: "psi", offset: 98 + 31, attributable: false),
        Field(round: 2, name: "gamma u", offset: 130 + 12, attributable: true),
        Field(round: 2, name: "gamma v", offset: 163 + 12, attributable: true),
        Field(round: 2, name: "tau", offset: 196 + 5000, attributable: true),
        Field(round: 2, name: "eta", offset: 196 + 53248 + 40, attributable: true),
        Field(round: 2, name: "mu", offset: 196 + 53248 + 64 + 7, attributable: true),
        Field(round: 3, name: "u", offset: 31, attributable: false),
        Field(round: 3, name: "w", offset: 63, attributable: false),
    ]

    static let shares = Result {
        try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: .secp256k1, walletId: "ecdsa-tamper", threshold: 2, parties: 2))
    }
    static let digest = SHA256.hash(Array("tamper".utf8))

    /// Runs 1 → 2 (odd cases) or 2 → 1 with one byte flipped; returns the error and the setups.
    private static func run(_ field: Field, from sender: Int) throws -> (ShareRecoveryError?, [Int: [PairSetup]]) {
        let shares = try Self.shares.get()
        let setups = try ThresholdECDSA.pairSetups(shares: shares)
        var parties = [Int: ECDSASigningParty]()
        for share in shares {
            parties[share.partyIndex] = try ECDSASigningParty(
                share: share, signers: [1, 2], setups: setups[share.partyIndex]!, digest: Self.digest)
        }
        func flip(_ round: Int, _ from: Int, _ message: inout [UInt8]) {
            if round == field.round && from == sender { message[field.offset] ^= 0x01 }
        }
        do {
            var inbox = [Int: [Int: [UInt8]]]()
            for i in [1, 2] {
                for (j, var message) in try parties[i]!.round1() {
                    flip(1, i, &message)
                    inbox[j, default: [:]][i] = message
                }
            }
            var inbox2 = [Int: [Int: [UInt8]]]()
            for i in [1, 2] {
                for (j, var message) in try parties[i]!.round2(inbox[i]!) {
                    flip(2, i, &message)
                    inbox2[j, default: [:]][i] = message
                }
            }
            var broadcasts = [Int: [UInt8]]()
            for i in [1, 2] {
                var message = try parties[i]!.round3(inbox2[i]!)
                flip(3, i, &message)
                broadcasts[i] = message
            }
            _ = try parties[1]!.signature(broadcasts)
            return (nil, setups)
        } catch {
            return (error, setups)
        }
    }

    /// Every field from party 1, and one field of each round the other way (each case is a full
    /// setup and session, so the matrix stays small for CI). Under a sanitizer (scripts/sanitizers.sh
    /// sets SHARE_RECOVERY_SANITIZE) only those three run: the full matrix belongs to the plain pass.
    static let cases: [(Field, Int)] = {
        let reverse = [fields[2], fields[11], fields[15]].map { ($0, 2) }
        let sanitized = ProcessInfo.processInfo.environment["SHARE_RECOVERY_SANITIZE"] != nil
        return sanitized ? reverse : fields.map { ($0, 1) } + reverse
    }()

    @Test("a flipped byte aborts with the right culprit and discards the setup", arguments: cases)
    func tampered(field: Field, sender: Int) throws {
        let (error, setups) = try Self.run(field, from: sender)
        let receiver = 3 - sender
        let failure = try #require(error)
        #expect(failure.code == .ecdsaCheckFailed)
        if field.attributable {
            #expect(failure.party == sender)
            #expect(setups[receiver]!.allSatisfy { $0.isDiscarded })
        } else {
            #expect(failure.party == nil)
        }
        // The detecting party cannot sign over the old setup again.
        let detector = field.attributable ? receiver : 1
        let shares = try Self.shares.get()
        #expect(throws: ShareRecoveryError(.ecdsaCheckFailed, "")) {
            try ECDSASigningParty(
                share: shares[detector - 1], signers: [1, 2], setups: setups[detector]!, digest: Self.digest)
        }
    }
}

import ShareCrypto
import ShareRecovery
import TestSupport
import Testing

/// Child keys of a threshold wallet (BIP-32 public derivation from BIP-328's synthetic xpub) and
/// Taproot key-path signatures (docs/derivation.md), signed by FROST with the BIP draft's tweaks.
@Suite("Derived and Taproot keys: paths, tweaks, threshold signatures")
struct DerivationTests {
    private static func dkg(_ layout: RoundTripTests.Layout = .init(threshold: 2, parties: 3)) throws -> [ShareRecord] {
        try DistributedKeyGeneration.run(
            parameters: DKGParameters(
                curve: .secp256k1, walletId: "derive", threshold: layout.threshold, parties: layout.parties))
    }

    /// The key a signature must verify under, computed step by step from ShareCrypto's xpub and
    /// Taproot primitives, apart from `SigningTweaks` and the draft's tweak context.
    private static func expectedKey(wallet: Point, path: [UInt32], taproot: Bool) throws -> Point {
        var key = try ExtendedPublicKey(aggregateKey: wallet)
        for index in path { key = try key.child(at: index).key }
        return taproot ? try Taproot.outputKey(internalKey: key.publicKey) : key.publicKey
    }

    /// Every non-empty tweak combination the CLI offers.
    static let tweakCases: [(path: [UInt32], taproot: Bool)] = [
        ([0], false), ([0, 1], false), ([7, 2_147_483_647, 3], false), ([], true), ([0, 1], true),
    ]

    // MARK: Paths

    @Test(
        "paths: m, m/0, m/0/1 and the largest index parse and print back",
        arguments: ["m", "m/0", "m/0/1", "m/2147483647/0"])
    func validPaths(text: String) throws {
        let path = try DerivationPath(text)
        #expect(path.description == text)
        #expect(path.indices.count == text.split(separator: "/").count - 1)
    }

    @Test(
        "paths: hardened steps, indices ≥ 2^31 and malformed paths are invalidParameters with a reason",
        arguments: [
            ("m/0'", "hardened"), ("m/0h", "hardened"), ("m/1/2H", "hardened"), ("m/2147483648", "2^31"),
            ("m/4294967296", "2^31"),
            ("m/99999999999999999999", "2^31"), ("0/1", "starts with m"), ("", "starts with m"),
            ("M/0", "starts with m"), ("m/", "decimal"),
            ("m//1", "decimal"), ("m/01", "leading zeros"), ("m/-1", "decimal"), ("m/+1", "decimal"),
            ("m/ 1", "decimal"), ("m/0x10", "decimal"),
            ("m/1.5", "decimal"),
        ])
    func invalidPaths(text: String, reason: String) {
        let error = #expect(throws: ShareRecoveryError.self) { _ = try DerivationPath(text) }
        #expect(error?.code == .invalidParameters)
        #expect(error?.reason.contains(reason) == true, "\(text): \(error?.reason ?? "accepted")")
    }

    @Test("paths: at most 255 steps (an xpub's depth is one byte); hardened indices refused from a list too")
    func pathLimits() throws {
        #expect(try DerivationPath(String(repeating: "/0", count: 255).prepending("m")).indices.count == 255)
        #expect(throws: ShareRecoveryError.self) {
            _ = try DerivationPath(String(repeating: "/0", count: 256).prepending("m"))
        }
        #expect(throws: ShareRecoveryError.self) { _ = try DerivationPath(indices: [0, 1 << 31]) }
    }

    // MARK: Keys

    @Test("a derived key: the root is BIP-328's xpub of Y; each step is CKDpub; the child's secret is x + Σ I_L")
    func derivedKey() throws {
        let shares = try Self.dkg()
        let wallet = shares[0].publicKey
        let derived = try DerivedKey(walletPublicKey: wallet, path: DerivationPath("m/0/1"))
        #expect(derived.rootExtendedKey == (try ExtendedPublicKey(aggregateKey: wallet)))
        #expect(
            derived.rootExtendedKey.serialized.hasPrefix("xpub661MyMwAqRbc"),
            "depth 0, fingerprint 0: the prefix of every root xpub")
        #expect(derived.publicKey == (try Self.expectedKey(wallet: wallet, path: [0, 1], taproot: false)))
        #expect(derived.extendedKey.depth == 2 && derived.extendedKey.childNumber == 1)
        // A watch-only wallet that imports the root xpub reaches the same child.
        let watched = try ExtendedPublicKey(serialized: derived.rootExtendedKey.serialized).child(at: 0).key.child(
            at: 1
        ).key
        #expect(watched.serialized == derived.extendedKey.serialized)
        // The signers' shares interpolate to x; x plus the plain tweaks is the child's discrete log.
        let signers = [1, 3]
        var secret = Scalar(0, curve: .secp256k1)
        for index in signers {
            let lambda = try Shamir.lagrangeCoefficientAtZero(index: index, indices: signers, curve: .secp256k1)
            secret = secret + lambda * shares[index - 1].secret!
        }
        let childSecret = derived.tweaks.reduce(secret, +)
        #expect(try Point(generatorTimes: childSecret) == derived.publicKey)
        #expect(derived.tweaks.count == 2)
    }

    @Test("ed25519 has no derived keys, no Taproot, and no tweaks in any mode; rfc9591 cannot sign with tweaks")
    func refusedTweaks() throws {
        let ed = try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: .ed25519, walletId: "ed", threshold: 2, parties: 2))
        let edError = #expect(throws: ShareRecoveryError.self) {
            _ = try DerivedKey(walletPublicKey: ed[0].publicKey, path: .root)
        }
        #expect(edError?.code == .invalidParameters)
        #expect(edError?.reason.contains("no standard") == true)
        for tweaks in [SigningTweaks(path: try DerivationPath("m/0")), SigningTweaks(taproot: true)] {
            let onEd = #expect(throws: ShareRecoveryError.self) {
                _ = try ThresholdSigning.sign(shares: ed, message: [1], tweaks: tweaks)
            }
            #expect(onEd?.code == .invalidParameters && onEd?.reason.contains("ed25519") == true)
            let secp = try Self.dkg(.init(threshold: 2, parties: 2))
            let rfc = #expect(throws: ShareRecoveryError.self) {
                _ = try ThresholdSigning.sign(shares: secp, message: [1], mode: .rfc9591, tweaks: tweaks)
            }
            #expect(rfc?.code == .invalidParameters && rfc?.reason.contains("bip340") == true)
            // The roles refuse on their own too.
            let signer = try SigningParty(share: secp[0], mode: .rfc9591)
            #expect(throws: ShareRecoveryError.self) { _ = try signer.commit(message: [1], tweaks: tweaks) }
            let nonces = secp.map { FrostRFC9591.generateNonce(share: $0.secret!) }
            #expect(throws: ShareRecoveryError.self) {
                _ = try SigningPackage(
                    signingSet: secp[0], message: [1], mode: .rfc9591,
                    commitments: [1: nonces[0].commitment, 2: nonces[1].commitment],
                    tweaks: tweaks)
            }
        }
    }

    // MARK: Signatures

    @Test(
        "every t-subset of a DKG-made 2-of-3 set signs under derived and Taproot keys; libsecp256k1 verifies under that key only"
    )
    func everySubsetSignsTweaked() throws {
        let shares = try Self.dkg()
        let wallet = shares[0].publicKey
        let subsets = [[0, 1], [0, 2], [1, 2], [0, 1, 2]].map { $0.map { shares[$0] } }
        for (path, taproot) in Self.tweakCases {
            let tweaks = SigningTweaks(path: try DerivationPath(indices: path), taproot: taproot)
            let expected = try Self.expectedKey(wallet: wallet, path: path, taproot: taproot)
            let message = Array("pay 1 coin to bob under \(tweaks)".utf8)
            for subset in subsets {
                let (package, signature) = try ThresholdSigning.sign(shares: subset, message: message, tweaks: tweaks)
                #expect(package.signingKey == expected, "\(tweaks)")
                #expect(package.publicKey == wallet)
                #expect(
                    FrostBIP340.verify(signature: signature, message: message, xOnlyKey: expected.xOnlyRepresentation),
                    "\(tweaks), signers \(package.signers)")
                #expect(
                    !FrostBIP340.verify(signature: signature, message: message, xOnlyKey: wallet.xOnlyRepresentation))
                #expect(
                    !FrostBIP340.verify(
                        signature: signature, message: message + [0], xOnlyKey: expected.xOnlyRepresentation))
            }
        }
    }

    @Test("with tweaks, a bad partial signature is refused before aggregation, naming its party")
    func badShareWithTweaks() throws {
        let shares = try Self.dkg()
        let tweaks = SigningTweaks(path: try DerivationPath("m/0/5"), taproot: true)
        let signers = try [shares[0], shares[2]].map { try SigningParty(share: $0, mode: .bip340) }
        let message: [UInt8] = [0x42]
        let nonces = try signers.map { try $0.commit(message: message, tweaks: tweaks) }
        let package = try SigningPackage(
            signingSet: shares[0], message: message, mode: .bip340,
            commitments: [1: nonces[0].commitment, 3: nonces[1].commitment], tweaks: tweaks)
        var signatureShares = [
            1: try signers[0].sign(nonce: nonces[0], package: package),
            3: try signers[1].sign(nonce: nonces[1], package: package),
        ]
        let signature = try package.aggregate(signatureShares: signatureShares)
        #expect(
            FrostBIP340.verify(signature: signature, message: message, xOnlyKey: package.signingKey.xOnlyRepresentation)
        )
        for bad in [1, 3] {
            var tampered = signatureShares
            tampered[bad] = tampered[bad]! + Scalar(1, curve: .secp256k1)
            let error = #expect(throws: ShareRecoveryError.self) {
                _ = try package.aggregate(signatureShares: tampered)
            }
            #expect(error?.code == .invalidSignatureShare)
            #expect(error?.party == bad)
        }
        // Shares signed for m/0/5 do not verify in a package for m/0/6: the tweaks are part of what is signed.
        let freshNonces = try signers.map { try $0.commit(message: message, tweaks: tweaks) }
        let freshPackage = try SigningPackage(
            signingSet: shares[0], message: message, mode: .bip340,
            commitments: [1: freshNonces[0].commitment, 3: freshNonces[1].commitment],
            tweaks: tweaks)
        signatureShares = [
            1: try signers[0].sign(nonce: freshNonces[0], package: freshPackage),
            3: try signers[1].sign(nonce: freshNonces[1], package: freshPackage),
        ]
        let mixed = try SigningPackage(
            signingSet: shares[0], message: message, mode: .bip340, commitments: freshPackage.commitments,
            tweaks: SigningTweaks(path: try DerivationPath("m/0/6"), taproot: true))
        #expect(mixed.signingKey != freshPackage.signingKey)
        let wrongPath = #expect(throws: ShareRecoveryError.self) {
            _ = try mixed.aggregate(signatureShares: signatureShares)
        }
        #expect(wrongPath?.code == .invalidSignatureShare)
        #expect(wrongPath?.party == 1)
    }

    @Test("a recovered set (generation 1) signs under the same child and Taproot keys")
    func recoveredSetSignsTweaked() async throws {
        let original = try Self.dkg()
        let custodian = SealingKeyPair()
        let secret = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
        let backup = try BackupCreation.create(
            signingShares: Array(original.prefix(2)), method: .cloudKey, secret: secret,
            custodianPublicKey: custodian.publicKey, keyId: "k")
        let recovered = try await OfflineRecovery.recover(
            cipherText: backup.cipherText.base64, secret: secret, custodianShares: backup.custodianShares.map(\.json),
            custodianKey: custodian)
        #expect(recovered[0].generation == 1)
        let message = Array("after recovery, same child".utf8)
        for (path, taproot) in Self.tweakCases {
            let tweaks = SigningTweaks(path: try DerivationPath(indices: path), taproot: taproot)
            let before = try ThresholdSigning.sign(shares: Array(original.suffix(2)), message: message, tweaks: tweaks)
            let after = try ThresholdSigning.sign(shares: Array(recovered.prefix(2)), message: message, tweaks: tweaks)
            #expect(after.package.signingKey == before.package.signingKey)
            #expect(
                after.package.signingKey
                    == (try Self.expectedKey(wallet: original[0].publicKey, path: path, taproot: taproot)))
            #expect(
                FrostBIP340.verify(
                    signature: after.signature, message: message,
                    xOnlyKey: before.package.signingKey.xOnlyRepresentation))
        }
    }

    /// `bip-0341/wallet-test-vectors.json` (the key-path input without a script tree).
    private struct BIP341File: Decodable {
        struct KeyPath: Decodable {
            struct Utxo: Decodable { let scriptPubKey: HexBytes }
            struct Input: Decodable {
                struct Given: Decodable { let internalPrivkey: HexBytes }
                struct Intermediary: Decodable { let sigHash: HexBytes }
                let given: Given
                let intermediary: Intermediary
            }
            let utxoSpent: Utxo
            let inputSpending: Input
        }
        let keyPathSpending: [KeyPath]
    }

    @Test(
        "BIP-341's key-path vector: a 2-of-3 set sharing its internal private key signs the sighash under the spent output's key"
    )
    func bip341KeyPathByThreshold() throws {
        let file = try ExternalVectors.load("bip-0341/wallet-test-vectors.json", as: BIP341File.self)
        let test = try #require(file.keyPathSpending.first)
        let internalSecret = try Scalar(
            rawRepresentation: test.inputSpending.given.internalPrivkey.bytes, curve: .secp256k1)
        // Shared by a polynomial whose constant is the published key (a dealer, as only a test may).
        let polynomial = Polynomial.random(constant: internalSecret, degree: 1)
        let commitments = try polynomial.commitments()
        let setId = SetID.random()
        let shares = try (1...3).map { index in
            try ShareRecord(
                walletId: "bip341", curve: .secp256k1, kind: .signing, threshold: 2, parties: 3, partyIndex: index,
                generation: 0, setId: setId,
                secret: polynomial.evaluate(atIndex: index), commitments: commitments)
        }
        let outputKey = Array(test.utxoSpent.scriptPubKey.bytes.dropFirst(2))
        let sigHash = test.inputSpending.intermediary.sigHash.bytes
        for subset in [[0, 1], [1, 2], [0, 2]] {
            let (package, signature) = try ThresholdSigning.sign(
                shares: subset.map { shares[$0] }, message: sigHash, tweaks: SigningTweaks(taproot: true))
            #expect(package.signingKey.xOnlyRepresentation == outputKey)
            #expect(FrostBIP340.verify(signature: signature, message: sigHash, xOnlyKey: outputKey))
        }
    }
}

extension String {
    fileprivate func prepending(_ prefix: String) -> String { prefix + self }
}

import ShareCrypto
import TestSupport
import Testing

@testable import ShareRecovery

/// Eject (docs/eject.md): the one place the key is rebuilt, and the forms it is exported in, each
/// checked outside the engine's own types.
@Suite("Key ejection: rebuilding the key and its export formats")
struct KeyEjectionTests {
    /// The public key of exported hex text, read and computed apart from the engine (TestSupport).
    static func independentPublicKey(hexText: SecureBytes, curve: Curve) throws -> [UInt8] {
        try #require(
            ExportedKeyCheck.publicKey(ofHex: String(decoding: hexText.revealedBytes(), as: UTF8.self), curve: curve))
    }

    @Test(
        "any t shares of a set rebuild the key whose public key, computed apart, is the wallet's",
        arguments: Curve.allCases)
    func rebuildsTheWalletKey(curve: Curve) throws {
        for (threshold, parties) in [(2, 2), (2, 3), (3, 5)] {
            let set = try KeyGeneration.generate(curve: curve, walletId: "w", threshold: threshold, parties: parties)
            // Two different subsets give the same key.
            let first = try KeyEjection.rebuildKeyForEject(Array(set.prefix(threshold)))
            let last = try KeyEjection.rebuildKeyForEject(Array(set.suffix(threshold)))
            #expect(first.privateKey == last.privateKey)
            #expect(first.publicKey == set[0].publicKey && first.walletId == "w" && first.curve == curve)
            #expect(
                try Self.independentPublicKey(hexText: first.privateKeyHex, curve: curve)
                    == set[0].publicKey.rawRepresentation)
        }
    }

    @Test(
        "a backup set rebuilds the same key as the signing set it came from (offline eject from a backup)",
        arguments: Curve.allCases)
    func backupSetRebuildsTheKey(curve: Curve) throws {
        let signing = try KeyGeneration.generate(curve: curve, walletId: "w")
        let backup = try Resharing.reshare(signing, newThreshold: 2, newParties: 2, newKind: .backup, newGeneration: 0)
        let key = try KeyEjection.rebuildKeyForEject(backup)
        #expect(key.publicKey == signing[0].publicKey)
        #expect(
            try Self.independentPublicKey(hexText: key.privateKeyHex, curve: curve)
                == signing[0].publicKey.rawRepresentation)
    }

    @Test("WIF: version byte, the key, 0x01; decoded here by a Base58 decoder of the test's own")
    func wifDecodesToTheKey() throws {
        let key = try KeyEjection.rebuildKeyForEject(try KeyGeneration.generate(curve: .secp256k1, walletId: "w"))
        let keyBytes = key.privateKey.rawRepresentation.revealedBytes()
        for network in EjectedKey.WIFNetwork.allCases {
            let text = String(decoding: try key.wif(network: network).revealedBytes(), as: UTF8.self)
            #expect(
                network == .mainnet ? ["K", "L"].contains(text.first) : text.first == "c",
                "\(network): \(text.prefix(1))")
            let (version, secret) = try #require(ExportedKeyCheck.wif(text))
            #expect(version == network.rawValue)
            #expect(secret == keyBytes)
            #expect(RawPrimitives.publicKey(ofPrivateKey: secret, curve: .secp256k1) == key.publicKey.rawRepresentation)
        }
    }

    @Test("xprv: BIP-32's serialization of the key with BIP-328's chain code; its xpub is the wallet's root xpub")
    func extendedPrivateKey() throws {
        let key = try KeyEjection.rebuildKeyForEject(try KeyGeneration.generate(curve: .secp256k1, walletId: "w"))
        let keyBytes = key.privateKey.rawRepresentation.revealedBytes()
        for (network, version) in [
            (EjectedKey.WIFNetwork.mainnet, [UInt8]([0x04, 0x88, 0xAD, 0xE4])), (.testnet, [0x04, 0x35, 0x83, 0x94]),
        ] {
            let text = String(decoding: try key.extendedPrivateKey(network: network).revealedBytes(), as: UTF8.self)
            #expect(text.hasPrefix(network == .mainnet ? "xprv" : "tprv"))
            let decoded = try #require(ExportedKeyCheck.base58(text))
            try #require(decoded.count == 82)
            let body = Array(decoded.prefix(78))
            #expect(Array(decoded.suffix(4)) == Array(SHA256.hash(SHA256.hash(body)).prefix(4)))
            #expect(Array(body[0..<4]) == version && body[4...12].allSatisfy { $0 == 0 } && body[45] == 0)
            #expect(Array(body[46..<78]) == keyBytes)
            // The same header with the public key: the root xpub that `derive` prints.
            let publicKey = try #require(RawPrimitives.publicKey(ofPrivateKey: Array(body[46..<78]), curve: .secp256k1))
            let xpub = ExtendedPublicKey.mainnetVersion + Array(body[4..<45]) + publicKey
            #expect(xpub == (try ExtendedPublicKey(aggregateKey: key.publicKey)).rawRepresentation)
        }
        let ed = try KeyEjection.rebuildKeyForEject(try KeyGeneration.generate(curve: .ed25519, walletId: "w"))
        #expect(throws: ShareRecoveryError(.invalidParameters, "")) { _ = try ed.extendedPrivateKey() }
    }

    @Test("WIF of the Bitcoin wiki's example key (en.bitcoin.it/wiki/Wallet_import_format, compressed form)")
    func wifKnownAnswer() throws {
        let bytes = try #require(
            ExportedKeyCheck.hexBytes("0c28fca386c7a227600b2fe50b7cae11ec86d3bf1fbe471be89827e19d72aa1d"))
        let scalar = try Scalar(rawRepresentation: bytes, curve: .secp256k1)
        let key = EjectedKey(walletId: "w", publicKey: try Point(generatorTimes: scalar), privateKey: scalar)
        #expect(
            String(decoding: try key.wif().revealedBytes(), as: UTF8.self)
                == "KwdMAjGmerYanjeui5SHS7JkmpZvVipYvB2LJGU1ZxJwYvP98617")
    }

    @Test("ed25519 has no WIF; its export is the scalar, little-endian")
    func ed25519HasNoWIF() throws {
        let key = try KeyEjection.rebuildKeyForEject(try KeyGeneration.generate(curve: .ed25519, walletId: "w"))
        #expect(throws: ShareRecoveryError(.invalidParameters, "")) { _ = try key.wif() }
    }

    @Test("refusals: too few shares, no secret, one party twice, two sets")
    func refusals() throws {
        let set = try KeyGeneration.generate(curve: .secp256k1, walletId: "w", threshold: 2, parties: 3)
        let other = try KeyGeneration.generate(curve: .secp256k1, walletId: "w", threshold: 2, parties: 3)
        #expect(throws: ShareRecoveryError(.invalidParameters, "")) { _ = try KeyEjection.rebuildKeyForEject([]) }
        #expect(throws: ShareRecoveryError(.invalidParameters, "")) { _ = try KeyEjection.rebuildKeyForEject([set[0]]) }
        #expect(throws: ShareRecoveryError(.invalidParameters, "")) {
            _ = try KeyEjection.rebuildKeyForEject([set[0], set[1].publicDescription])
        }
        #expect(throws: ShareRecoveryError(.invalidParameters, "")) {
            _ = try KeyEjection.rebuildKeyForEject([set[0], set[0]])
        }
        #expect(throws: ShareRecoveryError(.inconsistentShares, "")) {
            _ = try KeyEjection.rebuildKeyForEject([set[0], other[1]])
        }
    }

    @Test("the rebuilt key's description, and its errors, show no form of the key")
    func descriptionIsRedacted() throws {
        let key = try KeyEjection.rebuildKeyForEject(try KeyGeneration.generate(curve: .secp256k1, walletId: "w"))
        let forms = [
            SecretForms("private key", secret: key.privateKey.rawRepresentation),
            SecretForms("WIF", secret: try key.wif()),
        ]
        let printed = "\(key) \(String(reflecting: key)) \(key.privateKey) \(key.privateKeyHex)"
        #expect(SecretForms.leaks(of: forms, in: printed).isEmpty, "\(printed)")
        #expect(printed.contains(key.publicKey.hex))
    }
}

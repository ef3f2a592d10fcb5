import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `derive`: a child of the wallet key by BIP-32 public derivation, and its xpub.
struct DeriveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "derive",
        abstract:
            "A child public key of a secp256k1 wallet (BIP-32, non-hardened) and its xpub; --taproot adds its Taproot output key.",
        discussion: helpText(
            "Without --path the key is the wallet key itself (m). The root is BIP-328's synthetic xpub of the wallet key Y: depth 0, parent fingerprint 0, child number 0 and BIP-328's fixed chain code (SHA-256 of \"MuSig2MuSig2MuSig2\"), so any BIP-32 wallet can import rootXpub and watch every child. Each step of --path is CKDpub; only non-hardened steps exist, because no party holds the wallet's private key (m/0/1, not m/0'). `sign --path` signs for the same child, with the same tweaks. ed25519 wallets have no non-hardened threshold derivation: no standard defines one (docs/derivation.md).\n\nThe wallet key comes from any signing share of the wallet (--signing-share; only its public part is read) or as hex (--public-key, the 33-byte compressed key `sign` prints as publicKey).\n\nPrints one JSON object: curve, walletPublicKey, path, rootXpub, publicKey (the child, compressed), xOnlyPublicKey, chainCode, xpub, parentFingerprint, tweaks (I_L of each step, hex: the plain tweaks the signers apply); with --taproot also taprootTweak, outputKey (x-only), outputKeyParity and scriptPubKey (OP_1 <outputKey>).\n\n--address adds address, the child key's address for ECDSA signatures (`sign --mode ecdsa --path` signs for it; docs/formats.md §12): eth, Ethereum's 0x + 40 hex digits with the EIP-55 checksum (the last 20 bytes of Keccak-256 of the uncompressed key's X || Y); p2wpkh, Bitcoin's native SegWit bech32 address (witness version 0, HASH160 of the compressed key), bc1q… on mainnet, or tb1q… with --network testnet. --network is for p2wpkh only; ed25519 wallets have no such addresses. A Taproot output key's address is P2TR, not one of these: --taproot prints its scriptPubKey instead, so it does not combine with --address.",
            examples: [
                "share-recovery derive --path m/0/1 --signing-share wallet/share-1.json",
                "share-recovery derive --path m/0/1 --public-key \"$KEY\" --taproot",
                "share-recovery derive --path m --public-key \"$KEY\"",
                "share-recovery derive --path m/0/1 --signing-share wallet/share-1.json --address eth",
                "share-recovery derive --path m/0/1 --public-key \"$KEY\" --address p2wpkh --network testnet",
            ]))

    @OptionGroup var tweakOptions: TweakOptions
    @Option(help: "A signing share file of the wallet (its public key is read).") var signingShare: String?
    @Option(help: "The wallet public key, hex (33 bytes, compressed secp256k1).") var publicKey: String?
    @Option(help: "Add the child key's address: eth (EIP-55) or p2wpkh (bech32).") var address: AddressKind?
    @Option(help: "With --address p2wpkh: mainnet (default, bc1q…) or testnet (tb1q…).") var network: String?

    func run() throws {
        let walletKey = try Self.walletKey(signingShare: signingShare, publicKey: publicKey)
        let addressNetwork = try AddressKind.checkedNetwork(
            network, address: address, curve: walletKey.curve, taproot: tweakOptions.taproot)
        let tweaks = try tweakOptions.tweaks()
        let applied: SigningTweaks.Applied
        do {
            applied = try tweaks.apply(to: walletKey)
        } catch {
            // The key came whole from a file or an option: a path it does not take is the command line's.
            throw CLIError.usage(error)
        }
        let derived = applied.derivedKey
        var members: [(String, JSONValue)] = [
            ("curve", .string(walletKey.curve.name)), ("walletPublicKey", .string(walletKey.hex)),
            ("path", .string(derived.path.description)),
            ("rootXpub", .string(derived.rootExtendedKey.serialized)), ("publicKey", .string(derived.publicKey.hex)),
            ("xOnlyPublicKey", .string(Hex.encode(derived.publicKey.xOnlyRepresentation))),
            ("chainCode", .string(Hex.encode(derived.chainCode))),
            ("xpub", .string(derived.extendedKey.serialized)),
            ("parentFingerprint", .string(Hex.encode(derived.extendedKey.parentFingerprint))),
            ("tweaks", .array(derived.tweaks.map { .string(Hex.encode($0.rawRepresentation.revealedBytes())) })),
        ]
        if tweaks.taproot {
            let tweak = try mappingCryptoErrors { try Taproot.tweak(internalKey: derived.publicKey) }
            members += [
                ("taprootTweak", .string(Hex.encode(tweak.rawRepresentation.revealedBytes()))),
                ("outputKey", .string(Hex.encode(applied.signingKey.xOnlyRepresentation))),
                ("outputKeyParity", .number(applied.signingKey.hasEvenY ? "0" : "1")),
                ("scriptPubKey", .string("5120" + Hex.encode(applied.signingKey.xOnlyRepresentation))),
            ]
        }
        if let address {
            members.append(("address", .string(try address.address(of: derived.publicKey, network: addressNetwork))))
        }
        Terminal.output(JSONWriter.write(.object(members.map { (key: $0.0, value: $0.1) })))
    }

    /// Y from a signing share file or hex; exactly one of them.
    static func walletKey(signingShare: String?, publicKey: String?) throws -> Point {
        switch (signingShare, publicKey) {
        case (let file?, nil):
            return try Files.readShare(file).publicKey
        case (nil, let hex?):
            guard let bytes = Hex.decode(hex.lowercased()) else { throw CLIError.usage("--public-key must be hex") }
            guard bytes.count == 33 else {
                throw CLIError.usage(
                    ShareRecoveryError(
                        .invalidParameters,
                        "--public-key has \(bytes.count) bytes; derivation needs the 33-byte compressed secp256k1 wallet key (a 32-byte key is ed25519, which has no non-hardened threshold derivation, or x-only, which lacks the parity BIP-32 hashes)"
                    ))
            }
            return try mappingCryptoErrors { try Point(rawRepresentation: bytes, curve: .secp256k1) }
        default:
            throw CLIError.usage("give the wallet key once: --signing-share FILE or --public-key HEX")
        }
    }
}

import ArgumentParser
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// `sign`: a threshold signature from t signing shares, all signers in this process.
struct SignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract:
            "Sign a message with t signing shares (FROST, docs/formats.md §11; or threshold ECDSA, §12); prints the signature.",
        discussion: helpText(
            "Each --signing-share file is one party's §4 signing share; give at least t of them, all of one signing set and generation (a share from before a recovery is refused). The signers run FROST's two rounds here, through the same messages a network would carry; every signature share is verified before aggregation, and the result is checked with the mode's ordinary verifier.\n\nModes: secp256k1 signs in bip340 (default, a BIP-340 Schnorr signature under the x-only key) or rfc9591 (65 bytes, R || z); ed25519 signs in rfc9591 (an RFC 8032 signature).\n\nWith --server, give only this device's share (party 1 of a 2-of-2 wallet made by `wallet create`), as a file (--signing-share) or as the current share of the device's store (--store, --passcode-file): the server's custodian signs as party 2 (a token of purpose sign, --user-id, --token-file). Its signature share is verified like any other; after a recovery the server refuses a share of the old set.\n\nWith --path (a BIP-32 path of non-hardened steps, m/0/1) the signature is for the wallet's child key that `derive --path` prints; with --taproot it is a BIP-341 key-path signature under the Taproot output key (no script tree) of the wallet key or of that child. Both sign in mode bip340 on secp256k1 only; every signer computes the tweaks itself from the wallet key (docs/derivation.md). With --server the custodian computes the same tweaks and signs for them too.\n\nPrints one JSON object: curve, mode, publicKey (the §1 encoding of Y, as in the share records), signers and signature (hex); with --path or --taproot also path, taproot and signingKey (the compressed key the signature verifies under; BIP-340 uses its last 32 bytes).\n\nWith --mode ecdsa (secp256k1 only) exactly t signers make an ordinary ECDSA signature by threshold ECDSA (DKLs23, docs/ecdsa.md), for Ethereum and Bitcoin P2WPKH: the pair setups among them are made here first, then the three rounds. ECDSA signs a 32-byte digest of the message file, chosen by --hash: keccak256 (the default, Ethereum's hash of a transaction's signing payload), sha256d (Bitcoin's double SHA-256 of a sighash preimage) or none (the file is the 32-byte digest itself). --path signs for the child key, as above; --taproot does not apply. With --server and --mode ecdsa, give only this device's secp256k1 share (a --signing-share file, or --store and --passcode-file) with --user-id and --token-file (purpose sign): the device and the server's custodian make their ECDSA pair setup, then sign in three rounds (docs/ecdsa.md, \"Through the server\"); a check that fails on either side discards the setup on both, and the command makes one fresh setup and tries once more before it stops. The device keeps no pair setup between runs yet, so each run makes one. Prints one JSON object: publicKey (the compressed key the signature verifies under: the child's with --path), mode, digest (the 32 bytes signed), r, s (low s, at most n/2), recoveryId (0 or 1: public-key recovery from digest, r and s with it gives publicKey; it is Ethereum's yParity; a legacy v is 27 + recoveryId), signature (r || s, 64 bytes) and der, all hex.",
            examples: [
                "share-recovery sign --signing-share wallet/share-1.json --signing-share wallet/share-2.json --message-file msg.bin --path m/0/1",
                "share-recovery sign --signing-share wallet/share-1.json --signing-share wallet/share-2.json --message-file sighash.bin --path m/0/1 --taproot",
                "share-recovery sign --server http://127.0.0.1:8080 --user-id user-1 --token-file sign.token --store device --passcode-file passcode.txt --message-file sighash.bin --path m/0/1 --taproot",
                "share-recovery sign --server http://127.0.0.1:8080 --user-id user-1 --token-file sign.token --signing-share device-share.json --message-file msg.bin",
                "share-recovery sign --server http://127.0.0.1:8080 --user-id user-1 --token-file sign.token --store device --passcode-file passcode.txt --message-file msg.bin",
                "share-recovery sign --signing-share wallet/share-1.json --signing-share wallet/share-2.json --message-file msg.bin",
                "share-recovery sign --signing-share wallet/share-1.json --signing-share wallet/share-2.json --message-file msg.bin --mode rfc9591",
                "share-recovery sign --mode ecdsa --signing-share wallet/share-1.json --signing-share wallet/share-3.json --message-file tx-payload.bin --path m/0/1",
                "share-recovery sign --mode ecdsa --signing-share wallet/share-1.json --signing-share wallet/share-2.json --message-file sighash-preimage.bin --hash sha256d",
                "share-recovery sign --mode ecdsa --signing-share wallet/share-1.json --signing-share wallet/share-2.json --message-file digest.bin --hash none",
                "share-recovery sign --server http://127.0.0.1:8080 --user-id user-1 --token-file sign.token --signing-share device-share.json --mode ecdsa --message-file tx-payload.bin --path m/0/1",
            ]))

    @Option(name: .customLong("signing-share"), help: "A signer's §4 signing share file (repeat: t or more).")
    var signingShares: [String] = []
    @Option(help: "The file whose bytes are signed.") var messageFile: String
    @Option(help: "bip340, rfc9591 or ecdsa (default: bip340 on secp256k1, rfc9591 on ed25519).")
    var mode: SignatureMode?
    @Option(
        help: "With --mode ecdsa: keccak256 (default, Ethereum), sha256d (Bitcoin) or none (the file is the digest).")
    var hash: MessageHash?
    @Option(help: "A reference server whose custodian signs as party 2 (then give only the device's share).")
    var server: String?
    @Option(help: "With --server: the user id.") var userId: String?
    @Option(help: "With --server: a file with a token of purpose sign.") var tokenFile: String?
    @Option(help: "With --server, instead of --signing-share: the device's share store (its current share signs).")
    var store: String?
    @Option(help: "With --store: the store's passcode file.") var passcodeFile: String?
    @OptionGroup var tweakOptions: TweakOptions

    func run() async throws {
        if mode == .ecdsa { return try await signECDSA() }
        guard hash == nil else { throw CLIError.usage(MessageHash.frostRefusal) }
        try DeviceShareSource.checkUsage(
            server: server, userId: userId, tokenFile: tokenFile, store: store, passcodeFile: passcodeFile,
            signingShares: signingShares.count, purpose: "sign")
        guard !signingShares.isEmpty || store != nil else {
            throw CLIError.usage("give each signer's share with --signing-share (t or more)")
        }
        // A path that does not parse is refused before any file or store is read.
        _ = try tweakOptions.tweaks()
        var shares = try signingShares.map(Files.readShare)
        if let store, let passcodeFile {
            shares = [try await DeviceShareSource.current(store: store, passcodeFile: passcodeFile)]
        }
        guard let first = shares.first else {
            throw CLIError.usage("give each signer's share with --signing-share (t or more)")
        }
        let (mode, tweaks) = try tweakOptions.checked(mode: mode?.frost, curve: first.curve)
        let message = try Files.read(messageFile)
        let package: SigningPackage, signature: [UInt8]
        if let server {
            // Checked above, before any file was read.
            let userId = userId!, tokenFile = tokenFile!
            (package, signature) = try await HTTPWalletClient(
                baseURL: server, tokenProvider: try TokenFile.provider(tokenFile)
            )
            .sign(share: shares[0], clientId: userId, message: message, mode: mode, tweaks: tweaks)
        } else {
            (package, signature) = try ThresholdSigning.sign(
                shares: shares, message: message, mode: mode, tweaks: tweaks)
        }
        var members: [(key: String, value: JSONValue)] = [
            ("curve", .string(package.signingSet.curve.name)), ("mode", .string(package.mode.rawValue)),
            ("publicKey", .string(package.publicKey.hex)),
            ("signers", .array(package.signers.map { .number(String($0)) })),
            ("signature", .string(Hex.encode(signature))),
        ]
        if !package.tweaks.isEmpty {
            members += [
                ("path", .string(package.tweaks.path.description)), ("taproot", .bool(package.tweaks.taproot)),
                ("signingKey", .string(package.signingKey.hex)),
            ]
        }
        Terminal.output(JSONWriter.write(.object(members)))
    }
}

/// `verify`: an ordinary single-signer check of a signature, by a library that knows nothing of FROST.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Check a signature under a public key; exit 0 if valid, 1 if not.",
        discussion: helpText(
            "The check is the mode's ordinary single-signer verifier: libsodium's crypto_sign_verify_detached (ed25519), libsecp256k1's secp256k1_schnorrsig_verify (bip340), RFC 9591 §5.4 (secp256k1 rfc9591). --public-key is the §1 encoding of Y, as `sign` and the share records print it. In the examples, KEY and SIG hold the publicKey and signature that `sign` printed.\n\nA signature made with `sign --path`/`--taproot` verifies under the tweaked key: give the wallet key and the same --path/--taproot (the key is derived here, docs/derivation.md), or give that key itself: `sign`'s signingKey, or in mode bip340 any 32-byte x-only key (e.g. `derive --taproot`'s outputKey). Prints {\"valid\": true|false}.\n\nWith --mode ecdsa the curve is secp256k1 (--curve may be left out) and the check is libsecp256k1's secp256k1_ecdsa_verify over the digest that --hash makes of the message file (keccak256 by default, sha256d, or none for a 32-byte digest file: the same choice `sign` was given). --public-key is the 33-byte compressed key: `sign`'s publicKey, or the wallet key with the same --path. --signature takes r || s (64 bytes, `sign`'s signature), r || s || v (65 bytes, v the recovery id 0 or 1, which must then recover the key too, as Ethereum's ecrecover does) or DER (`sign`'s der; strict DER only). A high s (above n/2) is invalid, as in libsecp256k1, Bitcoin's standardness rule and Ethereum's EIP-2: the low-s form n − s is the one that verifies.",
            examples: [
                "share-recovery verify --curve secp256k1 --public-key \"$KEY\" --message-file msg.bin --signature \"$SIG\" --path m/0/1 --taproot",
                "share-recovery verify --curve secp256k1 --public-key \"$OUTPUT_KEY\" --message-file sighash.bin --signature \"$SIG\"",
                "share-recovery verify --curve secp256k1 --public-key \"$KEY\" --message-file msg.bin --signature \"$SIG\"",
                "share-recovery verify --curve secp256k1 --mode rfc9591 --public-key \"$KEY\" --message-file msg.bin --signature \"$SIG\"",
                "share-recovery verify --curve ed25519 --public-key \"$KEY\" --message-file msg.bin --signature \"$SIG\"",
                "share-recovery verify --mode ecdsa --public-key \"$KEY\" --message-file tx-payload.bin --signature \"$SIG\"",
                "share-recovery verify --mode ecdsa --public-key \"$WALLET_KEY\" --path m/0/1 --message-file sighash-preimage.bin --hash sha256d --signature \"$DER\"",
            ]))

    @Option(help: "secp256k1 or ed25519 (--mode ecdsa implies secp256k1).") var curve: Curve?
    @Option(help: "bip340, rfc9591 or ecdsa (default: bip340 on secp256k1, rfc9591 on ed25519).")
    var mode: SignatureMode?
    @Option(help: "With --mode ecdsa: keccak256 (default), sha256d or none, as the signature was made.")
    var hash: MessageHash?
    @Option(help: "The public key, hex (33 bytes on secp256k1, or a 32-byte x-only key in mode bip340; 32 on ed25519).")
    var publicKey: String
    @Option(help: "The file whose bytes were signed.") var messageFile: String
    @Option(help: "The signature, hex (mode ecdsa: r || s, r || s || v or DER).") var signature: String
    @OptionGroup var tweakOptions: TweakOptions

    func run() throws {
        if mode == .ecdsa { return try verifyECDSA() }
        guard hash == nil else { throw CLIError.usage(MessageHash.frostRefusal) }
        guard let curve else {
            throw CLIError.usage(
                "give the key's --curve (secp256k1 or ed25519), or --mode ecdsa, which implies secp256k1")
        }
        let (mode, tweaks) = try tweakOptions.checked(mode: mode?.frost, curve: curve)
        guard let keyBytes = Hex.decode(publicKey.lowercased()) else {
            throw CLIError.usage("--public-key must be hex")
        }
        guard let signatureBytes = Hex.decode(signature.lowercased()) else {
            throw CLIError.usage("--signature must be hex")
        }
        let xOnly = curve == .secp256k1 && mode == .bip340 && keyBytes.count == 32
        if xOnly, !tweaks.isEmpty {
            throw CLIError.usage("--path and --taproot derive from the 33-byte wallet key, not from an x-only key")
        }
        let key = try mappingCryptoErrors {
            try xOnly ? Point(xOnly: keyBytes) : Point(rawRepresentation: keyBytes, curve: curve)
        }
        let signingKey = try tweaks.isEmpty ? key : tweaks.apply(to: key).signingKey
        let message = try Files.read(messageFile)
        let valid = SignatureVerifier.verify(
            signature: signatureBytes, message: message, publicKey: signingKey, mode: mode)
        Terminal.output(JSONWriter.write(.object([("valid", .bool(valid))])))
        guard valid else {
            throw CLIError(
                code: "invalidSignature",
                message: "the signature does not verify under this public key (\(tweaks)) in mode \(mode)",
                isUsage: false)
        }
    }
}

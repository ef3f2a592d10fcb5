import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

// `sign --mode ecdsa` and `verify --mode ecdsa`: threshold ECDSA by DKLs23 (docs/formats.md §12,
// docs/ecdsa.md), offline or with a reference server's custodian, and its check by libsecp256k1's
// ordinary ECDSA verifier.

/// What `--mode ecdsa` refuses in both commands.
private enum ECDSAUsage {
    static let taproot =
        "--taproot is a BIP-341 tweak for Schnorr signatures (mode bip340); mode ecdsa signs under the wallet key, or under its child with --path"
}

extension SignCommand {
    /// Every signer's role in this process: the pair setups first (they depend on the pair of
    /// shares only, so they are made here and dropped afterwards), then the three rounds. With
    /// `--server`, the device's share and the server's custodian sign.
    func signECDSA() async throws {
        guard !tweakOptions.taproot else { throw CLIError.usage(ECDSAUsage.taproot) }
        if server != nil { return try await signECDSAWithServer() }
        guard store == nil, userId == nil, tokenFile == nil, passcodeFile == nil else {
            throw CLIError.usage("--user-id, --token-file, --store and --passcode-file go with --server")
        }
        guard !signingShares.isEmpty else {
            throw CLIError.usage("give each signer's share with --signing-share (t of them)")
        }
        // A path that does not parse is refused before any file is read.
        let path = try tweakOptions.tweaks().path
        let shares = try signingShares.map(Files.readShare)
        try Self.checkECDSASigners(shares)
        let digest = try (hash ?? .keccak256).digest(of: try Files.read(messageFile), file: messageFile)
        let setups = try ThresholdECDSA.pairSetups(shares: shares)
        let (signature, signingKey) = try ThresholdECDSA.sign(
            shares: shares, setups: setups, digest: digest, path: path)
        Self.printECDSA(signature, digest: digest, signingKey: signingKey)
    }

    /// The device's share (a file or its store's current share) signs with the server's custodian
    /// over their pair setup kept beside the share (docs/ecdsa.md "Kept between runs"). Without one,
    /// or when the server answers `pairSetupStale` or the signature aborts, one fresh setup is made,
    /// kept in its place, and signs once more; a second failure stops with the error.
    private func signECDSAWithServer() async throws {
        try DeviceShareSource.checkUsage(
            server: server, userId: userId, tokenFile: tokenFile, store: store, passcodeFile: passcodeFile,
            signingShares: signingShares.count, purpose: "sign")
        let path = try tweakOptions.tweaks().path
        let share: ShareRecord
        let place: KeptSetupPlace
        if let store, let passcodeFile {
            let opened = try await DeviceShareSource.opened(store: store, passcodeFile: passcodeFile)
            (share, place) = (opened.share, .store(opened.store))
        } else {
            (share, place) = (try Files.readShare(signingShares[0]), .file(besideShare: signingShares[0]))
        }
        guard share.curve == .secp256k1 else {
            throw CLIError.usage(
                ShareRecoveryError(
                    .invalidParameters, "mode ecdsa signs on secp256k1 only; ed25519 signs in mode rfc9591"))
        }
        let digest = try (hash ?? .keccak256).digest(of: try Files.read(messageFile), file: messageFile)
        // Checked above, before any file was read.
        let client = HTTPWalletClient(baseURL: server!, tokenProvider: try TokenFile.provider(tokenFile!))
        let kept = try await place.load(for: share)
        let signature: ECDSASignature
        do {
            signature = try await client.signECDSA(
                share: share, setup: kept, clientId: userId!, digest: digest, path: path
            ) { fresh in try await place.keep(fresh, for: share) }.signature
        } catch let error as ShareRecoveryError where error.code == .ecdsaCheckFailed || error.code == .pairSetupStale {
            // The setup kept last was discarded by the abort, or the server holds none for it.
            try? await place.forget()
            throw error
        }
        let signingKey = try DerivedKey(walletPublicKey: share.publicKey, path: path).publicKey
        Self.printECDSA(signature, digest: digest, signingKey: signingKey)
    }

    private static func printECDSA(_ signature: ECDSASignature, digest: [UInt8], signingKey: Point) {
        Terminal.output(
            JSONWriter.write(
                .object([
                    ("publicKey", .string(signingKey.hex)), ("mode", .string("ecdsa")),
                    ("digest", .string(Hex.encode(digest))), ("r", .string(Hex.encode(signature.r))),
                    ("s", .string(Hex.encode(signature.s))), ("recoveryId", .number(String(signature.recoveryId))),
                    ("signature", .string(Hex.encode(signature.compact))), ("der", .string(Hex.encode(signature.der))),
                ])))
    }

    /// The refusals FROST signing gives, with the same codes (so `sign`'s hints apply): a curve
    /// without ECDSA is a usage error; shares of two sets, one party twice or a count other than t
    /// are `invalidParameters`. DKLs23 signs with exactly t signers.
    private static func checkECDSASigners(_ shares: [ShareRecord]) throws {
        let first = shares[0]
        guard first.curve == .secp256k1 else {
            throw CLIError.usage(
                ShareRecoveryError(
                    .invalidParameters, "mode ecdsa signs on secp256k1 only; ed25519 signs in mode rfc9591"))
        }
        if let odd = shares.first(where: { !$0.isSameSet(as: first) }), let mismatch = odd.setMismatch(with: first) {
            let reason = "\(mismatch): every signer needs a share of one wallet's current signing set"
            throw ShareRecoveryError(.invalidParameters, reason, party: odd.partyIndex)
        }
        if Set(shares.map(\.partyIndex)).count < shares.count {
            throw ShareRecoveryError(.invalidParameters, "two shares of one party; each signer signs once")
        }
        guard shares.count == first.threshold else {
            throw ShareRecoveryError(
                .invalidParameters,
                "\(shares.count) signers; this \(first.threshold)-of-\(first.parties) set needs exactly \(first.threshold) in mode ecdsa, which signs with t parties"
            )
        }
    }
}

extension VerifyCommand {
    /// libsecp256k1's `secp256k1_ecdsa_verify` over the digest, which refuses a high s.
    func verifyECDSA() throws {
        if let curve, curve != .secp256k1 {
            throw CLIError.usage("--mode ecdsa verifies secp256k1 keys; leave out --curve \(curve)")
        }
        guard !tweakOptions.taproot else { throw CLIError.usage(ECDSAUsage.taproot) }
        let path = try tweakOptions.tweaks().path
        guard let keyBytes = Hex.decode(publicKey.lowercased()) else {
            throw CLIError.usage("--public-key must be hex")
        }
        guard keyBytes.count == 33 else {
            throw CLIError.usage(
                "--public-key in mode ecdsa is a 33-byte compressed secp256k1 key (sign's publicKey, or the wallet key with --path); it has \(keyBytes.count) bytes"
            )
        }
        guard let signatureBytes = Hex.decode(signature.lowercased()) else {
            throw CLIError.usage("--signature must be hex")
        }
        let key = try mappingCryptoErrors { try Point(rawRepresentation: keyBytes, curve: .secp256k1) }
        let signingKey: Point
        do {
            signingKey = path.isRoot ? key : try DerivedKey(walletPublicKey: key, path: path).publicKey
        } catch {
            throw CLIError.usage(error)
        }
        let hash = self.hash ?? .keccak256
        let digest = try hash.digest(of: try Files.read(messageFile), file: messageFile)
        let refusal = Self.ecdsaRefusal(signatureBytes, digest: digest, key: signingKey, hash: hash)
        Terminal.output(JSONWriter.write(.object([("valid", .bool(refusal == nil))])))
        if let refusal { throw CLIError(code: "invalidSignature", message: refusal, isUsage: false) }
    }

    /// Why the signature does not verify, nil when it does. Taken: `r || s` (64 bytes), `r || s || v`
    /// (65, v the recovery id 0 or 1, which must then recover the key too) and strict DER.
    private static func ecdsaRefusal(_ bytes: [UInt8], digest: [UInt8], key: Point, hash: MessageHash) -> String? {
        let parsed: ECDSASignature
        let highS: Bool
        do {
            switch bytes.count {
            case 64, 65:
                if bytes.count == 65, bytes[64] > 1 {
                    return
                        "v (the 65th byte) is \(bytes[64]); r || s || v takes the recovery id 0 or 1 (Ethereum's 27 and 28 are 0 and 1)"
                }
                parsed =
                    try bytes.count == 64 ? ECDSASignature(compact: bytes, recoveryId: 0) : .init(recoverable: bytes)
                highS = parsed.s != Array(bytes[32..<64])
            default:
                parsed = try ECDSASignature(der: bytes, recoveryId: 0)
                // The DER was strict, so only a normalised s can make it read back otherwise.
                highS = parsed.der != bytes
            }
        } catch let error as ShareCryptoError {
            return
                "not an ECDSA signature (64-byte r || s, 65-byte r || s || v, or strict DER): \(error.code): \(error.reason)"
        } catch {
            return "not an ECDSA signature: \(error)"
        }
        if highS {
            return
                "s is above n/2 (a high s): like libsecp256k1, Bitcoin's standardness rule and Ethereum's EIP-2, this verifier takes only the low-s form n − s, which `sign` prints"
        }
        guard parsed.isValid(digest: digest, publicKey: key) else {
            return "the signature does not verify under this public key over the --hash \(hash.rawValue) digest"
        }
        if bytes.count == 65, (try? parsed.recoverPublicKey(digest: digest)) != key {
            return
                "r and s verify, but v = \(bytes[64]) recovers another key (ecrecover would name another address): the recovery id is the other one"
        }
        return nil
    }
}

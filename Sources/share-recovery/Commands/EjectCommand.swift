import ArgumentParser
import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// `eject`: the one command that rebuilds a wallet's full private key (docs/eject.md).
struct EjectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eject", abstract: "Rebuild the wallet's FULL PRIVATE KEY to take it to another wallet (eject).",
        discussion: helpText(
            "This is the one command that rebuilds the full private key. Whoever reads the output owns the wallet.\n\nWith --server the server's custodian releases its signing share once, for a token of purpose eject (`otp start --purpose eject`, then `otp verify`), and afterwards refuses to sign for the wallet (walletEjected). Without --server the key is rebuilt offline, for disaster recovery without the provider: from the wallet's signing shares (t of them: `recover --out` or `kit recover` write a set), or from a user backup share (`decrypt --reveal-secret`) with --custodian-shares and --custodian-key.\n\nThe key goes to --out (a new file, mode 0600), or to stdout only with --reveal-secret. Formats: secp256k1 as 32-byte hex, WIF (compressed; --network testnet for the 0xef version byte) and the BIP-32 root xprv (BIP-328's chain code, so the same child keys as `derive`); ed25519 as the 32-byte little-endian scalar, which is NOT an RFC 8032 seed (docs/eject.md says which wallets take a scalar). stdout without --reveal-secret gets only public facts.",
            examples: [
                "share-recovery eject --server http://127.0.0.1:8080 --user-id user-1 --token-file eject.token --signing-share device-share.json --out wallet-key.json",
                "share-recovery eject --server http://127.0.0.1:8080 --user-id user-1 --token-file eject.token --store device --passcode-file passcode.txt --out wallet-key.json",
                "share-recovery eject --signing-share recovered/share-1.json --signing-share recovered/share-2.json --out wallet-key.json",
                "share-recovery eject --signing-share backup-share.json --custodian-shares backup/custodian-backup-shares.json --custodian-key custodian/custodian.key --method password --out wallet-key.json",
                "share-recovery eject --signing-share recovered/share-1.json --signing-share recovered/share-2.json --network testnet --reveal-secret",
            ]))

    @Option(
        name: .customLong("signing-share"),
        help: "A share file of the wallet, with its secret (repeat: t of one set; with --server: the device's one).")
    var signingShares: [String] = []
    @Option(help: "A reference server whose custodian releases its share (then give only the device's share).")
    var server: String?
    @Option(help: "With --server: the user id.") var userId: String?
    @Option(help: "With --server: a file with a token of purpose eject.") var tokenFile: String?
    @Option(help: "With --server, instead of --signing-share: the device's share store (its current share).") var store:
        String?
    @Option(help: "With --store: the store's passcode file.") var passcodeFile: String?
    @Option(help: "Offline, with one user backup share: a file with a JSON array of custodian backup share strings.")
    var custodianShares: String?
    @Option(help: "With --custodian-shares: the custodian's X25519 secret key file, 64 hex digits.") var custodianKey:
        String?
    @Option(help: "With --custodian-shares: the backup's method.") var method: BackupMethod?
    @Option(
        help: "WIF version byte for secp256k1: mainnet (0x80, the default) or testnet (0xef, also signet and regtest).")
    var network: String?
    @Option(help: "Write the key to this new file (mode 0600).") var out: String?
    @Flag(help: "Print the key on stdout instead of writing --out.") var revealSecret = false

    func run() async throws {
        try checkUsage()
        guard let network = EjectedKey.WIFNetwork(name: network ?? "mainnet") else {
            throw CLIError.usage("--network must be mainnet or testnet")
        }
        if let out, FileManager.default.fileExists(atPath: out) {
            throw CLIError.outputExists("\(out) exists; eject writes the key only to a new file")
        }
        Terminal.error("warning: eject rebuilds the FULL PRIVATE KEY of the wallet. Whoever reads it owns the wallet.")
        let key = try await rebuild()
        let text = try Self.keyJSON(key, network: network)
        if let out {
            try Files.write(text + "\n", to: out, secret: true)
            Terminal.error(
                "the private key is in \(out) (mode 0600); import it into the new wallet, then delete the file")
            Terminal.output(JSONWriter.write(Self.publicJSON(key, out: out)))
        } else {
            Terminal.output(text)
        }
    }

    private func checkUsage() throws {
        if out == nil, !revealSecret {
            throw CLIError.usage("give --out FILE for the key (mode 0600), or --reveal-secret to print it")
        }
        if out != nil, revealSecret { throw CLIError.usage("give --out or --reveal-secret, not both") }
        try DeviceShareSource.checkUsage(
            server: server, userId: userId, tokenFile: tokenFile, store: store, passcodeFile: passcodeFile,
            signingShares: signingShares.count, purpose: "eject")
        if server != nil, custodianShares != nil || custodianKey != nil || method != nil {
            throw CLIError.usage(
                "--custodian-shares, --custodian-key and --method are for an offline eject (without --server)")
        }
        let custodianOptions = [custodianShares == nil, custodianKey == nil, method == nil]
        if Set(custodianOptions).count != 1 {
            throw CLIError.usage("--custodian-shares, --custodian-key and --method go together")
        }
        if custodianShares != nil, signingShares.count != 1 {
            throw CLIError.usage(
                "with --custodian-shares give one --signing-share: the user backup share (`decrypt --reveal-secret`)")
        }
        if server == nil, signingShares.isEmpty {
            throw CLIError.usage("give the wallet's shares with --signing-share (t of one set)")
        }
    }

    /// `--network` picks a WIF version byte, which only secp256k1 keys have; refused on ed25519
    /// before the key is rebuilt (or the server releases its share), not silently ignored.
    private func checkNetwork(_ curve: Curve) throws {
        if let network, curve == .ed25519 {
            throw CLIError.usage(
                "--network \(network) is for secp256k1 keys (their WIF version byte); an ed25519 key has no network: leave --network out"
            )
        }
    }

    private func rebuild() async throws -> EjectedKey {
        if let server {
            // Checked in checkUsage: with --server, userId and tokenFile are set.
            let share: ShareRecord
            if let store, let passcodeFile {
                share = try await DeviceShareSource.current(store: store, passcodeFile: passcodeFile)
            } else {
                share = try Files.readShare(signingShares[0])
            }
            try checkNetwork(share.curve)
            return try await HTTPWalletClient(baseURL: server, tokenProvider: try TokenFile.provider(tokenFile ?? ""))
                .eject(share: share, clientId: userId ?? "")
        }
        var shares = try signingShares.map(Files.readShare)
        try checkNetwork(shares[0].curve)
        if let custodianShares, let custodianKey, let method {
            let selector = CustodianShareSelector(custodianKey: try Files.readCustodianKey(custodianKey))
            shares += try selector.select(
                for: shares[0], method: method, candidates: try Files.readCustodianShares(custodianShares)
            ).get()
        }
        return try KeyEjection.rebuildKeyForEject(shares)
    }

    /// The key file: public facts, then the key in every form a wallet imports for its curve.
    static func keyJSON(_ key: EjectedKey, network: EjectedKey.WIFNetwork) throws -> String {
        var members: [(key: String, value: JSONValue)] = [
            ("warning", .string("the wallet's full private key: whoever reads it owns the wallet"))
        ]
        members += publicMembers(key)
        // Text only for the moment it takes to write it out (a String cannot be wiped).
        members.append(("privateKeyHex", .string(String(decoding: key.privateKeyHex.revealedBytes(), as: UTF8.self))))
        switch key.curve {
        case .secp256k1:
            members.append(
                ("wif", .string(String(decoding: try key.wif(network: network).revealedBytes(), as: UTF8.self))))
            members.append(("wifNetwork", .string(network.name)))
            members.append(("wifCompressed", .bool(true)))
            members.append(
                (
                    "xprv",
                    .string(
                        String(decoding: try key.extendedPrivateKey(network: network).revealedBytes(), as: UTF8.self))
                ))
        case .ed25519:
            members.append(("privateKeyForm", .string("ed25519 scalar, 32 bytes little-endian; not an RFC 8032 seed")))
        }
        return JSONWriter.write(.object(members))
    }

    static func publicJSON(_ key: EjectedKey, out: String) -> JSONValue {
        .object(publicMembers(key) + [("out", .string(out))])
    }

    private static func publicMembers(_ key: EjectedKey) -> [(key: String, value: JSONValue)] {
        [
            ("curve", .string(key.curve.name)),
            ("walletId", .string(key.walletId)), ("publicKey", .string(key.publicKey.hex)),
        ]
    }
}

extension EjectedKey.WIFNetwork {
    /// `mainnet` or `testnet`.
    init?(name: String) {
        switch name {
        case "mainnet": self = .mainnet
        case "testnet": self = .testnet
        default: return nil
        }
    }

    var name: String { self == .mainnet ? "mainnet" : "testnet" }
}

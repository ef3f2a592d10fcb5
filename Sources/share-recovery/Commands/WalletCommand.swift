import ArgumentParser
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// `wallet create`: a 2-of-2 wallet born by DKG with the reference server as the custodian party.
struct WalletCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wallet", abstract: "Create a wallet with a reference server as its second party (DKG).",
        discussion: helpText(
            "The wallet is 2-of-2: this device is party 1, the server's custodian party 2. Neither ever holds the key. Calls need a token of purpose sign (`otp start --purpose sign`, then `otp verify`).",
            examples: [
                "share-recovery wallet create --server http://127.0.0.1:8080 --user-id user-1 --token-file sign.token --curve secp256k1 --wallet-id w-1 --out device-share.json"
            ]),
        subcommands: [Create.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the DKG with the server; write this device's signing share to --out (0600).",
            discussion: helpText(
                "Runs docs/formats.md §10 with the server: both parties prove knowledge of their constant terms, exchange sealed sub-shares and check them against the commitments; the device keeps its share only after the server reported the same public key. A secp256k1 wallet's device also makes its ECDSA pair setup with the custodian and keeps it, sealed for the share, in --out.pairsetup (mode 0600; `sign --server --mode ecdsa` uses it). Prints the share's public description. Store it with `store init --share`, back it up with `methods add`, sign with `sign --server`. A user has one wallet: a second create answers conflict.",
                examples: [
                    "share-recovery wallet create --server http://127.0.0.1:8080 --user-id user-1 --token-file sign.token --curve ed25519 --wallet-id w-2 --out device-share.json"
                ]))

        @OptionGroup var serverOptions: ServerOptions
        @Option(help: "secp256k1 or ed25519.") var curve: Curve
        @Option(help: "The wallet id (1…255 UTF-8 bytes).") var walletId: String
        @Option(help: "Where to write this device's signing share (with its secret, mode 0600).") var out: String

        func run() async throws {
            let client = HTTPWalletClient(baseURL: serverOptions.server, tokenProvider: try serverOptions.tokens())
            let share = try await client.createWallet(clientId: serverOptions.userId, walletId: walletId, curve: curve)
            try Files.write(share.json(includingSecret: true) + "\n", to: out, secret: true)
            try await KeptSetupPlace.file(besideShare: out).make(
                for: share, client: client, clientId: serverOptions.userId)
            Terminal.output(share.json())
        }
    }
}

import ArgumentParser
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// `custodian …`: the custodian's X25519 sealing key, and registering a wallet's custodian share with a server.
struct CustodianCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "custodian", abstract: "Custodian key management.",
        discussion: helpText(
            "The custodian (party 2) keeps an X25519 key pair: custodian backup shares are sealed to its public key, and only its secret key opens them during recovery.",
            examples: [
                "share-recovery custodian keypair --out custodian",
                "share-recovery help custodian register",
            ]), subcommands: [Keypair.self, Register.self])

    struct Keypair: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the custodian's X25519 key pair: DIR/custodian.pub and DIR/custodian.key (hex).",
            discussion: helpText(
                "DIR/custodian.key holds the secret key (64 hex digits, mode 0600): `select`, `recover` and `kit recover` read it with --custodian-key. DIR/custodian.pub is the public key that `backup` seals to (--custodian-pub).",
                examples: [
                    "share-recovery custodian keypair --out custodian"
                ]))

        @Option(help: "Output directory.") var out: String

        func run() throws {
            let pair = SealingKeyPair()
            try Files.makeDirectory(out)
            try Files.write(Hex.encode(pair.publicKey) + "\n", to: "\(out)/custodian.pub")
            try Files.write(Hex.encode(pair.secretKey.revealedBytes()) + "\n", to: "\(out)/custodian.key", secret: true)
            Terminal.output(JSONWriter.write(.object([("publicKey", .string(Hex.encode(pair.publicKey)))])))
        }
    }

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Seal a signing share to a reference server's custodian key and register it for a client (integrator call).",
            discussion: helpText(
                "An integrator call: hands the reference server the custodian's signing share of a client's wallet (party 2's share from `keygen`), sealed to the server's custodian key, so the server can later take part in backup and recovery for that client. --webhook-secret-file is the integrator's shared secret (`serve` generates <database>.webhook-secret on first start with SQLite).",
                examples: [
                    "share-recovery custodian register --server http://127.0.0.1:8080 --client-id user-1 --share wallet/share-2.json --webhook-secret-file share-recovery.sqlite.webhook-secret"
                ]))
        @Option(help: "The reference server's base URL.") var server: String
        @Option(help: "The client (user) id.") var clientId: String
        @Option(help: "The custodian's signing share JSON file (with secret).") var share: String
        @Option(help: "The integrator's webhook secret file.") var webhookSecretFile: String

        func run() async throws {
            let record = try Files.readShare(share)
            try await ReferenceServerClient(base: server).registerCustodianShare(
                record, clientId: clientId, webhookSecret: try Files.readWebhookSecret(webhookSecretFile))
            Terminal.output(JSONWriter.write(.object([("registered", record.jsonValue(includingSecret: false))])))
        }
    }
}

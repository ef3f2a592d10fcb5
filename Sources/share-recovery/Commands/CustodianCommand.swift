import ArgumentParser
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// `custodian …`: the custodian's X25519 sealing key, and registering a wallet's custodian share with a server.
struct CustodianCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "custodian", abstract: "Custodian key management.", subcommands: [Keypair.self, Register.self])

    struct Keypair: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the custodian's X25519 key pair: DIR/custodian.pub and DIR/custodian.key (hex).")

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
            abstract: "Seal a signing share to a reference server's custodian key and register it for a client (integrator call).")
        @Option(help: "The reference server's base URL.") var server: String
        @Option(help: "The client (user) id.") var clientId: String
        @Option(help: "The custodian's signing share JSON file (with secret).") var share: String
        @Option(help: "The integrator's webhook secret file.") var webhookSecretFile: String

        func run() async throws {
            let record = try Files.readShare(share)
            try await ReferenceServerClient(base: server).registerCustodianShare(
                record, clientId: clientId, webhookSecret: try Files.readSecretLine(webhookSecretFile))
            Terminal.output(JSONWriter.write(.object([("registered", record.jsonValue(includingSecret: false))])))
        }
    }
}

import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `custodian keypair`: the custodian's X25519 sealing key.
struct CustodianCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "custodian", abstract: "Custodian key management.", subcommands: [Keypair.self])

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
}

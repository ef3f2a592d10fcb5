import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `keygen`: a development dealer for a fresh signing set.
struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a t-of-n signing set (development and demos): DIR/share-<i>.json with secrets.")

    @Option(help: "secp256k1 or ed25519.") var curve: Curve
    @Option(help: "The wallet id (1…255 UTF-8 bytes).") var walletId: String
    @Option(help: "Threshold t.") var threshold = 2
    @Option(help: "Parties n.") var parties = 2
    @Option(help: "Output directory.") var out: String

    func run() throws {
        let shares = try KeyGeneration.generate(curve: curve, walletId: walletId, threshold: threshold, parties: parties)
        try Files.makeDirectory(out)
        for share in shares {
            try Files.write(share.json(includingSecret: true) + "\n", to: "\(out)/share-\(share.partyIndex).json", secret: true)
        }
        Terminal.output(JSONWriter.write(.array(shares.map { $0.jsonValue(includingSecret: false) })))
    }
}

import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `keygen`: a development dealer for a fresh signing set.
struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Development tool: a dealer makes a t-of-n signing set, DIR/share-<i>.json with secrets.",
        discussion: helpText(
            "DEVELOPMENT TOOL: this is a dealer. One process draws the whole wallet key and splits it, so the key exists, briefly, in one place (FORMATS.md §10 allows a dealer only as a labelled development tool). Use it for tests, demos and trying the other commands.\n\nWrites DIR/share-<i>.json, one §4 signing share per party with its secret (mode 0600), and prints the public descriptions as JSON. Party 1 is the user's device, party 2 the custodian.",
            examples: [
                "share-recovery keygen --curve secp256k1 --wallet-id w-1 --out wallet",
                "share-recovery keygen --curve ed25519 --wallet-id w-2 --threshold 2 --parties 3 --out wallet3",
            ]))

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
        Terminal.error(
            "note: keygen is a development tool: this process drew the whole wallet key (a dealer, FORMATS.md §10); "
                + "production wallets are created by distributed key generation, so no process ever holds the key")
        Terminal.output(JSONWriter.write(.array(shares.map { $0.jsonValue(includingSecret: false) })))
    }
}

import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `keygen`: a new signing set, by distributed key generation (`--dkg`) or by a development dealer.
struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a t-of-n signing set, DIR/share-<i>.json with secrets: by DKG (--dkg) or a development dealer.",
        discussion: helpText(
            "With --dkg the parties create the key together (docs/formats.md §10): each draws its own polynomial, proves knowledge of its constant term, and sends every other party a private sub-share; each checks everything it receives and combines its own share. No value ever holds the whole key. All n parties run here, in one process, through the same messages a network would carry; to create a wallet with the reference server as the custodian party, see the demo.\n\nWithout --dkg this is a DEVELOPMENT TOOL: a dealer. One process draws the whole wallet key and splits it, so the key exists, briefly, in one place (docs/formats.md §10 allows a dealer only as a labelled development tool). Use it for tests and trying the other commands.\n\nEither way it writes DIR/share-<i>.json, one §4 signing share per party with its secret (mode 0600), and prints the public descriptions as JSON. Party 1 is the user's device, party 2 the custodian.",
            examples: [
                "share-recovery keygen --dkg --curve secp256k1 --wallet-id w-1 --threshold 2 --parties 2 --out wallet",
                "share-recovery keygen --dkg --curve ed25519 --wallet-id w-2 --threshold 2 --parties 3 --out wallet3",
                "share-recovery keygen --curve secp256k1 --wallet-id dev-1 --out dev-wallet",
            ]))

    @Flag(help: "Distributed key generation: no dealer, no process holds the key (docs/formats.md §10).")
    var dkg = false
    @Option(help: "secp256k1 or ed25519.") var curve: Curve
    @Option(help: "The wallet id (1…255 UTF-8 bytes).") var walletId: String
    @Option(help: "Threshold t.") var threshold = 2
    @Option(help: "Parties n.") var parties = 2
    @Option(help: "Output directory.") var out: String

    func run() throws {
        let shares: [ShareRecord]
        do {
            if dkg {
                shares = try DistributedKeyGeneration.run(
                    parameters: DKGParameters(curve: curve, walletId: walletId, threshold: threshold, parties: parties))
            } else {
                shares = try KeyGeneration.generate(
                    curve: curve, walletId: walletId, threshold: threshold, parties: parties)
            }
        } catch {
            // keygen reads no file: parameters it refuses are the command line's.
            throw error.code == .invalidParameters ? CLIError.usage(error) : error
        }
        try Files.writeSigningSet(shares, to: out)
        if !dkg {
            Terminal.error(
                "note: keygen without --dkg is a development tool: this process drew the whole wallet key (a dealer, docs/formats.md §10); "
                    + "use --dkg, where no process ever holds the key")
        }
        Terminal.output(JSONWriter.write(.array(shares.map { $0.jsonValue(includingSecret: false) })))
    }
}

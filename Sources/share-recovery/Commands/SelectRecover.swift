import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `select`: which custodian share completes a cipherText's backup share.
struct Select: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Select the custodian backup share(s) for a cipherText (docs/formats.md §7), with per-candidate reasons.",
        discussion: helpText(
            "Decrypts the cipherText, then applies docs/formats.md §7 to the candidates: --custodian-shares is a file holding a JSON array of §6 strings (as `backup` writes to custodian-backup-shares.json); --custodian-key is the custodian's secret key file (custodian.key). Each candidate's reason goes to stderr; the chosen shares' public descriptions to stdout.",
            examples: [
                "share-recovery select --cipher-text backup/cipherText --secret-file password.txt --custodian-shares backup/custodian-backup-shares.json --custodian-key custodian/custodian.key"
            ]))

    @Option(help: "The cipherText file.") var cipherText: String
    @Option(help: "The secret file.") var secretFile: String
    @Option(
        help: "A file with a JSON array of custodian backup share strings (custodian-backup-shares.json from `backup`)."
    ) var custodianShares: String
    @Option(
        help: "A file with the custodian's X25519 secret key, 64 hex digits (custodian.key from `custodian keypair`).")
    var custodianKey: String

    func run() throws {
        let envelope = try CipherText(base64: try Files.readTrimmedLine(cipherText))
        let userShare = try envelope.decrypt(secret: try Files.readSecret(secretFile, method: envelope.method))
        let selector = CustodianShareSelector(custodianKey: try Files.readCustodianKey(custodianKey))
        let outcome = selector.select(
            for: userShare, method: envelope.method, candidates: try Files.readCustodianShares(custodianShares))
        for report in outcome.reports { Terminal.error("candidate \(report)") }
        let chosen = try outcome.get()
        Terminal.output(JSONWriter.write(.array(chosen.map { $0.jsonValue(includingSecret: false) })))
    }
}

/// `recover`: offline recovery with both roles in this process.
struct Recover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Recover a new signing set offline (both roles here): DIR/share-<i>.json, statuses on stderr.",
        discussion: helpText(
            "Both roles in this process: decrypts the user's backup share, selects the custodian's (§7), reshares them into a new signing set of the next generation and writes DIR/share-<i>.json (with secrets, mode 0600). The public key stays the same. Statuses (readingShare … done, docs/formats.md §8) go to stderr as a live line, or as JSON lines with --json. Nothing is written unless every step succeeds.",
            examples: [
                "share-recovery recover --cipher-text backup/cipherText --secret-file password.txt --custodian-shares backup/custodian-backup-shares.json --custodian-key custodian/custodian.key --out recovered",
                "share-recovery recover --cipher-text backup/cipherText --secret-file password.txt --custodian-shares backup/custodian-backup-shares.json --custodian-key custodian/custodian.key --out recovered --json",
            ]))

    @Option(help: "The cipherText file.") var cipherText: String
    @Option(help: "The secret file.") var secretFile: String
    @Option(
        help: "A file with a JSON array of custodian backup share strings (custodian-backup-shares.json from `backup`)."
    ) var custodianShares: String
    @Option(
        help: "A file with the custodian's X25519 secret key, 64 hex digits (custodian.key from `custodian keypair`).")
    var custodianKey: String
    @Option(help: "Output directory for the new signing set.") var out: String
    @OptionGroup var progressOptions: ProgressOptions

    func run() async throws {
        let text = try Files.readTrimmedLine(cipherText)
        let method = try CipherText(base64: text).method
        let secret = try Files.readSecret(secretFile, method: method)
        let shares = try Files.readCustodianShares(custodianShares)
        let key = try Files.readCustodianKey(custodianKey)
        let progress = ProgressReporter(json: progressOptions.json)
        let output = out
        do {
            let recovered = try await OfflineRecovery.recover(
                cipherText: text, secret: secret, custodianShares: shares, custodianKey: key,
                store: { try Files.writeSigningSet($0, to: output) }, progress: progress.report)
            Terminal.output(JSONWriter.write(.array(recovered.map { $0.jsonValue(includingSecret: false) })))
        } catch {
            progress.failed(error)
            throw error
        }
    }
}

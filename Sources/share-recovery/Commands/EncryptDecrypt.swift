import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `encrypt`: a backup share record into a cipherText.
struct Encrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt a backup share (§4 JSON with secret) into a cipherText.",
        discussion: helpText(
            "--share must be a backup share with its secret (for example the output of `decrypt --reveal-secret`). --secret-file: UTF-8 text for password and recoveryCode; 32 raw bytes or 64 hex digits for the key-material methods. Argon2id parameters below opslimit 1 or memlimit 8 KiB are refused; the defaults (3, 65536 KiB) are the recommended ones.",
            examples: [
                "share-recovery encrypt --share backup-share.json --method recoveryCode --secret-file code.txt --out code.cipherText"
            ]))

    @Option(help: "The backup share JSON file.") var share: String
    @Option(help: "The backup method.") var method: BackupMethod
    @Option(help: "The secret file.") var secretFile: String
    @Option(help: "Output file for the base64 cipherText.") var out: String
    @OptionGroup var kdf: KDFOptions

    func run() throws {
        let record = try Files.readShare(share)
        let cipherText = try CipherText.encrypt(
            record, method: method, secret: try Files.readSecret(secretFile, method: method),
            argon2: try kdf.parameters(), keyId: kdf.keyId)
        try Files.write(cipherText.base64 + "\n", to: out)
        Terminal.output(JSONWriter.write(.object([("cipherText", .string(cipherText.base64))])))
    }
}

/// `decrypt`: a cipherText back into its share record.
struct Decrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decrypt a cipherText and print the share (§4 JSON); the secret only with --reveal-secret.",
        discussion: helpText(
            "The method (and so how --secret-file is read) comes from the cipherText's header. A wrong secret and a changed byte give the same error, `authenticationFailed`. Without --reveal-secret the output is the share's public description; with it, the output is a secret: redirect it to a file only you can read.",
            examples: [
                "share-recovery decrypt --cipher-text backup/cipherText --secret-file password.txt",
                "share-recovery decrypt --cipher-text backup/cipherText --secret-file password.txt --reveal-secret > backup-share.json",
            ]))

    @Option(help: "The cipherText file (base64, one trailing newline allowed).") var cipherText: String
    @Option(help: "The secret file.") var secretFile: String
    @Flag(help: "Include the secret share scalar in the output.") var revealSecret = false

    func run() throws {
        let envelope = try CipherText(base64: try Files.readTrimmedLine(cipherText))
        let record = try envelope.decrypt(secret: try Files.readSecret(secretFile, method: envelope.method))
        Terminal.output(record.json(includingSecret: revealSecret))
    }
}

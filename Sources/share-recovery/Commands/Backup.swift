import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `backup`: reshare a signing set into a backup set for one method.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back up a signing set: DIR/cipherText, DIR/custodian-backup-share.json, DIR/backup-share-<i>.json.")

    @Option(name: .customLong("signing-share"), help: "A signing share JSON file (repeat for t shares).")
    var signingShares: [String]
    @Option(help: "The backup method.") var method: BackupMethod
    @Option(help: "The secret: UTF-8 text (password, recoveryCode) or 32 raw bytes / 64 hex digits.")
    var secretFile: String
    @Option(help: "The custodian's X25519 public key (hex).") var custodianPub: String
    @Option(help: "Output directory.") var out: String
    @OptionGroup var kdf: KDFOptions

    func run() throws {
        let shares = try signingShares.map(Files.readShare)
        let secret = try Files.readSecret(secretFile, method: method)
        let custodianKey = try Files.readHexKey(custodianPub, count: 32)
        let result = try BackupCreation.create(
            signingShares: shares, method: method, secret: secret, custodianPublicKey: custodianKey,
            argon2: try kdf.parameters(), keyId: kdf.keyId)
        try Files.makeDirectory(out)
        try Files.write(result.cipherText.base64 + "\n", to: "\(out)/cipherText")
        let custodianJSON = result.custodianShares.map(\.json)
        // Party 2's share is "the" custodian backup share; every party's is also in the array file.
        try Files.write(custodianJSON[0] + "\n", to: "\(out)/custodian-backup-share.json")
        for share in result.custodianShares where share.partyIndex > 2 {
            try Files.write(share.json + "\n", to: "\(out)/custodian-backup-share-\(share.partyIndex).json")
        }
        try Files.write(
            JSONWriter.write(.array(custodianJSON.map(JSONValue.string))) + "\n", to: "\(out)/custodian-backup-shares.json")
        for share in result.backupSet {
            try Files.write(share.json() + "\n", to: "\(out)/backup-share-\(share.partyIndex).json")
        }
        Terminal.output(
            JSONWriter.write(
                .object([
                    ("method", .string(method.name)),
                    ("cipherText", .string(result.cipherText.base64)),
                    ("backupSet", .array(result.backupSet.map { $0.jsonValue(includingSecret: false) })),
                ])))
    }
}

import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `backup`: reshare a signing set into a backup set for one method.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back up a signing set: DIR/cipherText, DIR/custodian-backup-share.json, DIR/backup-share-<i>.json.",
        discussion: helpText(
            "Reshares t signing shares into a new backup set (docs/formats.md §3; the key is never rebuilt), encrypts the user's backup share into DIR/cipherText under the method's secret, and seals the custodian's backup share to --custodian-pub.\n\n--secret-file: for password and recoveryCode, the secret as UTF-8 text (one trailing newline ignored); for passkey, iCloud, googleDrive and cloudKey, 32 raw bytes or 64 hex digits of key material. Writes DIR/cipherText, DIR/custodian-backup-share.json, DIR/custodian-backup-shares.json (a JSON array, what `recover` reads) and DIR/backup-share-<i>.json (public descriptions).",
            examples: [
                "share-recovery backup --signing-share wallet/share-1.json --signing-share wallet/share-2.json --method password --secret-file password.txt --custodian-pub custodian/custodian.pub --out backup",
                "share-recovery backup --signing-share wallet/share-1.json --signing-share wallet/share-2.json --method cloudKey --secret-file cloud.key --key-id kms/key-7 --custodian-pub custodian/custodian.pub --out cloud-backup",
            ]))

    @Option(name: .customLong("signing-share"), help: "A signing share JSON file (repeat for t shares).")
    var signingShares: [String]
    @Option(help: "The backup method.") var method: BackupMethod
    @Option(help: "The secret: UTF-8 text (password, recoveryCode) or 32 raw bytes / 64 hex digits.")
    var secretFile: String
    @Option(
        help: "A file with the custodian's X25519 public key, 64 hex digits (custodian.pub from `custodian keypair`).")
    var custodianPub: String
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
            JSONWriter.write(.array(custodianJSON.map(JSONValue.string))) + "\n",
            to: "\(out)/custodian-backup-shares.json")
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

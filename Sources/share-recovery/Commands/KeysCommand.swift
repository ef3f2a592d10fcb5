import ArgumentParser
import Foundation
import Logging
import ShareRecovery
import ShareRecoveryServer

/// `keys …`: the reference server's master keys.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract:
            "Rotate the reference server's master key (in its database), or wrap its file with a PKCS#11 token's key.",
        discussion: helpText(
            "The master key file holds one key a line (64 hex digits): servers seal under the first and open under every one. A sealed value names its key by a key id (8 hex digits, as in the start log and /metrics). How to roll a new key out: docs/server.md, \"Rotating the master key\".",
            examples: [
                "share-recovery keys rotate --database share-recovery.sqlite --master-key-file share-recovery.sqlite.master-key",
                "SHARE_RECOVERY_PKCS11_PIN=… share-recovery keys wrap --master-key-file master.keys --output master.keys.wrapped --master-key-pkcs11-module /usr/lib/softhsm/libsofthsm2.so --master-key-pkcs11-token recovery --master-key-pkcs11-key master-wrap",
            ]),
        subcommands: [Rotate.self, Wrap.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-seal every value under the master key file's first key, beside running servers.",
            discussion: helpText(
                "Walks every sealed table (server_keys, signing_shares, wallet_devices, ecdsa_pair_setups, protocol_sessions, idempotency_keys) and re-seals each value sealed under another key of the file (or before key ids) under the first, one row per statement: a row a server changes meanwhile keeps the server's write, and an interrupted run is resumed by running it again. Run it once every server seals under the new key (its file has it first); afterwards a second walk counts what is left. Prints {\"keyId\", \"keys\", \"resealed\", \"remaining\", \"tables\": {<table>: {\"resealed\", \"changedMeanwhile\", \"remaining\", \"values\"}}}; exits 1 with rotationIncomplete when values remain under another key (a server still seals under it: fix its file, run again), and with unknownMasterKey naming the table, row and key id of a value sealed under a key the file lacks. Only when remaining is 0 may the old key leave the file (after the tokens, codes and idempotency answers it issued expired: docs/server.md).",
                examples: [
                    "share-recovery keys rotate --database share-recovery.sqlite --master-key-file share-recovery.sqlite.master-key",
                    "share-recovery keys rotate --database postgres://recovery@db.internal:5432/recovery --database-password-file db.password --database-tls verify-full --database-ca-file db-ca.pem --master-key-file master.keys",
                ]))

        @OptionGroup var database: ServerDatabaseOptions
        @Option(
            help:
                "File with the master keys, one a line: the key to seal under first, then every key values may still be sealed under."
        )
        var masterKeyFile: String?
        @Option(
            name: .customLong("master-key-pkcs11"),
            help: "The master key file wrapped by a PKCS#11 token's key (`keys wrap`), instead of --master-key-file.")
        var masterKeyPKCS11: String?
        @OptionGroup var pkcs11: MasterKeyPKCS11Options

        func run() async throws {
            var logger = Logger(label: "share-recovery-keys")
            logger.logLevel = .critical
            guard
                let masterKey = try pkcs11.masterKey(
                    plainFile: masterKeyFile, wrappedFile: masterKeyPKCS11, required: true)
            else { throw CLIError.usage("give --master-key-file or --master-key-pkcs11") }
            let result = try await rotateMasterKey(
                database.location, masterKey: masterKey, postgres: try database.settings(),
                logger: logger)
            for table in result.tables {
                Terminal.error(
                    "\(table.table): \(table.resealed) re-sealed, \(table.values) value(s), \(table.remaining) under another key"
                )
            }
            Terminal.output(
                JSONWriter.write(
                    .object([
                        ("keyId", .string(result.keyId)), ("keys", .number(String(result.keys))),
                        ("resealed", .number(String(result.resealed))),
                        ("remaining", .number(String(result.remaining))),
                        (
                            "tables",
                            .object(
                                result.tables.map { table in
                                    (
                                        table.table,
                                        .object([
                                            ("resealed", .number(String(table.resealed))),
                                            ("changedMeanwhile", .number(String(table.changedMeanwhile))),
                                            ("remaining", .number(String(table.remaining))),
                                            ("values", .number(String(table.values))),
                                        ])
                                    )
                                })
                        ),
                    ])))
            guard result.remaining == 0 else {
                throw MasterKeyRotationError(
                    .rotationIncomplete,
                    "\(result.remaining) value(s) are still sealed under another key than \(result.keyId): a server still seals under an old key (put the new key first in every server's file and restart it), or wrote while the walk passed; run keys rotate again, and keep the old key in the file until it reports 0"
                )
            }
        }
    }

    struct Wrap: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wrap a master key file with an AES key held by a PKCS#11 token.",
            discussion: helpText(
                "Checks the master key file as serve does (one key a line, 64 hex digits, the first seals), encrypts it with AES-GCM under the token's AES key (it never leaves the token) and writes the wrapped file (mode 0600, never over an existing file). serve and keys rotate read it with --master-key-pkcs11 and the same token options; the user PIN comes from --master-key-pkcs11-pin-file or $SHARE_RECOVERY_PKCS11_PIN. To rotate: add the new key to the plain file, wrap it again, and roll the wrapped file out (docs/server.md, \"Master key on a PKCS#11 token\"). Prints {\"output\"}.",
                examples: [
                    "share-recovery keys wrap --master-key-file master.keys --output master.keys.wrapped --master-key-pkcs11-module /usr/lib/softhsm/libsofthsm2.so --master-key-pkcs11-token recovery --master-key-pkcs11-key master-wrap --master-key-pkcs11-pin-file token.pin"
                ]))

        @Option(help: "The master key file to wrap, one key a line (64 hex digits), the sealing key first.")
        var masterKeyFile: String
        @Option(help: "Where to write the wrapped file (must not exist).")
        var output: String
        @OptionGroup var pkcs11: MasterKeyPKCS11Options

        func run() async throws {
            guard let location = try pkcs11.location() else {
                throw CLIError.usage(
                    "keys wrap needs --master-key-pkcs11-module, --master-key-pkcs11-token and --master-key-pkcs11-key")
            }
            guard !FileManager.default.fileExists(atPath: output) else {
                throw CLIError.file("\(output) exists: keys wrap never overwrites a file; choose another --output")
            }
            let wrapped = try wrapMasterKeyFile(masterKeyFile, location: location)
            try Files.write(wrapped, to: output, secret: true)
            Terminal.output(JSONWriter.write(.object([("output", .string(output))])))
        }
    }
}

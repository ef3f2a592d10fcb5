/// What to do about a failure: the `hint:` line the CLI prints under the `error:` line, chosen by
/// the command that failed and the error's stable code, since one code means different mistakes in
/// different commands (`inconsistentShares` is a wrong custodian key in `recover`, shares of two
/// sets in `eject`). The error says what happened (the library's words); the hint says what to do
/// with this tool's options. docs/newcomer-errors.md shows both for the common mistakes, and
/// NewcomerErrorTests holds the two to the same text.
enum ErrorHints {
    /// The hint for `code` raised by `command` (its path below the root, e.g. `device list`): the
    /// command's own hint for the code, else the code's. A server's `Retry-After` becomes the wait.
    static func hint(for code: String, command: String, retryAfterSeconds: Int? = nil) -> String? {
        if code == "rateLimited", let retryAfterSeconds {
            return
                "too many attempts in a short time: the server asks to wait \(retryAfterSeconds) seconds; run the command again after that."
        }
        return byCommand[command]?[code] ?? hints[code]
    }

    /// Where a code means another mistake in one command than elsewhere.
    private static let byCommand: [String: [String: String]] = [
        "sign": [
            "invalidParameters":
                "give t --signing-share files of one wallet's current signing set, one per party: the share-<i>.json files that one keygen, recover or `device add join` wrote.",
            "noMatchingShare": ejectedOrOtherUser,
            "ecdsaCheckFailed":
                "with --server the signature aborted over the kept pair setup and again over a fresh one, so this device or the server misbehaves; the setup was deleted, and the next `sign --server --mode ecdsa` makes a fresh one. If that aborts too, stop and report the error with the server's request ids.",
            "pairSetupStale":
                "the server keeps no pair setup for this share's set and generation, even a fresh one: sign with the device's current share (after a recovery, the store's; a removed device's share signs nothing).",
        ],
        "device list": ["noMatchingShare": ejectedOrOtherUser],
        "device remove": ["noMatchingShare": ejectedOrOtherUser, "unauthorized": singleUseToken("removeDevice")],
        "device add approve": ["noMatchingShare": ejectedOrOtherUser],
        "device add join": [
            "invalidKeyMaterial":
                "--key-file takes the file that `device add request` wrote on this device (64 hex digits, mode 0600); if it is lost or overwritten, run `device add request` again and have the approving device approve the new deviceKey.",
            "unauthorized": singleUseToken("addDevice"),
        ],
        "eject": [
            "inconsistentShares":
                "give t --signing-share files of one set of one wallet (the share-<i>.json files that one keygen, recover or `kit recover` wrote); with --custodian-shares, the custodian-backup-shares.json that the backup of this user share wrote, and if a reason says unsealFailed, the custodian.key beside the custodian.pub it used.",
            "noMatchingShare": ejectedOrOtherUser,
            "unauthorized": singleUseToken("eject"),
        ],
        "methods add": ["unauthorized": singleUseToken("addOrUpdateRecovery")],
        "methods delete": ["unauthorized": singleUseToken("deleteRecovery")],
    ]

    /// The server holds no wallet of this user: the usual reason is an earlier eject.
    private static let ejectedOrOtherUser =
        "the server holds no share of this wallet for --user-id: if the wallet was ejected (`eject --server`), the server no longer signs, lists or adds devices for it, so sign with the ejected key in the wallet it went to; otherwise check --user-id."

    /// A refused token for a command whose token is spent by its first use.
    private static func singleUseToken(_ purpose: String) -> String {
        "this command's token (purpose \(purpose)) is spent by its first use, and expires: if the error says it was already used or has expired, get a new one with `otp start --purpose \(purpose)` and `otp verify`."
    }

    private static let hints: [String: String] = [
        "authenticationFailed":
            "the secret does not open this cipherText, or the cipherText was changed: check that --secret-file holds exactly this backup's password or key (one trailing newline is ignored). Nothing was changed.",
        "outputExists":
            "this command never overwrites a file it writes secrets to: give a path that does not exist yet, or move the old file away first if it is no longer needed.",
        "fileError":
            "options ending in -file (and --share, --cipher-text, --custodian-key, …) take the path of a file, never the value itself: put a secret in a file first, e.g. printf '%s' 'my password' > password.txt; chmod 600 password.txt",
        "inconsistentShares":
            "a custodian share of this backup was found but cannot be used; if a reason says unsealFailed, --custodian-key is not the key this backup was sealed to: give the custodian.key beside the custodian.pub that `backup` used.",
        "noMatchingShare":
            "no custodian share belongs to this backup (another wallet, another method, or an older backup): give the custodian-backup-shares.json that the same `backup` wrote beside this cipherText.",
        "unavailable":
            "the server did not answer: check that it is running (share-recovery serve) and that --server is its URL, e.g. http://127.0.0.1:8080.",
        "timedOut":
            "the server did not answer in time: check that --server is its URL and that it is not overloaded, then try again; nothing was changed on this device.",
        "invalidKdfParameters":
            "use --kdf-ops 1…16 and --kdf-mem-kib 8…1048576 (KiB); the defaults, 3 and 65536, are the recommended strength, lower them only for tests.",
        "wrongPasscode":
            "the passcode file does not hold this store's passcode (one trailing newline is ignored); wrong tries count toward a lockout, see `share-recovery store status`.",
        "lockedOut":
            "too many wrong passcodes: the store refuses tries until the time shown by `share-recovery store status`.",
        "invalidKeyMaterial":
            "passkey, iCloud, googleDrive and cloudKey take 32 bytes of key material, a file of 32 raw bytes or 64 hex digits (e.g. head -c 32 /dev/urandom > cloud.key); a custodian key file holds 64 hex digits.",
        "malformedRecord":
            "--share and --signing-share take a share JSON file (share-<i>.json from keygen or recover), not a cipherText or another file.",
        "malformedCipherText":
            "--cipher-text takes the cipherText file that backup or encrypt wrote: one line of base64.",
        "unauthorized":
            "the server did not accept the token (the error says why: missing, expired, already used, or from another server): get a new one with `otp start` and `otp verify`.",
        "forbidden":
            "the token is of another purpose or user: get one of the purpose this command's help names (otp start --purpose …).",
        "rateLimited": "too many attempts in a short time: wait, then try again.",
        "walletEjected":
            "this wallet was ejected (docs/eject.md): its full private key was exported and the server no longer signs for it; import that key (`eject --out` wrote it) into the wallet you moved to and sign there.",
        "invalidTrustedProxy":
            "give --trusted-proxy the network of the proxies in front of this server in CIDR notation, e.g. 10.0.0.0/8, 192.0.2.10/32 or fd00::/8 (a bare address is one host), once per network; the address of the proxy itself, never of its clients.",
        "databaseNotMigrated":
            "run `share-recovery migrate --database` with the same database (and password and TLS options) and this release; on PostgreSQL `serve --migrate` does it at start, on SQLite starting `share-recovery serve --database` once does too. Then run this command again.",
        "schemaNewerThanBuild":
            "this database was migrated by a newer release: run that release's `share-recovery migrate` and servers; this release's servers still run on it while its migrations only added (docs/server.md, \"Migrations\").",
        "migrationInProgress":
            "another `share-recovery migrate` or `serve --migrate` holds the migration lock: wait until it has finished (its log, or pg_stat_activity with application_name share-recovery-server), then run this again; raise --database-lock-timeout to wait longer.",
        "operationInProgress":
            "another recovery, backup or method change of this wallet is running (another share-recovery process on this store, or another device at the server); nothing was changed: run the command again when it has finished.",
    ]
}

import Foundation
import ShareCrypto
import ShareRecovery
import Testing

/// The `share-recovery` binary, run as a user would.
@Suite("share-recovery CLI")
struct CLITests {
    static let statusLines = RecoveryStatus.sequence.enumerated().map { "status: \($1) [\($0 + 1)/8]" }

    /// keygen → custodian keypair → backup → decrypt → select → recover, on one curve and method;
    /// every run's output also goes to `transcript` when one is given.
    func story(curve: String, method: String, secret: Data, transcript: Transcript? = nil) throws -> (URL, CLIRun) {
        let dir = try CLIRunner.temporaryDirectory()
        try secret.write(to: dir.appendingPathComponent("secret"))
        var run = try CLIRunner.run(
            "share-recovery", ["keygen", "--curve", curve, "--wallet-id", "w-cli", "--out", "keys"], in: dir)
        transcript?.runs.append(run)
        #expect(run.status == 0, "\(run.stderr)")
        run = try CLIRunner.run("share-recovery", ["custodian", "keypair", "--out", "custodian"], in: dir)
        transcript?.runs.append(run)
        #expect(run.status == 0, "\(run.stderr)")
        run = try CLIRunner.run(
            "share-recovery",
            [
                "backup", "--signing-share", "keys/share-1.json", "--signing-share", "keys/share-2.json", "--method",
                method,
                "--secret-file", "secret", "--custodian-pub", "custodian/custodian.pub", "--out", "backup",
                "--kdf-ops", "1", "--kdf-mem-kib", "8",
            ], in: dir)
        transcript?.runs.append(run)
        #expect(run.status == 0, "\(run.stderr)")
        run = try CLIRunner.run(
            "share-recovery",
            [
                "recover", "--cipher-text", "backup/cipherText", "--secret-file", "secret", "--custodian-shares",
                "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key", "--out",
                "recovered",
            ], in: dir)
        transcript?.runs.append(run)
        return (dir, run)
    }

    @Test(arguments: ["secp256k1", "ed25519"], ["password", "cloudKey"])
    func backupAndRecoverThroughTheBinary(curve: String, method: String) throws {
        let secret = method == "password" ? Data("hunter2\n".utf8) : Data((0..<32).map { UInt8($0) })
        let (dir, run) = try story(curve: curve, method: method, secret: secret)
        #expect(run.status == 0, "\(run.stderr)")
        // Progress on stderr, exactly the §8 sequence (not a terminal, so plain lines).
        #expect(run.stderr.split(separator: "\n").map(String.init) == Self.statusLines)
        let old = try ShareRecord(
            json: String(contentsOf: dir.appendingPathComponent("keys/share-1.json"), encoding: .utf8))
        for index in 1...2 {
            let new = try ShareRecord(
                json: String(contentsOf: dir.appendingPathComponent("recovered/share-\(index).json"), encoding: .utf8))
            #expect(new.publicKey == old.publicKey)
            #expect(new.generation == old.generation + 1)
            #expect(new.setId != old.setId)
            #expect(new.kind == .signing && new.secret != nil)
            let attributes = try FileManager.default.attributesOfItem(
                atPath: dir.appendingPathComponent("recovered/share-\(index).json").path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
        }
    }

    @Test func decryptRevealsTheSecretOnlyWhenAsked() throws {
        let (dir, _) = try story(curve: "secp256k1", method: "password", secret: Data("pw".utf8))
        let hidden = try CLIRunner.run(
            "share-recovery", ["decrypt", "--cipher-text", "backup/cipherText", "--secret-file", "secret"], in: dir)
        #expect(hidden.status == 0)
        let record = try ShareRecord(json: hidden.stdout.trimmingCharacters(in: .newlines))
        #expect(record.secret == nil && record.kind == .backup)
        let shown = try CLIRunner.run(
            "share-recovery",
            ["decrypt", "--cipher-text", "backup/cipherText", "--secret-file", "secret", "--reveal-secret"], in: dir)
        #expect(try ShareRecord(json: shown.stdout.trimmingCharacters(in: .newlines)).secret != nil)
    }

    @Test func selectListsEveryCandidate() throws {
        let (dir, _) = try story(curve: "ed25519", method: "password", secret: Data("pw".utf8))
        let run = try CLIRunner.run(
            "share-recovery",
            [
                "select", "--cipher-text", "backup/cipherText", "--secret-file", "secret", "--custodian-shares",
                "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key",
            ], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("selected"))
        let chosen = try StrictJSON.parse(run.stdout.trimmingCharacters(in: .newlines))
        guard case .array(let shares) = chosen else { Issue.record("not an array"); return }
        #expect(shares.count == 1)
    }

    /// `--json`: one JSON object per event, every field a UI needs; a failure's last line says
    /// whether to retry, with the request id of the earlier lines.
    @Test func jsonProgressLinesCarryStepAttemptAndRequestId() throws {
        let (dir, _) = try story(curve: "secp256k1", method: "password", secret: Data("right".utf8))
        func recover(_ secretFile: String, out: String) throws -> [JSONValue] {
            let run = try CLIRunner.run(
                "share-recovery",
                [
                    "recover", "--cipher-text", "backup/cipherText", "--secret-file", secretFile, "--custodian-shares",
                    "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key", "--out", out,
                    "--json",
                ], in: dir)
            return try run.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }.map {
                try StrictJSON.parse(Array($0.utf8))
            }
        }
        let lines = try recover("secret", out: "again")
        #expect(lines.map { $0["status"] } == RecoveryStatus.sequence.map { .string($0.rawValue) })
        #expect(lines.map { $0["step"] } == (1...8).map { .number("\($0)") })
        #expect(
            lines.allSatisfy {
                $0["event"] == .string("status") && $0["totalSteps"] == .number("8") && $0["attempt"] == .number("1")
            })
        let ids = Set(
            lines.compactMap { line -> String? in if case .string(let id)? = line["requestId"] { id } else { nil } })
        #expect(ids.count == 1 && ids.first?.utf8.count == 32)

        try Data("wrong".utf8).write(to: dir.appendingPathComponent("wrong"))
        let failed = try recover("wrong", out: "never")
        let last = try #require(failed.last)
        #expect(last["event"] == .string("failed") && last["code"] == .string("authenticationFailed"))
        #expect(last["retryable"] == .bool(false) && last["step"] == .number("3"))
        guard case .string(let hint)? = last["hint"] else { Issue.record("no hint: \(last)"); return }
        #expect(!hint.isEmpty)
        #expect(last["requestId"] == failed.first?["requestId"])
    }

    @Test func failuresExitOneWithTheCodeAndUsageErrorsExitTwo() throws {
        let (dir, _) = try story(curve: "secp256k1", method: "password", secret: Data("right".utf8))
        try Data("wrong".utf8).write(to: dir.appendingPathComponent("wrong"))
        let wrong = try CLIRunner.run(
            "share-recovery",
            [
                "recover", "--cipher-text", "backup/cipherText", "--secret-file", "wrong", "--custodian-shares",
                "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key", "--out", "x",
            ], in: dir)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("error: authenticationFailed: "))
        // A failed recovery reports nothing after the failing step and writes nothing.
        #expect(!wrong.stderr.contains("status: recoveringSigningShare"))
        #expect(wrong.stderr.contains("failed at step 3/8 (not worth retrying as is); request id "))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x").path))

        try Data("not base64!".utf8).write(to: dir.appendingPathComponent("bad"))
        let malformed = try CLIRunner.run(
            "share-recovery", ["decrypt", "--cipher-text", "bad", "--secret-file", "wrong"], in: dir)
        #expect(malformed.status == 1)
        #expect(malformed.stderr.contains("error: malformedCipherText: "))

        let usage = try CLIRunner.run("share-recovery", ["recover", "--no-such-flag"], in: dir)
        #expect(usage.status == 2)
        let unknownMethod = try CLIRunner.run(
            "share-recovery",
            ["encrypt", "--share", "s", "--method", "carrier-pigeon", "--secret-file", "s", "--out", "o"], in: dir)
        #expect(unknownMethod.status == 2)
    }

    @Test func noSecretReachesOutputWithoutRevealSecret() throws {
        let password = "correct horse battery staple"
        let (dir, recover) = try story(curve: "secp256k1", method: "password", secret: Data(password.utf8))
        var outputs = [recover.stdout, recover.stderr]
        for arguments in [
            ["decrypt", "--cipher-text", "backup/cipherText", "--secret-file", "secret"],
            [
                "select", "--cipher-text", "backup/cipherText", "--secret-file", "secret", "--custodian-shares",
                "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key",
            ],
        ] {
            let run = try CLIRunner.run("share-recovery", arguments, in: dir)
            outputs += [run.stdout, run.stderr]
        }
        var secrets = [password]
        for path in ["keys/share-1.json", "keys/share-2.json", "recovered/share-1.json", "recovered/share-2.json"] {
            let record = try ShareRecord(json: String(contentsOf: dir.appendingPathComponent(path), encoding: .utf8))
            let bytes = record.secret!.rawRepresentation.revealedBytes()
            secrets += [Hex.encode(bytes), Data(bytes).base64EncodedString()]
        }
        let custodianKey = try String(
            contentsOf: dir.appendingPathComponent("custodian/custodian.key"), encoding: .utf8)
        secrets.append(custodianKey.trimmingCharacters(in: .newlines))
        for output in outputs {
            for secret in secrets { #expect(!output.contains(secret)) }
        }
    }

    @Test func vectorsVerifyPassesOnThePublishedVectors() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        // Under a sanitizer (scripts/sanitizers.sh) ecdsa.json, most of a minute of instrumented OT
        // extension, is left to the plain pass: the ECDSA suites run instrumented.
        var vectors = root.appendingPathComponent("Vectors")
        if ProcessInfo.processInfo.environment["SHARE_RECOVERY_SANITIZE"] != nil {
            let copy = try CLIRunner.temporaryDirectory()
            for name in try FileManager.default.contentsOfDirectory(atPath: vectors.path)
            where name.hasSuffix(".json") && name != "ecdsa.json" {
                try FileManager.default.copyItem(
                    at: vectors.appendingPathComponent(name), to: copy.appendingPathComponent(name))
            }
            vectors = copy
        }
        let run = try CLIRunner.run("share-recovery", ["vectors", "verify", vectors.path])
        #expect(run.status == 0, "\(run.stderr)")
        print("share-recovery vectors verify Vectors/: \(run.stderr.split(separator: "\n").last ?? "")")
        #expect(run.stderr.contains("all ") && run.stderr.contains(" cases passed"))

        // A corrupted copy fails with exit status 1.
        let copy = try CLIRunner.temporaryDirectory()
        for name in ["ciphertext.json", "selection.json"] {
            var text = try String(contentsOf: root.appendingPathComponent("Vectors/\(name)"), encoding: .utf8)
            if name == "ciphertext.json" {
                text = text.replacingOccurrences(of: "\"authenticationFailed\"", with: "\"kdfMismatch\"")
            }
            try text.write(to: copy.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let broken = try CLIRunner.run("share-recovery", ["vectors", "verify", copy.path])
        #expect(broken.status == 1)
    }

    @Test func demoRunsTheWholeStoryAgainstTheServer() throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try CLIRunner.run("share-recovery", ["demo", "--directory", directory.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let statuses = lines.filter { $0.hasPrefix("status: ") }.map { $0.split(separator: " ")[1] }
        #expect(statuses.map(String.init) == (RecoveryStatus.sequence + RecoveryStatus.sequence).map(\.rawValue))
        #expect(lines.filter { $0.contains("public key unchanged: true") }.count == 2)
        #expect(lines.filter { $0.contains("wallet created by DKG with the server") }.count == 2)
        #expect(lines.filter { $0.hasPrefix("signed") && $0.hasSuffix("valid: true") }.count == 6)
        // The secp256k1 wallet's Ethereum address signs by ECDSA before the loss and after the
        // recovery: ecrecover names it both times.
        let addresses = lines.compactMap { line in
            line.firstMatch(of: /^Ethereum address: (0x[0-9a-fA-F]{40})$/).map { String($0.output.1) }
        }
        let address = try #require(addresses.first, "no Ethereum address in \(lines)")
        let ecdsa = lines.filter { $0.hasPrefix("signed (ecdsa, generation ") }
        #expect(
            ecdsa.count == 2 && ecdsa.allSatisfy { $0.contains("ecrecover → \(address), the wallet's address: true") })
        #expect(lines.filter { $0.contains("old device share refused for signing: yes") }.count == 2)

        // The integrator events it prints, one line each (type, account, id), are the outbox's, as
        // `events list` shows them, and tell each wallet's story in order.
        let printed = lines.map { $0.split(separator: " ").map(String.init) }.filter {
            $0.count == 3 && $0[2].hasPrefix("evt_")
        }
        let listed = try CLIRunner.run(
            "share-recovery", ["events", "list", "--database", directory.appendingPathComponent("server.sqlite").path])
        #expect(listed.status == 0, "\(listed.stderr)")
        guard case .array(let rows)? = try StrictJSON.parse(listed.stdout)["events"] else {
            Issue.record("events list printed no events: \(listed.stdout)")
            return
        }
        let outbox = rows.map { row in
            ["type", "account", "id"].map { key -> String in
                guard case .string(let value)? = row[key] else { return "" }
                return value
            }
        }
        #expect(!outbox.isEmpty && printed == outbox, "\(printed)")
        for curve in ["secp256k1", "ed25519"] {
            let story = printed.filter { $0[1] == "demo-user-\(curve)" }.map { $0[0] }
            let expected = [
                "wallet.created", "recoveryMethod.added", "recoveryMethod.added", "recovery.started",
                "recovery.completed",
            ]
            var rest = story[...]
            for type in expected {
                guard let index = rest.firstIndex(of: type) else {
                    Issue.record("\(curve): \(type) missing or out of order in \(story)")
                    break
                }
                rest = rest[(index + 1)...]
            }
        }
        #expect(lines.contains { $0.hasPrefix("\(printed.count) events, in commit order") })
    }

    /// The benchmark's help prints and exits 0; a mistake says what to do and exits 2 without running.
    @Test func recoveryBenchHelpAndMistakes() throws {
        let help = try CLIRunner.run("recovery-bench", ["--help"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdout.contains("--profile WORKLOAD COUNT") && help.stdout.contains("Examples:"))
        for (arguments, said) in [
            (["--json"], "Missing value for '--json <FILE>'"),
            (["--profile", "p256", "10"], "--profile needs a workload"),
            (["--profile", "secp256k1"], "--profile needs a workload"),
            (["--profile", "ecdsa", "0"], "--profile needs a workload"),
            (["--fast"], "Unknown option '--fast'"),
            (
                ["--server-workload", "health"],
                "Please provide one of 'cipher-text', 'fetch', 'session', 'signing' or 'ecdsa-signing'"
            ),
            (["--serve-processes", "0"], "--serve-processes takes 1 to 8"),
        ] {
            let run = try CLIRunner.run("recovery-bench", arguments)
            #expect(run.status == 2, "\(arguments)")
            #expect(
                run.stderr.contains(said) && run.stderr.contains("See 'recovery-bench --help'"),
                "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty, "\(arguments) ran: \(run.stdout)")
        }
    }

    /// The benchmark works end to end (timings are reported, never asserted).
    @Test func recoveryBenchQuickRuns() throws {
        let json = try CLIRunner.temporaryDirectory().appendingPathComponent("bench.json")
        let run = try CLIRunner.run("recovery-bench", ["--quick", "--json", json.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("| group | step | median | p99 | ops/s | floor | ratio | target |"))
        let value = try StrictJSON.parse(Array(try Data(contentsOf: json)))
        guard case .array(let measurements)? = value["measurements"]
        else {
            Issue.record("no measurements in \(json.path)")
            return
        }
        var groups = Set<String>()
        for measurement in measurements {
            guard case .string(let group)? = measurement["group"], case .string(let name)? = measurement["name"] else {
                continue
            }
            groups.insert(group)
            // The server (a child process) and the load each report their CPU; the sessions their floor.
            if group.hasPrefix("server ") {
                #expect(measurement["serverCPUNs"] != nil && measurement["loadCPUNs"] != nil, "\(group) / \(name)")
            }
            if group.hasPrefix("server "), name.hasPrefix("full recovery session") {
                #expect(measurement["floorNs"] != nil && measurement["target"] != nil, "\(group) / \(name)")
            }
        }
        var expected = [
            "floor secp256k1", "floor ed25519", "floor", "engine secp256k1", "engine ed25519", "selection", "scaling",
        ]
        expected.append("server SQLite")
        // The PostgreSQL load runs where the test command started a server for the suite.
        if ProcessInfo.processInfo.environment["SHARE_RECOVERY_TEST_POSTGRES_URL"] != nil {
            expected.append("server PostgreSQL")
        } else {
            Issue.record(
                "PostgreSQL tests SKIPPED: the bench's server PostgreSQL group (SHARE_RECOVERY_TEST_POSTGRES_URL is not set)",
                severity: .warning)
        }
        for group in expected {
            #expect(groups.contains(group), "missing \(group)")
        }
    }

    @Test func kitsPrintSecretsOnlyWithRevealSecretAndRecover() throws {
        let (dir, _) = try story(curve: "ed25519", method: "password", secret: Data("pw".utf8))
        let export = [
            "kit", "export", "--cipher-text", "backup/cipherText", "--secret-file", "secret", "--groups", "2of3",
        ]
        let refused = try CLIRunner.run("share-recovery", export, in: dir)
        #expect(refused.status == 2 && refused.stdout.isEmpty)
        let kit = try CLIRunner.run("share-recovery", export + ["--reveal-secret"], in: dir)
        #expect(kit.status == 0, "\(kit.stderr)")
        let mnemonics = kit.stdout.split(separator: "\n")
        #expect(mnemonics.count == 3)
        try (mnemonics.prefix(2).joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("two"), atomically: true, encoding: .utf8)

        let combined = try CLIRunner.run(
            "share-recovery", ["kit", "combine", "--mnemonics-file", "two", "--reveal-secret"], in: dir)
        let decrypted = try CLIRunner.run(
            "share-recovery",
            ["decrypt", "--cipher-text", "backup/cipherText", "--secret-file", "secret", "--reveal-secret"], in: dir)
        let record = try ShareRecord(json: decrypted.stdout.trimmingCharacters(in: .newlines))
        #expect(
            combined.stdout.trimmingCharacters(in: .newlines)
                == Hex.encode(record.secret!.rawRepresentation.revealedBytes()))
        #expect(
            try CLIRunner.run("share-recovery", ["kit", "combine", "--mnemonics-file", "two"], in: dir).status == 2)

        let recovered = try CLIRunner.run(
            "share-recovery",
            [
                "kit", "recover", "--mnemonics-file", "two", "--custodian-shares",
                "backup/custodian-backup-shares.json",
                "--custodian-key", "custodian/custodian.key", "--out", "from-kit",
            ], in: dir)
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(recovered.stderr.split(separator: "\n").map(String.init) == Self.statusLines)
        let new = try ShareRecord(
            json: String(contentsOf: dir.appendingPathComponent("from-kit/share-1.json"), encoding: .utf8))
        #expect(new.publicKey == record.publicKey && new.generation == 1)
    }
}

extension CLITests {
    @Test("a store another process holds: exit status 3, operationInProgress and what to do")
    func storeInUseExitsThree() async throws {
        let dir = try CLIRunner.temporaryDirectory()
        let store = dir.appendingPathComponent("device").path
        // This test process holds the store, as a running recovery of another process would.
        let holder = try FileSigningShareStore(directory: store, argon2: .minimum)
        let run = try CLIRunner.run("share-recovery", ["store", "status", "--store", "device"], in: dir)
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.contains("error: operationInProgress: "), "\(run.stderr)")
        #expect(run.stderr.contains("hint: another recovery, backup or method change"), "\(run.stderr)")
        _ = holder
    }
}

extension CLITests {
    @Test("store show prints the current share and the session of a cut-off operation (none after a clean start)")
    func storeShowHasPendingSession() throws {
        let dir = try CLIRunner.temporaryDirectory()
        try Data("135790".utf8).write(to: dir.appendingPathComponent("passcode"))
        let keygen = try CLIRunner.run(
            "share-recovery", ["keygen", "--curve", "secp256k1", "--wallet-id", "w-show", "--out", "keys"], in: dir)
        #expect(keygen.status == 0, "\(keygen.stderr)")
        let store = ["--store", "device", "--kdf-ops", "1", "--kdf-mem-kib", "8"]
        let created = try CLIRunner.run(
            "share-recovery",
            ["store", "init"] + store + [
                "--passcode-file", "passcode", "--confirm-file", "passcode", "--share", "keys/share-1.json",
            ],
            in: dir)
        #expect(created.status == 0, "\(created.stderr)")
        let shown = try CLIRunner.run(
            "share-recovery", ["store", "show"] + store + ["--passcode-file", "passcode"], in: dir)
        #expect(shown.status == 0, "\(shown.stderr)")
        let value = try StrictJSON.parse(shown.stdout.trimmingCharacters(in: .newlines))
        #expect(value["pendingSession"] == .null && value["staged"] == .null)
        #expect(value["current"]?["partyIndex"] == .number("1"))
    }
}

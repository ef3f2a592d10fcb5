import ArgumentParser
import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryServer

/// `recovery-bench`: what recovery costs, and how close it is to the floor of its unavoidable
/// primitive operations, measured in the same run.
@main
struct RecoveryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery-bench",
        abstract:
            "What recovery costs, and how close it is to the floor of its unavoidable primitive operations, measured in the same run (docs/benchmarks.md).",
        usage:
            "recovery-bench [--quick] [--server-only] [--server-workload NAME] [--serve-processes N] [--json FILE] | --profile WORKLOAD COUNT",
        discussion: """
            Examples:
              swift run -c release recovery-bench
              swift run -c release recovery-bench --quick --json bench.json
              perf record -g -- .build/release/recovery-bench --server-workload cipher-text
              recovery-bench --server-workload session --serve-processes 2   (PostgreSQL:
                  SHARE_RECOVERY_BENCH_POSTGRES_URL, e.g. a durable one from .ci/postgres.sh --durable)
            """)

    @Flag(help: "Fewer repetitions and 8 server connections instead of 64 (the tests' run).")
    var quick = false

    @Flag(
        help:
            "Only the reference server under load (a child process running share-recovery serve, loaded from this one)."
    )
    var serverOnly = false

    @Option(
        help: ArgumentHelp(
            "Only /health and NAME under load, e.g. to profile one kind of request; implies --server-only.",
            valueName: "NAME"))
    var serverWorkload: ServerLoad.Kind?

    @Option(
        help: ArgumentHelp(
            "Spread the PostgreSQL load over N serve processes of one database (1 to 8; SQLite always runs one).",
            valueName: "N"))
    var serveProcesses = 1

    @Option(
        name: .customLong("json"),
        help: ArgumentHelp("Also write every measurement to FILE as JSON.", valueName: "FILE"))
    var jsonPath: String?

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp(
            "Only COUNT runs of WORKLOAD, for a profiler such as perf or callgrind: offline cloudKey recoveries on a curve (secp256k1 or ed25519), or 2-of-2 threshold ECDSA signatures over stored pair setups (ecdsa).",
            valueName: "WORKLOAD COUNT"))
    var profile: [String] = []

    /// `--profile WORKLOAD COUNT`, read.
    private var profileRun: (Bench.ProfileWorkload, Int)? {
        guard profile.count == 2, let count = Int(profile[1]), count > 0 else { return nil }
        if profile[0] == "ecdsa" { return (.ecdsaSignatures, count) }
        return Curve(name: profile[0]).map { (.recoveries($0), count) }
    }

    func validate() throws {
        guard (1...8).contains(serveProcesses) else {
            throw ValidationError("--serve-processes takes 1 to 8, e.g. --serve-processes 2")
        }
        if !profile.isEmpty, profileRun == nil {
            throw ValidationError(
                "--profile needs a workload (secp256k1, ed25519 or ecdsa) and a count, e.g. --profile ecdsa 500")
        }
    }

    /// ArgumentParser's reading of a mistake, with its usage status (64) as this project's 2.
    static func main() async {
        do {
            var bench = try parse()
            try await bench.run()
        } catch {
            let code = exitCode(for: error)
            guard code == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }

    mutating func run() async throws {
        switch profileRun {
        case let (.recoveries(curve), count)?:
            try await Bench.profileRecoveries(curve: curve, count: count)
            return
        case let (.ecdsaSignatures, count)?:
            try Bench.profileECDSASignatures(count: count)
            return
        case nil: break
        }
        var bench = Bench(
            quick: quick, serverOnly: serverOnly || serverWorkload != nil, serverWorkload: serverWorkload,
            serveProcesses: serveProcesses)
        let started = Date()
        do {
            try await bench.run()
        } catch {
            FileHandle.standardError.write(Data("recovery-bench: error: \(error)\n".utf8))
            throw ExitCode.failure
        }
        bench.printTable()
        print(
            String(format: "total bench time: %.1f s (%@)", Date().timeIntervalSince(started), quick ? "quick" : "full")
        )
        if let jsonPath {
            let report = BenchReport(quick: quick, started: started, measurements: bench.results)
            try report.json.write(toFile: jsonPath, atomically: true, encoding: .utf8)
        }
    }
}

/// The workloads `--server-workload` names: every one but `/health`, which runs with each anyway.
extension ServerLoad.Kind: ExpressibleByArgument {
    init?(argument: String) {
        guard let kind = Self(rawValue: argument), kind != .health else { return nil }
        self = kind
    }

    static var allValueStrings: [String] { allCases.filter { $0 != .health }.map(\.rawValue) }
}

struct Bench {
    let quick: Bool
    var results: [Measurement] = []
    var costs: [Curve: PrimitiveCosts] = [:]
    let random = DeterministicRandom(seed: Array("recovery-bench".utf8))
    let raw = RawPrimitives()

    /// Only the server load (item 3), e.g. under a profiler.
    let serverOnly: Bool

    /// Only this server workload (and `/health`).
    let serverWorkload: ServerLoad.Kind?

    /// `serve` processes on the PostgreSQL database.
    let serveProcesses: Int

    init(quick: Bool, serverOnly: Bool = false, serverWorkload: ServerLoad.Kind? = nil, serveProcesses: Int = 1) {
        self.quick = quick
        self.serverOnly = serverOnly
        self.serverWorkload = serverWorkload
        self.serveProcesses = serveProcesses
    }

    func n(_ full: Int, _ quickCount: Int) -> Int { quick ? quickCount : full }

    mutating func add(_ measurement: Measurement) {
        var measurement = measurement
        // Every row of a curve also in units of that curve's k·G from the floor rows, unless it timed its own.
        if measurement.unitNs == nil, let curve = Curve.allCases.first(where: { measurement.group.hasSuffix(" \($0)") })
        {
            measurement.unitNs = costs[curve]?.generatorMultiply
        }
        results.append(measurement)
        FileHandle.standardError.write(
            Data("  \(measurement.group) / \(measurement.name): \(human(Double(measurement.medianNs)))\n".utf8))
    }

    mutating func run() async throws {
        if serverOnly {
            try await serverLoad()
            return
        }
        try await floors(raw)
        for curve in Curve.allCases { try await engineSteps(curve) }
        for curve in Curve.allCases { try await subShareChecks(curve) }
        for curve in Curve.allCases { try await protocols(curve) }
        try await thresholdECDSA()
        for curve in Curve.allCases { try await deviceAdd(curve) }
        try await selection()
        try await scaling()
        try await serverLoad()
    }

    /// The primitive calls a count names, run back to back: the floor as work rather than as a sum of
    /// medians, so it can be timed alternately with the step it bounds.
    func floorWork(_ count: PrimitiveCosts.Count, curve: Curve) -> () -> Void {
        let raw = raw
        let curveSteps: [() -> Bool] =
            curve == .secp256k1
            ? [
                raw.secp256k1GeneratorMultiply, raw.secp256k1PointMultiply, raw.secp256k1Add, raw.secp256k1Parse,
                raw.sha256,
            ]
            : [raw.ed25519GeneratorMultiply, raw.ed25519PointMultiply, raw.ed25519Add, raw.ed25519Parse, raw.sha512]
        let counts = [
            count.generatorMultiply, count.pointMultiply, count.add, count.parse, count.sha, count.aead, count.hkdf,
            count.open,
            count.seal,
        ]
        let shared: [() -> Bool] = [raw.aeadDecrypt, raw.hkdf, raw.open, raw.seal]
        let steps = Array(zip(counts, curveSteps + shared))
        return {
            for (times, step) in steps {
                for _ in 0..<times { precondition(step(), "a primitive failed during the benchmark") }
            }
        }
    }

    // MARK: Server

    mutating func serverLoad() async throws {
        // The sessions' CPU floor starts from their cryptography, timed here (the server rows run also
        // alone, with --server-only).
        let count = OperationCounts.serverSession
        let work = floorWork(count, curve: .secp256k1)
        var crypto = await Timer.measure(
            "floor secp256k1", "recovery session's cryptography, both parties", iterations: n(2_000, 200)
        ) {
            work()
        }
        crypto.note = count.summary
        add(crypto)
        var load = ServerLoad(quick: quick, random: random, sessionCryptoNs: Double(crypto.medianNs))
        load.only = serverWorkload
        for m in try await load.run(postgresURL: nil) { add(m) }
        let environment = ProcessInfo.processInfo.environment
        let candidates = [
            environment["SHARE_RECOVERY_BENCH_POSTGRES_URL"], environment["SHARE_RECOVERY_TEST_POSTGRES_URL"],
        ]
        guard let url = candidates.compactMap({ $0 }).first(where: { !$0.isEmpty }) else {
            FileHandle.standardError.write(
                Data("  server PostgreSQL: skipped (set SHARE_RECOVERY_BENCH_POSTGRES_URL; docs/benchmarks.md)\n".utf8))
            return
        }
        // A schema of its own, so runs never see each other's rows: drawn from the system's source, since
        // the bench's deterministic stream would give every run (an ASan and a TSan pass on one
        // database, say) the same name, and a DKG never replaces a wallet a previous run created.
        // Several processes (SQLite has only ever one) are measured beside one, each run in its own schema.
        for processes in Set([1, serveProcesses]).sorted() {
            load.processes = processes
            let schema = "bench_" + Hex.encode(SystemRandom().bytes(count: 6))
            for m in try await load.run(postgresURL: url + (url.contains("?") ? "&" : "?") + "schema=" + schema) {
                add(m)
            }
        }
    }

    // MARK: Floors

    mutating func floors(_ raw: RawPrimitives) async throws {
        let count = n(2_000, 200)
        var secp = PrimitiveCosts(), ed = PrimitiveCosts()
        func check(_ ok: Bool) { precondition(ok, "a primitive failed during the benchmark") }
        let pairs: [(String, Int, () -> Bool, WritableKeyPath<PrimitiveCosts, Double>, Curve)] = [
            ("k·G", count, raw.secp256k1GeneratorMultiply, \.generatorMultiply, .secp256k1),
            ("k·P", count, raw.secp256k1PointMultiply, \.pointMultiply, .secp256k1),
            ("P+Q", count, raw.secp256k1Add, \.add, .secp256k1),
            ("parse", count, raw.secp256k1Parse, \.parse, .secp256k1),
            ("k·G", count, raw.ed25519GeneratorMultiply, \.generatorMultiply, .ed25519),
            ("k·P", count, raw.ed25519PointMultiply, \.pointMultiply, .ed25519),
            ("P+Q", count, raw.ed25519Add, \.add, .ed25519),
            ("parse", count, raw.ed25519Parse, \.parse, .ed25519),
            ("SHA-256 block", count, raw.sha256, \.sha, .secp256k1),
            ("SHA-512 block", count, raw.sha512, \.sha, .ed25519),
        ]
        for (name, iterations, body, keyPath, curve) in pairs {
            let m = await Timer.measure("floor \(curve)", name, iterations: iterations) { check(body()) }
            if curve == .secp256k1 {
                secp[keyPath: keyPath] = Double(m.medianNs)
            } else {
                ed[keyPath: keyPath] = Double(m.medianNs)
            }
            add(m)
        }
        // One compression of each SHA-2 function, for threshold ECDSA's floors: a long message's time
        // over its blocks (4 KiB is 65 SHA-256 blocks with its padding, 8 KiB 65 SHA-512 blocks).
        for (name, function, length) in [("SHA-256 compression", 256, 4096), ("SHA-512 compression", 512, 8192)] {
            let message = [UInt8](repeating: 0x5a, count: length)
            let whole = await Timer.measure("floor secp256k1", name, iterations: count) {
                check((function == 256 ? SHA256.hash(message) : SHA512.hash(message)).count > 0)
            }
            let m = Measurement(
                group: whole.group, name: name, iterations: count, medianNs: whole.medianNs / 65,
                p99Ns: whole.p99Ns / 65, meanNs: whole.meanNs / 65, note: "\(length)-byte messages over 65 blocks")
            secp[keyPath: function == 256 ? \PrimitiveCosts.sha256Block : \PrimitiveCosts.sha512Block] =
                Double(whole.medianNs) / 65
            add(m)
        }
        // One ChaCha20 block, for the OT extension's keystreams: 4 KiB of the seed stream's keystream
        // (one call, 64 blocks).
        let stream = DeterministicRandom(seed: Array("chacha20 block".utf8))
        let whole = await Timer.measure("floor secp256k1", "ChaCha20 block", iterations: count) {
            check(stream.bytes(count: 4096).count == 4096)
        }
        secp.chachaBlock = Double(whole.medianNs) / 64
        add(
            Measurement(
                group: whole.group, name: "ChaCha20 block", iterations: count, medianNs: whole.medianNs / 64,
                p99Ns: whole.p99Ns / 64, meanNs: whole.meanNs / 64, note: "4096-byte keystreams over 64 blocks"))
        let shared: [(String, () -> Bool, WritableKeyPath<PrimitiveCosts, Double>?)] = [
            ("AEAD decrypt (one record)", raw.aeadDecrypt, \.aead), ("HKDF-SHA256", raw.hkdf, \.hkdf),
            ("X25519 seal", raw.seal, \.seal), ("X25519 open", raw.open, \.open),
        ]
        for (name, body, keyPath) in shared {
            let m = await Timer.measure("floor", name, iterations: count) { check(body()) }
            if let keyPath {
                secp[keyPath: keyPath] = Double(m.medianNs)
                ed[keyPath: keyPath] = Double(m.medianNs)
            }
            add(m)
        }
        let argonMin = Argon2idParameters.minimum, argonDefault = Argon2idParameters.default
        add(
            await Timer.measure("floor", "Argon2id minimum (1, 8 KiB)", iterations: count) {
                check(raw.argon2id(opslimit: argonMin.opslimit, memlimitKiB: argonMin.memlimitKiB))
            })
        add(
            await Timer.measure("floor", "Argon2id default (3, 64 MiB)", iterations: n(20, 3), warmup: 1) {
                check(raw.argon2id(opslimit: argonDefault.opslimit, memlimitKiB: argonDefault.memlimitKiB))
            })
        costs = [.secp256k1: secp, .ed25519: ed]
    }

    var argonDefaultNs: Double { Double(results.first { $0.name.hasPrefix("Argon2id default") }!.medianNs) }

    // MARK: Engine steps

    mutating func engineSteps(_ curve: Curve) async throws {
        let group = "engine \(curve)"
        let cost = costs[curve]!
        let custodian = SealingKeyPair(using: random)
        let signing = try KeyGeneration.generate(curve: curve, walletId: "bench", using: random)
        let cloudKey = BackupSecret.keyMaterial(random.secureBytes(count: 32))
        let cloud = try BackupCreation.create(
            signingShares: signing, method: .cloudKey, secret: cloudKey, custodianPublicKey: custodian.publicKey,
            using: random)
        let password = BackupSecret.text("correct horse battery staple")
        let pw = try BackupCreation.create(
            signingShares: signing, method: .password, secret: password, custodianPublicKey: custodian.publicKey,
            argon2: .default, using: random)
        let iterations = n(300, 40)

        let binary = try signing[0].binary()
        var m = try await Timer.measure(group, "record parse + validate", iterations: iterations) {
            _ = try ShareRecord(binary: binary)
        }
        var count = OperationCounts.recordParse(index: 1, threshold: 2)
        m.floorNs = cost.floor(count)
        m.note = count.summary
        add(m)

        m = try await Timer.measure(group, "cipherText decrypt cloudKey", iterations: iterations) {
            _ = try cloud.cipherText.decrypt(secret: cloudKey)
        }
        count = OperationCounts.recordParse(index: 1, threshold: 2) + .init(aead: 1, hkdf: 1)
        m.floorNs = cost.floor(count)
        m.note = count.summary
        add(m)

        m = try await Timer.measure(
            group, "cipherText decrypt password (default Argon2id)", iterations: n(10, 2), warmup: 1
        ) {
            _ = try pw.cipherText.decrypt(secret: password)
        }
        m.floorNs = argonDefaultNs + cost.floor(OperationCounts.recordParse(index: 1, threshold: 2) + .init(aead: 1))
        m.note = "Argon2id default + AEAD + record parse"
        add(m)

        // One resharing dealer step and one receiver step (2-of-2 → 2-of-2).
        let plan = try ResharingPlan(
            oldSet: signing[0], dealers: [1, 2], newThreshold: 2, newParties: 2, newKind: .backup, newGeneration: 0,
            newSetId: SetID.random(using: random))
        m = try await Timer.measure(group, "resharing dealer step", iterations: iterations) {
            _ = try ResharingDealer.deal(share: signing[0], plan: plan, using: random)
        }
        count = OperationCounts.dealer(1, dealers: [1, 2], newThreshold: 2)
        m.floorNs = cost.floor(count)
        m.naiveFloorNs = cost.floor(OperationCounts.dealer(1, dealers: [1, 2], newThreshold: 2, naive: true))
        m.note = count.summary
        add(m)
        let dealings = try signing.map { try ResharingDealer.deal(share: $0, plan: plan, using: random) }
        m = try await Timer.measure(group, "resharing receiver step (party 2)", iterations: iterations) {
            _ = try ResharingReceiver.receive(partyIndex: 2, plan: plan, dealings: dealings)
        }
        count = OperationCounts.receiver(index: 2, dealers: [1, 2], threshold: 2, newThreshold: 2)
        m.floorNs = cost.floor(count)
        m.naiveFloorNs = cost.floor(
            OperationCounts.receiver(index: 2, dealers: [1, 2], threshold: 2, newThreshold: 2, naive: true))
        m.note = count.summary
        add(m)

        // The inputs arrive as text; making that text is the integrator's work, not the recovery's.
        let cloudText = cloud.cipherText.base64, cloudShares = cloud.custodianShares.map(\.json)
        let passwordText = pw.cipherText.base64, passwordShares = pw.custodianShares.map(\.json)
        // The two targeted ratios: each step is timed alternately with the work of its floor.
        count = OperationCounts.offlineRecovery(threshold: 2, parties: 2, argon: false)
        let cloudFloor = floorWork(count, curve: curve)
        let unit = curve == .secp256k1 ? raw.secp256k1GeneratorMultiply : raw.ed25519GeneratorMultiply
        m = try await Timer.measureAgainstFloor(
            group, "full local recovery cloudKey (2-of-2)", iterations: iterations * 2,
            {
                _ = try await OfflineRecovery.recover(
                    cipherText: cloudText, secret: cloudKey, custodianShares: cloudShares, custodianKey: custodian,
                    using: random)
            }, floor: cloudFloor, unit: { precondition(unit(), "k·G failed during the benchmark") })
        m.target = 1.25
        m.unitsTarget = curve == .secp256k1 ? 14 : 26
        m.naiveFloorNs = cost.floor(
            OperationCounts.offlineRecovery(threshold: 2, parties: 2, argon: false, naive: true))
        m.note = "floor timed alternately: " + count.summary
        add(m)

        let argonDefault = Argon2idParameters.default, raw = raw
        m = try await Timer.measureAgainstFloor(
            group, "full local recovery password (default Argon2id)", iterations: n(20, 3), warmup: 1
        ) {
            _ = try await OfflineRecovery.recover(
                cipherText: passwordText, secret: password, custodianShares: passwordShares, custodianKey: custodian,
                using: random)
        } floor: {
            precondition(raw.argon2id(opslimit: argonDefault.opslimit, memlimitKiB: argonDefault.memlimitKiB))
        }
        m.target = 1.03
        m.note = "ratio to Argon2id at the same parameters, timed alternately"
        add(m)

        m = try await Timer.measure(group, "full backup cloudKey (2-of-2)", iterations: iterations) {
            _ = try BackupCreation.create(
                signingShares: signing, method: .cloudKey, secret: cloudKey, custodianPublicKey: custodian.publicKey,
                using: random)
        }
        count = OperationCounts.backup(threshold: 2, parties: 2)
        m.floorNs = cost.floor(count)
        m.naiveFloorNs = cost.floor(OperationCounts.backup(threshold: 2, parties: 2, naive: true))
        m.note = count.summary
        add(m)

        // Cost per recovery as the number of parties grows.
        for (t, parties) in [(2, 3), (3, 5)] {
            let set = try KeyGeneration.generate(
                curve: curve, walletId: "bench", threshold: t, parties: parties, using: random)
            let backup = try BackupCreation.create(
                signingShares: Array(set.prefix(t)), method: .cloudKey, secret: cloudKey,
                custodianPublicKey: custodian.publicKey,
                using: random)
            let text = backup.cipherText.base64, shares = backup.custodianShares.map(\.json)
            m = try await Timer.measure(
                group, "full local recovery cloudKey (\(t)-of-\(parties))", iterations: n(100, 15)
            ) {
                _ = try await OfflineRecovery.recover(
                    cipherText: text, secret: cloudKey, custodianShares: shares, custodianKey: custodian, using: random)
            }
            count = OperationCounts.offlineRecovery(threshold: t, parties: parties, argon: false)
            m.floorNs = cost.floor(count)
            m.naiveFloorNs = cost.floor(
                OperationCounts.offlineRecovery(threshold: t, parties: parties, argon: false, naive: true))
            m.note = count.summary
            add(m)
        }
    }

    // MARK: Wallet protocols

    /// DKG and one signature per mode, all parties in this process through the real messages, each
    /// timed alternately with the work of its floor (docs/formats.md §10–§11; counts in ProtocolCounts).
    mutating func protocols(_ curve: Curve) async throws {
        let group = "wallet \(curve)"
        let random = random
        for (t, parties) in [(2, 2), (2, 3)] {
            let parameters = try DKGParameters(curve: curve, walletId: "bench", threshold: t, parties: parties)
            let count = ProtocolCounts.dkg(threshold: t, parties: parties, curve: curve)
            var m = try await Timer.measureAgainstFloor(
                group, "DKG \(t)-of-\(parties)", iterations: n(200, 20),
                { _ = try DistributedKeyGeneration.run(parameters: parameters, using: random) },
                floor: floorWork(count, curve: curve))
            m.target = 1.25
            m.note = "floor timed alternately: " + count.summary
            add(m)
        }
        let set = try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: curve, walletId: "bench", threshold: 2, parties: 2), using: random)
        let message = random.bytes(count: 32)
        for mode in SigningMode.allCases where (try? mode.check(on: curve)) != nil {
            let count = ProtocolCounts.signing(threshold: 2, mode: mode, curve: curve)
            var m = try await Timer.measureAgainstFloor(
                group, "sign \(mode) (2-of-2)", iterations: n(300, 30),
                { _ = try ThresholdSigning.sign(shares: set, message: message, mode: mode, using: random) },
                floor: floorWork(count, curve: curve))
            m.target = 1.25
            m.note = "floor timed alternately: " + count.summary
            add(m)
        }
    }

    /// Threshold ECDSA 2-of-2 (docs/ecdsa.md), beside FROST in the same group: a pair setup, and a
    /// signature over stored setups (its three rounds and the final verification, both parties in
    /// this process, as a wallet signs). Floors in ``ECDSACounts``; targets in k·G units.
    mutating func thresholdECDSA() async throws {
        let group = "wallet secp256k1"
        let cost = costs[.secp256k1]!
        let set = try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: .secp256k1, walletId: "bench", threshold: 2, parties: 2), using: random)
        var count = ECDSACounts.pairSetup
        var m = try await Timer.measure(group, "ECDSA pair setup (2-of-2)", iterations: n(20, 3), warmup: 1) {
            _ = try ThresholdECDSA.pairSetups(
                shares: set, seeds: [1: random.secureBytes(count: 32), 2: random.secureBytes(count: 32)])
        }
        m.floorNs = cost.floor(count)
        m.unitsTarget = 2_500
        m.note = count.summary
        add(m)
        let setups = try ThresholdECDSA.pairSetups(shares: set)
        let digest = random.bytes(count: 32)
        count = ECDSACounts.signing
        m = try await Timer.measure(group, "ECDSA sign (2-of-2)", iterations: n(200, 20)) {
            _ = try ThresholdECDSA.sign(
                shares: set, setups: setups, digest: digest,
                seeds: [1: random.secureBytes(count: 32), 2: random.secureBytes(count: 32)])
        }
        m.floorNs = cost.floor(count)
        m.unitsTarget = 120
        m.note = count.summary
        add(m)
    }

    /// Adding a device to a 2-of-2 wallet (docs/devices.md): the custodian's role plans and deals, the
    /// approver checks its dealing and deals, the custodian and the new device receive; each sub-share
    /// sealed to its receiver and opened there, as on the wire.
    mutating func deviceAdd(_ curve: Curve) async throws {
        let random = random
        let set = try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: curve, walletId: "bench", threshold: 2, parties: 2), using: random)
        let deviceKey = SealingKeyPair(using: random)
        let custodianKey = SealingKeyPair(using: random)
        func carried(_ subShare: Scalar?, to key: SealingKeyPair) throws -> Scalar {
            let sealed = try SealedBox.seal(subShare!.rawRepresentation, to: key.publicKey, using: random)
            return try Scalar(secure: try SealedBox.open(sealed, with: key), curve: curve)
        }
        let count = ProtocolCounts.deviceAdd()
        var m = try await Timer.measureAgainstFloor(
            "wallet \(curve)", "device add (2-of-2 into a new 2-of-2)", iterations: n(300, 30),
            {
                let custodian = try DeviceEnrolmentCustodian.open(
                    approvingSet: set[1], newSetId: SetID.random(using: random), using: random)
                let plan = custodian.plan
                let (approver, newCommitments) = try DeviceEnrolment.approve(
                    plan: plan, custodianCommitments: custodian.dealing.commitments, approverShare: set[0],
                    using: random)
                let atCustodian = Dealing(
                    dealerIndex: 1, commitments: approver.commitments,
                    subShares: [2: try carried(approver.subShares[2], to: custodianKey)])
                _ = try custodian.finish(approverDealing: atCustodian)
                let offered = custodian.offeredDealing
                let atDevice = [
                    Dealing(
                        dealerIndex: 1, commitments: approver.commitments,
                        subShares: [1: try carried(approver.subShares[1], to: deviceKey)]),
                    Dealing(
                        dealerIndex: 2, commitments: offered.commitments,
                        subShares: [1: try carried(offered.subShares[1], to: deviceKey)]),
                ]
                _ = try DeviceEnrolment.join(plan: plan, dealings: atDevice, newCommitments: newCommitments)
            }, floor: floorWork(count, curve: curve))
        m.target = 1.25
        m.note = "floor timed alternately: " + count.summary
        add(m)
    }

    // MARK: Selection

    mutating func selection() async throws {
        let curve = Curve.secp256k1
        let cost = costs[curve]!
        let custodian = SealingKeyPair(using: random)
        let signing = try KeyGeneration.generate(curve: curve, walletId: "bench", using: random)
        let key = BackupSecret.keyMaterial(random.secureBytes(count: 32))
        let target = try BackupCreation.create(
            signingShares: signing, method: .cloudKey, secret: key, custodianPublicKey: custodian.publicKey,
            using: random)
        let user = try target.cipherText.decrypt(secret: key)
        // Decoys: the same wallet's other backups (other sets and methods), as a real /backup/fetch returns.
        var decoys: [String] = []
        for index in 0..<999 {
            let method = BackupMethod.allCases[index % BackupMethod.allCases.count]
            let other = try BackupCreation.create(
                signingShares: signing, method: method == .cloudKey ? .iCloud : method,
                secret: method.kdf == .argon2id13 ? .text("x") : key, custodianPublicKey: custodian.publicKey,
                argon2: .minimum, using: random)
            decoys.append(other.custodianShares[0].json)
            if index >= 99, quick { break }
        }
        let selector = CustodianShareSelector(custodianKey: custodian)
        let sizes = quick ? [1, 10, 100] : [1, 10, 100, 1_000]
        for size in sizes {
            var candidates = Array(decoys.prefix(size - 1))
            candidates.insert(target.custodianShares[0].json, at: candidates.count / 2)
            let parseOnly = try await Timer.measure(
                "selection", "parse-and-filter pass N=\(size)", iterations: n(50, 10)
            ) {
                for text in candidates { _ = try CustodianBackupShare(json: text) }
            }
            var m = await Timer.measure("selection", "select N=\(size)", iterations: n(50, 10)) {
                guard case .selected = selector.select(for: user, method: .cloudKey, candidates: candidates) else {
                    preconditionFailure("selection failed in the benchmark")
                }
            }
            let verify = OperationCounts.recordParse(index: 2, threshold: 2) + .init(open: 1)
            m.floorNs = Double(parseOnly.medianNs) + cost.floor(verify)
            if size == 1_000 { m.target = 1.5 }
            m.note = "floor: measured parse pass + " + verify.summary
            add(m)
        }
    }

    // MARK: Scaling

    mutating func scaling() async throws {
        let custodian = SealingKeyPair(using: random)
        let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "bench", using: random)
        let key = BackupSecret.keyMaterial(random.secureBytes(count: 32))
        let backup = try BackupCreation.create(
            signingShares: signing, method: .cloudKey, secret: key, custodianPublicKey: custodian.publicKey,
            using: random)
        let text = backup.cipherText.base64
        let shares = backup.custodianShares.map(\.json)
        let total = n(10_000, 400)
        // One child task per worker: the cooperative pool has a thread per core, as
        // concurrentPerform had, and a recovery suspends only on the in-process custodian and store.
        func batch(workers: Int) async -> Double {
            let start = Timer.now()
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    let share = total / workers + (worker < total % workers ? 1 : 0)
                    group.addTask {
                        for _ in 0..<share {
                            _ = try? await OfflineRecovery.recover(
                                cipherText: text, secret: key, custodianShares: shares, custodianKey: custodian)
                        }
                    }
                }
            }
            return Double(Timer.now() - start)
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let one = await batch(workers: 1)
        let all = await batch(workers: cores)
        let perOne = one / Double(total), perAll = all / Double(total)
        var m = Measurement(
            group: "scaling", name: "batch of \(total) cloudKey recoveries, 1 core", iterations: total,
            medianNs: UInt64(perOne), p99Ns: UInt64(perOne), meanNs: perOne)
        m.note = String(format: "%.0f recoveries/s", 1e9 / perOne)
        add(m)
        m = Measurement(
            group: "scaling", name: "batch of \(total) cloudKey recoveries, \(cores) cores", iterations: total,
            medianNs: UInt64(perAll), p99Ns: UInt64(perAll), meanNs: perAll)
        m.note = String(
            format: "%.0f recoveries/s, scaling factor %.2f× (target ≥ 1.8× on 2 cores)", 1e9 / perAll, one / all)
        add(m)
    }

    /// What `--profile` runs.
    enum ProfileWorkload {
        case recoveries(Curve)
        case ecdsaSignatures
    }

    /// A fixed workload for instruction counting: no timing, no output.
    static func profileRecoveries(curve: Curve, count: Int) async throws {
        let random = DeterministicRandom(seed: Array("profile".utf8))
        let custodian = SealingKeyPair(using: random)
        let signing = try KeyGeneration.generate(curve: curve, walletId: "bench", using: random)
        let key = BackupSecret.keyMaterial(random.secureBytes(count: 32))
        let backup = try BackupCreation.create(
            signingShares: signing, method: .cloudKey, secret: key, custodianPublicKey: custodian.publicKey,
            using: random)
        let text = backup.cipherText.base64, shares = backup.custodianShares.map(\.json)
        for _ in 0..<count {
            _ = try await OfflineRecovery.recover(
                cipherText: text, secret: key, custodianShares: shares, custodianKey: custodian, using: random)
        }
    }

    /// A fixed workload for a profiler: `count` 2-of-2 ECDSA signatures over one pair of stored setups,
    /// both parties in this process, as the bench's "ECDSA sign" times them.
    static func profileECDSASignatures(count: Int) throws {
        let random = DeterministicRandom(seed: Array("profile".utf8))
        let set = try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: .secp256k1, walletId: "bench", threshold: 2, parties: 2), using: random)
        let setups = try ThresholdECDSA.pairSetups(shares: set)
        let digest = random.bytes(count: 32)
        for _ in 0..<count {
            _ = try ThresholdECDSA.sign(
                shares: set, setups: setups, digest: digest,
                seeds: [1: random.secureBytes(count: 32), 2: random.secureBytes(count: 32)])
        }
    }

    // MARK: Output

    func printTable() {
        // New columns go last, so the table still starts with the columns scripts already read.
        print("| group | step | median | p99 | ops/s | floor | ratio | target | k·G units | previous floor |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for m in results {
            let floor = m.floorNs.map { human($0) } ?? ""
            let ratio = m.ratio.map { String(format: "%.2f×", $0) } ?? ""
            let naive = m.naiveFloorNs.map { human($0) } ?? ""
            let units = m.units.map { String(format: "%.1f", $0) } ?? ""
            let targets = [
                m.target.map { String(format: "≤ %.2f×", $0) }, m.unitsTarget.map { String(format: "≤ %.0f k·G", $0) },
            ]
            let target = targets.compactMap { $0 }.joined(separator: ", ")
            print(
                "| \(m.group) | \(m.name) | \(human(Double(m.medianNs))) | \(human(Double(m.p99Ns))) | \(String(format: "%.0f", m.opsPerSecond)) | \(floor) | \(ratio) | \(target) | \(units) | \(naive) |"
            )
        }
        print("")
        for m in results where !m.note.isEmpty { print("- \(m.group) / \(m.name): \(m.note)") }
    }
}

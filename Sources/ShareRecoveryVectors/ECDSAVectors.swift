import ShareCrypto
import ShareRecovery

/// `ecdsa.json`: docs/formats.md §12 threshold ECDSA (DKLs23), every message of the pair setups and
/// the signature replayed byte for byte from the signers' seeds (docs/ecdsa.md "Transcripts").
enum ECDSAVectors: VectorKind {
    static let kind = "ecdsa"
    static let summary =
        "docs/formats.md §12 threshold ECDSA (DKLs23, docs/ecdsa.md). The signers are the parties of shares (§4 "
        + "JSON with secrets, one secp256k1 signing set); party i draws every random value of its pair setups and "
        + "of the signature from seeds[i] (docs/ecdsa.md \"Random values\"). The replay makes a pair setup for each "
        + "pair i < j of signers (ascending), then signs digest under path (the wallet key when absent); transcript "
        + "lists every message in sending order: rounds pairSetup1 and pairSetup2 of each pair, then round1, round2 "
        + "(from each signer ascending to each other signer ascending) and round3 (to 0: every signer). A valid "
        + "case recomputes every payload byte for byte and gives the signature {r, s, recoveryId} that every "
        + "signer computes. An invalid case replaces one entry; the replay delivers it instead of the recomputed "
        + "message and must fail with error, naming culprit (null when the protocol cannot tell who)."
    static let fields: Set<String> = ["shares", "digest", "path", "seeds", "transcript", "signature", "culprit"]

    /// The transcript's round names, in protocol order (docs/ecdsa.md "Transcripts").
    static let rounds = ["pairSetup1", "pairSetup2", "round1", "round2", "round3"]

    /// One message: its round, sender, receiver (0 for a broadcast to every signer) and bytes.
    struct Entry: Equatable, Sendable {
        let round: String
        let from: Int
        let to: Int
        var payload: [UInt8]

        var label: String { "\(round) from \(from) to \(to == 0 ? "all" : String(to))" }

        var json: JSONValue {
            .object([
                ("round", .string(round)), ("from", .integer(from)), ("to", .integer(to)), ("payload", .hex(payload)),
            ])
        }
    }

    /// What a case runs from.
    struct Inputs {
        let shares: [ShareRecord]
        let digest: [UInt8]
        let path: DerivationPath?
        let seeds: [Int: [UInt8]]
    }

    // MARK: Replay

    /// Makes a pair setup for every pair of signers, then one signature, handing every message to
    /// `deliver` in sending order; the receivers get what `deliver` returns.
    /// - Returns: The signature each signer computed, by index, and the key they sign under.
    /// - Throws: The first ``ShareRecoveryError`` of any party, or what `deliver` throws.
    static func replay(_ inputs: Inputs, deliver: (Entry) throws -> [UInt8]) throws -> (
        signatures: [Int: ECDSASignature], key: Point
    ) {
        let signers = inputs.shares.map(\.partyIndex).sorted()
        var share: [Int: ShareRecord] = [:]
        for record in inputs.shares { share[record.partyIndex] = record }
        func seed(_ index: Int) -> SecureBytes { SecureBytes(copying: inputs.seeds[index]!) }

        var setups: [Int: [PairSetup]] = [:]
        for (position, i) in signers.enumerated() {
            for j in signers[(position + 1)...] {
                let first = try PairSetupParty(share: share[i]!, peer: j, seed: seed(i))
                let second = try PairSetupParty(share: share[j]!, peer: i, seed: seed(j))
                let toJ = try deliver(Entry(round: "pairSetup1", from: i, to: j, payload: first.round1Message))
                let toI = try deliver(Entry(round: "pairSetup1", from: j, to: i, payload: second.round1Message))
                let replyToJ = try deliver(
                    Entry(round: "pairSetup2", from: i, to: j, payload: try first.round2(peerMessage: toI)))
                let replyToI = try deliver(
                    Entry(round: "pairSetup2", from: j, to: i, payload: try second.round2(peerMessage: toJ)))
                setups[i, default: []].append(try first.finish(peerMessage: replyToI))
                setups[j, default: []].append(try second.finish(peerMessage: replyToJ))
            }
        }

        var parties: [Int: ECDSASigningParty] = [:]
        for i in signers {
            parties[i] = try ECDSASigningParty(
                share: share[i]!, signers: signers, setups: setups[i] ?? [], digest: inputs.digest,
                path: inputs.path ?? .root, seed: seed(i))
        }
        /// Sends one round's point-to-point messages, senders then receivers ascending.
        func exchange(_ round: String, _ messages: (Int) throws -> [Int: [UInt8]]) throws -> [Int: [Int: [UInt8]]] {
            var inboxes: [Int: [Int: [UInt8]]] = [:]
            for i in signers {
                let sent = try messages(i)
                for j in signers where j != i {
                    guard let payload = sent[j] else { throw VectorProblem("party \(i) sent no \(round) to \(j)") }
                    inboxes[j, default: [:]][i] = try deliver(Entry(round: round, from: i, to: j, payload: payload))
                }
            }
            return inboxes
        }
        let round1 = try exchange("round1") { try parties[$0]!.round1() }
        let round2 = try exchange("round2") { try parties[$0]!.round2(round1[$0] ?? [:]) }
        var own: [Int: [UInt8]] = [:]
        var broadcasts: [Int: [UInt8]] = [:]
        for i in signers {
            own[i] = try parties[i]!.round3(round2[i] ?? [:])
            broadcasts[i] = try deliver(Entry(round: "round3", from: i, to: 0, payload: own[i]!))
        }
        var signatures: [Int: ECDSASignature] = [:]
        for i in signers {
            // A signer uses its own broadcast as it computed it: a replaced one reaches the others only.
            var received = broadcasts
            received[i] = own[i]
            signatures[i] = try parties[i]!.signature(received)
        }
        return (signatures, parties[signers[0]]!.signingKey)
    }

    // MARK: Verification

    static func inputs(_ vector: VectorCase) throws -> Inputs {
        let shares = try vector.array("shares").map { try ShareRecord(json: JSONWriter.write($0)) }
        guard let first = shares.first, shares.allSatisfy({ $0.curve == .secp256k1 && $0.secret != nil }) else {
            throw VectorProblem("shares must be non-empty secp256k1 shares with secrets")
        }
        guard shares.allSatisfy({ $0.isSameSet(as: first) }), Set(shares.map(\.partyIndex)).count == shares.count
        else {
            throw ShareRecoveryError(
                .inconsistentShares, "ECDSA needs distinct parties' shares of one signing set and generation")
        }
        let digest = try vector.hex("digest")
        guard digest.count == 32 else { throw VectorProblem("\"digest\" must be 32 bytes") }
        let path = vector.has("path") ? try DerivationPath(try vector.string("path")) : nil
        var seeds: [Int: [UInt8]] = [:]
        for (index, value) in try vector.indexed("seeds") {
            guard case .string(let text) = value, let bytes = Hex.decode(text), bytes.count == 32 else {
                throw VectorProblem("seeds[\(index)] must be 32 bytes of lowercase hex")
            }
            seeds[index] = bytes
        }
        guard Set(seeds.keys) == Set(shares.map(\.partyIndex)) else {
            throw VectorProblem("\"seeds\" must give exactly one seed per signer")
        }
        return Inputs(shares: shares, digest: digest, path: path, seeds: seeds)
    }

    static func transcript(_ vector: VectorCase) throws -> [Entry] {
        try vector.array("transcript").enumerated().map { (position, value) throws -> Entry in
            guard case .object(let members) = value,
                Set(members.map(\.key)) == ["round", "from", "to", "payload"], members.count == 4,
                case .string(let round)? = value["round"], rounds.contains(round),
                case .string(let payload)? = value["payload"], let bytes = Hex.decode(payload)
            else {
                throw VectorProblem(
                    "transcript[\(position)] must be {round, from, to, payload} with a round of \(rounds) and hex payload"
                )
            }
            return Entry(
                round: round, from: try VectorCase.integer(value["from"]!, field: "from"),
                to: try VectorCase.integer(value["to"]!, field: "to"), payload: bytes)
        }
    }

    /// The transcript entry for the message the replay sends next, checked to be that message's slot.
    private static func slot(_ transcript: [Entry], _ position: inout Int, for sent: Entry) throws -> Entry {
        guard position < transcript.count else { throw VectorProblem("the transcript ends before \(sent.label)") }
        let entry = transcript[position]
        guard entry.round == sent.round, entry.from == sent.from, entry.to == sent.to else {
            throw VectorProblem("transcript[\(position)] is \(entry.label), but the replay sends \(sent.label) next")
        }
        position += 1
        return entry
    }

    static func signatureJSON(_ signature: ECDSASignature) -> JSONValue {
        .object([("r", .hex(signature.r)), ("s", .hex(signature.s)), ("recoveryId", .integer(signature.recoveryId))])
    }

    static func checkValid(_ vector: VectorCase) throws {
        guard !vector.has("culprit") else { throw VectorProblem("a valid case names no culprit") }
        let inputs = try inputs(vector)
        let transcript = try transcript(vector)
        var position = 0
        let (signatures, key) = try replay(inputs) { sent in
            let entry = try slot(transcript, &position, for: sent)
            guard entry.payload == sent.payload else {
                throw VectorProblem("transcript[\(position - 1)] (\(sent.label)) differs from the recomputed message")
            }
            return sent.payload
        }
        guard position == transcript.count else {
            throw VectorProblem("the transcript has \(transcript.count - position) entries after the last message")
        }
        let expected = try vector.value("signature")
        for (index, signature) in signatures.sorted(by: { $0.key < $1.key })
        where signatureJSON(signature).sortedKeys != expected.sortedKeys {
            throw VectorProblem("party \(index) computed the signature \(signature), not the one given")
        }
        // libsecp256k1's own verification (it refuses a high s) and public-key recovery.
        let signature = signatures.values.first!
        guard signature.isValid(digest: inputs.digest, publicKey: key),
            (try? signature.recoverPublicKey(digest: inputs.digest)) == key
        else { throw VectorProblem("the signature does not verify under the signing key with libsecp256k1") }
    }

    static func exerciseInvalid(_ vector: VectorCase) throws {
        guard !vector.has("signature") else { throw VectorProblem("an invalid case has no signature") }
        let culprit: Int?
        switch try vector.value("culprit") {
        case .null: culprit = nil
        case let value: culprit = try VectorCase.integer(value, field: "culprit")
        }
        let inputs = try inputs(vector)
        let transcript = try transcript(vector)
        var position = 0
        var replaced: Int?
        do {
            _ = try replay(inputs) { sent in
                let entry = try slot(transcript, &position, for: sent)
                // After the replaced entry its receivers send what follows from it, not what the
                // transcript (the honest run's) lists: those entries are not compared.
                if replaced != nil || entry.payload == sent.payload { return sent.payload }
                replaced = position - 1
                return entry.payload
            }
        } catch let error as ShareRecoveryError {
            guard replaced != nil else {
                throw VectorProblem("the replay failed before reaching a replaced entry: \(error)")
            }
            guard error.party == culprit else {
                throw VectorProblem(
                    "expected culprit \(culprit.map(String.init) ?? "none"), got \(error.party.map(String.init) ?? "none"): \(error)"
                )
            }
            throw error
        }
        guard replaced != nil else { throw VectorProblem("no transcript entry differs from the recomputed messages") }
    }

    // MARK: Generation

    /// One change to one message, and who the protocol must blame for it.
    struct Tamper: Sendable {
        let round: String
        let from: Int
        let to: Int
        let name: String
        let culprit: Int?
        /// Changes the payload; the transcript gives the other messages (e.g. the receiver's `A`).
        let change: @Sendable (inout [UInt8], [Entry]) -> Void
    }

    /// A signing scenario: a fresh DKG wallet (recovered into generation 1 when `recovered`), the
    /// signers, a path and a digest, and the invalid cases derived from its transcript.
    struct Scenario: Sendable {
        let id: String
        let threshold: Int
        let parties: Int
        let signers: [Int]
        var path: String?
        var digest: [UInt8]?
        var recovered = false
        var tampers: [Tamper] = []

        var ids: [String] { [id] + tampers.map { "\(id)-\($0.name)" } }
    }

    /// Flips bit 0 of byte `offset`.
    static func flip(_ offset: Int) -> @Sendable (inout [UInt8], [Entry]) -> Void {
        { payload, _ in payload[offset] ^= 0x01 }
    }

    /// Replaces `B_0` of a pair setup's round 2 by the receiver's own `A` (from its round 1).
    static func receiversA(from sender: Int, to receiver: Int) -> @Sendable (inout [UInt8], [Entry]) -> Void {
        { payload, transcript in
            let a = transcript.first { $0.round == "pairSetup1" && $0.from == receiver && $0.to == sender }!.payload
            payload.replaceSubrange(0..<33, with: a[0..<33])
        }
    }

    // Offsets from docs/ecdsa.md's layouts.
    static let proofResponseEnd = 97
    static let round1U = 64 + 1000
    static let round2R = 10
    static let round2Psi = 98 + 31
    static let round2GammaV = 163 + 12
    static let round2Tau = 196 + 5000
    static let round2Mu = 196 + 53248 + 64 + 7

    static let scenarios: [Scenario] = [
        Scenario(
            id: "2of2", threshold: 2, parties: 2, signers: [1, 2],
            tampers: [
                Tamper(
                    round: "pairSetup1", from: 1, to: 2, name: "pair-setup-1-proof-from-1", culprit: 1,
                    change: flip(proofResponseEnd)),
                Tamper(
                    round: "pairSetup1", from: 2, to: 1, name: "pair-setup-1-proof-from-2", culprit: 2,
                    change: flip(proofResponseEnd)),
                Tamper(
                    round: "pairSetup2", from: 1, to: 2, name: "pair-setup-2-point-is-A-from-1", culprit: 1,
                    change: receiversA(from: 1, to: 2)),
                Tamper(
                    round: "pairSetup2", from: 2, to: 1, name: "pair-setup-2-point-is-A-from-2", culprit: 2,
                    change: receiversA(from: 2, to: 1)),
                Tamper(round: "round1", from: 1, to: 2, name: "round-1-u-from-1", culprit: 1, change: flip(round1U)),
                Tamper(round: "round1", from: 2, to: 1, name: "round-1-u-from-2", culprit: 2, change: flip(round1U)),
                Tamper(round: "round1", from: 2, to: 1, name: "round-1-nonce-from-2", culprit: 2, change: flip(5)),
                Tamper(
                    round: "round2", from: 1, to: 2, name: "round-2-tau-from-1", culprit: 1, change: flip(round2Tau)),
                Tamper(round: "round2", from: 2, to: 1, name: "round-2-mu-from-2", culprit: 2, change: flip(round2Mu)),
                Tamper(round: "round2", from: 1, to: 2, name: "round-2-R-from-1", culprit: 1, change: flip(round2R)),
                Tamper(
                    round: "round2", from: 2, to: 1, name: "round-2-psi-from-2", culprit: nil, change: flip(round2Psi)),
                Tamper(round: "round3", from: 1, to: 0, name: "round-3-w-from-1", culprit: nil, change: flip(63)),
                Tamper(round: "round3", from: 2, to: 0, name: "round-3-u-from-2", culprit: nil, change: flip(31)),
            ]),
        Scenario(id: "2of2-path", threshold: 2, parties: 2, signers: [1, 2], path: "m/0/1"),
        Scenario(
            id: "2of2-digest-zero", threshold: 2, parties: 2, signers: [1, 2], digest: [UInt8](repeating: 0, count: 32)),
        Scenario(
            id: "2of2-digest-above-n", threshold: 2, parties: 2, signers: [1, 2],
            digest: [UInt8](repeating: 0xff, count: 32)),
        Scenario(id: "2of3-signers-1-2", threshold: 2, parties: 3, signers: [1, 2]),
        Scenario(
            id: "2of3-signers-1-3", threshold: 2, parties: 3, signers: [1, 3],
            tampers: [
                Tamper(
                    round: "pairSetup2", from: 3, to: 1, name: "pair-setup-2-not-a-point-from-3", culprit: 3,
                    change: { payload, _ in payload[7 * 33] = 0x05 })
            ]),
        Scenario(id: "2of3-signers-2-3", threshold: 2, parties: 3, signers: [2, 3]),
        Scenario(id: "2of3-signers-2-3-path", threshold: 2, parties: 3, signers: [2, 3], path: "m/7"),
        Scenario(
            id: "2of3-signers-1-3-deep-path", threshold: 2, parties: 3, signers: [1, 3], path: "m/44/60/0/0/2147483647"),
        Scenario(id: "2of3-recovered-generation-1", threshold: 2, parties: 3, signers: [1, 2], recovered: true),
        Scenario(
            id: "3of3", threshold: 3, parties: 3, signers: [1, 2, 3],
            tampers: [
                Tamper(round: "round1", from: 3, to: 1, name: "round-1-u-from-3", culprit: 3, change: flip(round1U)),
                Tamper(
                    round: "round2", from: 1, to: 3, name: "round-2-gamma-v-from-1", culprit: 1,
                    change: flip(round2GammaV)),
            ]),
        Scenario(id: "3of5-signers-2-4-5-path", threshold: 3, parties: 5, signers: [2, 4, 5], path: "m/1/2"),
    ]

    static func cases(random: DeterministicRandom) throws -> [JSONValue] {
        try cases(random: random, only: nil)
    }

    /// Every case, or only the scenarios with a case named in `only` (tests regenerate a sample).
    /// Each scenario draws from its own stream, `DeterministicRandom(seed: base || UTF-8 id)` with
    /// `base` the file stream's first 32 bytes, so one scenario can be rebuilt without the others.
    static func cases(random: DeterministicRandom, only: Set<String>?) throws -> [JSONValue] {
        let base = random.bytes(count: 32)
        var cases: [JSONValue] = []
        for scenario in scenarios where only.map({ !$0.isDisjoint(with: scenario.ids) }) ?? true {
            let stream = DeterministicRandom(seed: base + Array(scenario.id.utf8))
            var shares = try DistributedKeyGeneration.run(
                parameters: DKGParameters(
                    curve: .secp256k1, walletId: "wallet-ecdsa-\(scenario.id)", threshold: scenario.threshold,
                    parties: scenario.parties),
                using: stream)
            if scenario.recovered {
                shares = try Resharing.reshare(
                    Array(shares.prefix(scenario.threshold)), newThreshold: scenario.threshold,
                    newParties: scenario.parties, newKind: .signing, newGeneration: 1, using: stream)
            }
            let signers = shares.filter { scenario.signers.contains($0.partyIndex) }
            let digest = scenario.digest ?? stream.bytes(count: 32)
            var seeds: [Int: [UInt8]] = [:]
            for index in scenario.signers { seeds[index] = stream.bytes(count: 32) }
            let inputs = Inputs(
                shares: signers, digest: digest, path: try scenario.path.map { try DerivationPath($0) }, seeds: seeds)
            var transcript: [Entry] = []
            let (signatures, _) = try replay(inputs) { sent in
                transcript.append(sent)
                return sent.payload
            }
            var fields: [(key: String, value: JSONValue)] = [
                ("shares", .array(signers.map(VectorFixtures.json))), ("digest", .hex(digest)),
            ]
            if let path = scenario.path { fields.append(("path", .string(path))) }
            fields.append(("seeds", .object(scenario.signers.map { (String($0), .hex(seeds[$0]!)) })))
            cases.append(
                CaseBuilder.valid(
                    scenario.id,
                    fields + [
                        ("signature", signatureJSON(signatures[scenario.signers[0]]!)),
                        ("transcript", .array(transcript.map(\.json))),
                    ]))
            for tamper in scenario.tampers {
                guard
                    let position = transcript.firstIndex(where: {
                        $0.round == tamper.round && $0.from == tamper.from && $0.to == tamper.to
                    })
                else { throw VectorProblem("\(scenario.id) sends no \(tamper.round) from \(tamper.from)") }
                var changed = transcript
                tamper.change(&changed[position].payload, transcript)
                cases.append(
                    CaseBuilder.invalid(
                        "\(scenario.id)-\(tamper.name)", .ecdsaCheckFailed,
                        fields + [
                            ("culprit", tamper.culprit.map { .integer($0) } ?? .null),
                            ("transcript", .array(changed.map(\.json))),
                        ]))
            }
        }
        guard let only else { return cases }
        return cases.filter { value in only.contains { value["id"] == .string($0) } }
    }
}

@testable import ShareCrypto
import Testing

/// DKLs23 sessions run in process over a freshly dealt Shamir set (ShareCrypto level; the
/// ShareRecovery roles over share records have their own suite).
@Suite("DKLs23 threshold ECDSA sessions")
struct ECDSASigningSessionTests {
    struct Wallet {
        let publicKey: Point
        let shares: [Int: Scalar]
        let bindings: [Int: ECDSAPartyBinding]
    }

    static func wallet(threshold: Int, parties: Int, seed: UInt8, generation: UInt32 = 0) throws -> Wallet {
        let random = DeterministicRandom(seed: [seed, 0xEC])
        let coefficients = (0..<threshold).map { _ in Scalar.random(on: .secp256k1, using: random) }
        let setId = random.bytes(count: 16)
        var shares = [Int: Scalar]()
        var bindings = [Int: ECDSAPartyBinding]()
        for index in 1...parties {
            let x = Scalar(UInt64(index), curve: .secp256k1)
            shares[index] = coefficients.reversed().reduce(Scalar(0, curve: .secp256k1)) { $0 * x + $1 }
            bindings[index] = try ECDSAPartyBinding(index: index, setId: setId, generation: generation)
        }
        return Wallet(publicKey: try Point(generatorTimes: coefficients[0]), shares: shares, bindings: bindings)
    }

    /// Pair setups among `parties`, by owner then peer.
    static func setups(_ wallet: Wallet, parties: [Int], seed: UInt8) throws -> [Int: [Int: ECDSAPairSetup]] {
        var result = [Int: [Int: ECDSAPairSetup]]()
        for i in parties {
            for j in parties where i < j {
                let a = try ECDSAPairSetupParty(
                    own: wallet.bindings[i]!, peer: wallet.bindings[j]!,
                    random: DeterministicRandom(seed: [seed, UInt8(i), UInt8(j), 1]))
                let b = try ECDSAPairSetupParty(
                    own: wallet.bindings[j]!, peer: wallet.bindings[i]!,
                    random: DeterministicRandom(seed: [seed, UInt8(i), UInt8(j), 2]))
                let a2 = try a.round2(peerMessage: b.round1Message)
                let b2 = try b.round2(peerMessage: a.round1Message)
                result[i, default: [:]][j] = try a.finish(peerMessage: b2)
                result[j, default: [:]][i] = try b.finish(peerMessage: a2)
            }
        }
        return result
    }

    static func sign(
        _ wallet: Wallet, signers: [Int], setups: [Int: [Int: ECDSAPairSetup]], digest: [UInt8], tweak: Scalar? = nil,
        seed: UInt8 = 7
    ) throws -> ECDSASignature {
        let tweak = tweak ?? Scalar(0, curve: .secp256k1)
        var sessions = [Int: ECDSASigningSession]()
        for i in signers {
            let input = ECDSASigningSession.Input(
                own: wallet.bindings[i]!, share: wallet.shares[i]!,
                peers: signers.filter { $0 != i }.map { wallet.bindings[$0]! },
                setups: setups[i] ?? [:], publicKey: wallet.publicKey, tweak: tweak, digest: digest)
            sessions[i] = try ECDSASigningSession(input, random: DeterministicRandom(seed: [seed, UInt8(i)]))
        }
        var inbox = [Int: [Int: [UInt8]]]()
        for i in signers {
            for (j, message) in try sessions[i]!.round1Messages() {
                inbox[j, default: [:]][i] = message
            }
        }
        var inbox2 = [Int: [Int: [UInt8]]]()
        for i in signers {
            for (j, message) in try sessions[i]!.round2(inbox[i]!) {
                inbox2[j, default: [:]][i] = message
            }
        }
        var broadcasts = [Int: [UInt8]]()
        for i in signers {
            broadcasts[i] = try sessions[i]!.round3(inbox2[i]!)
        }
        return try sessions[signers[0]]!.finish(broadcasts)
    }

    static let digest = SHA256.hash(Array("DKLs23 in this engine".utf8))

    @Test("2-of-2 signs; the signature verifies with libsecp256k1 (low s) and recovers Y")
    func twoOfTwo() throws {
        let wallet = try Self.wallet(threshold: 2, parties: 2, seed: 1)
        let setups = try Self.setups(wallet, parties: [1, 2], seed: 1)
        let signature = try Self.sign(wallet, signers: [1, 2], setups: setups, digest: Self.digest)
        #expect(signature.isValid(digest: Self.digest, publicKey: wallet.publicKey))
        #expect(try signature.recoverPublicKey(digest: Self.digest) == wallet.publicKey)
        // A second session over the same setups signs again (fresh seeds).
        let again = try Self.sign(wallet, signers: [1, 2], setups: setups, digest: Self.digest, seed: 8)
        #expect(again.isValid(digest: Self.digest, publicKey: wallet.publicKey))
        #expect(again.r != signature.r)
    }

    @Test("fixed seeds replay: the same setups and session seeds give the same signature; a tweak signs for Y + t·G")
    func replayAndTweak() throws {
        let wallet = try Self.wallet(threshold: 2, parties: 3, seed: 2)
        let tweak = Scalar(77, curve: .secp256k1)
        let first = try Self.sign(
            wallet, signers: [1, 3], setups: try Self.setups(wallet, parties: [1, 3], seed: 5), digest: Self.digest,
            tweak: tweak)
        let second = try Self.sign(
            wallet, signers: [1, 3], setups: try Self.setups(wallet, parties: [1, 3], seed: 5), digest: Self.digest,
            tweak: tweak)
        #expect(first == second)
        let child = try wallet.publicKey + Point(generatorTimes: tweak)
        #expect(first.isValid(digest: Self.digest, publicKey: child))
        #expect(!first.isValid(digest: Self.digest, publicKey: wallet.publicKey))
    }

    @Test("three signers of a 3-of-4 set: zero-shares of three pairs cancel and the signature verifies")
    func threeSigners() throws {
        let wallet = try Self.wallet(threshold: 3, parties: 4, seed: 6)
        let signers = [1, 2, 4]
        let signature = try Self.sign(
            wallet, signers: signers, setups: try Self.setups(wallet, parties: signers, seed: 6), digest: Self.digest)
        #expect(signature.isValid(digest: Self.digest, publicKey: wallet.publicKey))
        #expect(try signature.recoverPublicKey(digest: Self.digest) == wallet.publicKey)
    }

    /// Party 1's session input in a 2-of-2 wallet over fresh setups, both from `seed`, and the setups.
    static func partyOneInput(seed: UInt8) throws -> (ECDSASigningSession.Input, [Int: [Int: ECDSAPairSetup]]) {
        let wallet = try Self.wallet(threshold: 2, parties: 2, seed: seed)
        let setups = try Self.setups(wallet, parties: [1, 2], seed: seed)
        let input = ECDSASigningSession.Input(
            own: wallet.bindings[1]!, share: wallet.shares[1]!, peers: [wallet.bindings[2]!], setups: setups[1]!,
            publicKey: wallet.publicKey, tweak: Scalar(0, curve: .secp256k1), digest: Self.digest)
        return (input, setups)
    }

    @Test("a round runs once, and a discarded setup refuses the next session")
    func oneUseAndDiscard() throws {
        let (input, setups) = try Self.partyOneInput(seed: 4)
        let session = try ECDSASigningSession(input, random: DeterministicRandom(seed: [9]))
        _ = try session.round1Messages()
        #expect(throws: ShareCryptoError(.nonceReused, "")) { try session.round1Messages() }
        // A round-1 message that does not parse names its sender and discards the setup with it.
        let error = #expect(throws: ShareCryptoError.self) { try session.round2([2: [1, 2, 3]]) }
        #expect(error?.code == .ecdsaCheckFailed && error?.party == 2)
        #expect(setups[1]![2]!.isDiscarded)
        #expect(throws: ShareCryptoError(.ecdsaCheckFailed, "")) {
            try ECDSASigningSession(input, random: DeterministicRandom(seed: [10]))
        }
    }

    /// `bytes` through `read`: the value read writes the same bytes, and one byte less is refused.
    static func readsBack(_ bytes: [UInt8], _ read: ([UInt8]) throws -> [UInt8]) throws {
        #expect(try read(bytes) == bytes)
        #expect(throws: ShareCryptoError(.invalidEncoding, "")) { try read(Array(bytes.dropLast())) }
    }

    @Test("every message of a real setup and signature reads back through ECDSAMessage as its own bytes")
    func messagesReadBack() throws {
        let wallet = try Self.wallet(threshold: 2, parties: 2, seed: 11)
        let a = try ECDSAPairSetupParty(
            own: wallet.bindings[1]!, peer: wallet.bindings[2]!, random: DeterministicRandom(seed: [11, 1]))
        let b = try ECDSAPairSetupParty(
            own: wallet.bindings[2]!, peer: wallet.bindings[1]!, random: DeterministicRandom(seed: [11, 2]))
        try Self.readsBack(a.round1Message) { try ECDSAMessage.SetupRound1($0, from: 1).bytes }
        try Self.readsBack(try b.round2(peerMessage: a.round1Message)) {
            try ECDSAMessage.SetupRound2($0, from: 2).bytes
        }
        let setups = try Self.setups(wallet, parties: [1, 2], seed: 11)
        let sessions = try [1, 2].map { i in
            try ECDSASigningSession(
                ECDSASigningSession.Input(
                    own: wallet.bindings[i]!, share: wallet.shares[i]!, peers: [wallet.bindings[3 - i]!],
                    setups: setups[i]!, publicKey: wallet.publicKey, tweak: Scalar(0, curve: .secp256k1),
                    digest: Self.digest),
                random: DeterministicRandom(seed: [11, UInt8(i), 3]))
        }
        let round1 = try sessions.map { try $0.round1Messages() }
        try Self.readsBack(round1[0][2]!) { try ECDSAMessage.SigningRound1($0, from: 1).bytes }
        let round2 = [try sessions[0].round2([2: round1[1][1]!]), try sessions[1].round2([1: round1[0][2]!])]
        try Self.readsBack(round2[0][2]!) { try ECDSAMessage.SigningRound2($0, from: 1).bytes }
        let round3 = try sessions[0].round3([2: round2[1][1]!])
        try Self.readsBack(round3) { try ECDSAMessage.SigningRound3($0, from: 1).bytes }
    }

    @Test("a stored round state with a zero instance key does not parse (found by fuzz-ecdsa-round-state)")
    func zeroInstanceKeyState() throws {
        let (input, _) = try Self.partyOneInput(seed: 12)
        let session = try ECDSASigningSession(input, random: DeterministicRandom(seed: [12]))
        _ = try session.round1Messages()
        var bytes = try session.exportState().revealedBytes()
        #expect(throws: Never.self) { try ECDSASigningSession(input, state: SecureBytes(copying: bytes)) }
        // version (1), phase (1), input hash (32), nonce (32), then r_i.
        for offset in 66..<98 { bytes[offset] = 0 }
        #expect(throws: ShareCryptoError(.invalidEncoding, "")) {
            try ECDSASigningSession(input, state: SecureBytes(copying: bytes))
        }
    }

    @Test("ECDSAStream.chacha20 is ChaCha20 with nonce 0: the all-zero key's first block (RFC 7539 A.1 #1)")
    func chachaKnownAnswer() {
        var out = [UInt8](repeating: 0, count: 64)
        let key = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { key in out.withUnsafeMutableBytes { ECDSAStream.chacha20(key: key, into: $0) } }
        #expect(
            Hex.encode(out)
                == "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
                + "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586")
    }

    @Test("ECDSAStream.xchacha20 is XChaCha20: the first of libsodium's own stream test vectors")
    func xchachaKnownAnswer() {
        let key = Hex.decode("79c99798ac67300bbb2704c95c341e3245f3dcb21761b98e52ff45b24f304fc4")!
        let nonce = Hex.decode("b33ffd3096479bcfbc9aee49417688a0a2554f8d95389419")!
        var out = [UInt8](repeating: 0, count: 29)
        key.withUnsafeBytes { key in
            nonce.withUnsafeBytes { nonce in
                out.withUnsafeMutableBytes { ECDSAStream.xchacha20(key: key, nonce: nonce, into: $0) }
            }
        }
        #expect(Hex.encode(out) == "c6e9758160083ac604ef90e712ce6e75d7797590744e0cf060f013739c")
    }

    @Test("the extension's transpose puts bit j of column l at bit l of row j")
    func transposeIsBitwise() {
        let columns = DeterministicRandom(seed: [21]).bytes(count: BaseOT.count * OTExtension.columnByteCount)
        let rows = columns.withUnsafeBytes { OTExtension.transpose($0) }.revealedBytes()
        func bit(_ bytes: [UInt8], _ index: Int) -> UInt8 { (bytes[index / 8] >> UInt8(index % 8)) & 1 }
        var mismatches = 0
        for l in 0..<BaseOT.count {
            for j in 0..<OTExtension.rowCount
            where bit(columns, l * OTExtension.columnByteCount * 8 + j) != bit(rows, j * 256 + l) {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
    }

    @Test("the check's weighted sums equal Σ χ_j·row_j by the bitwise GF(2^128) product, on both halves")
    func weightedSumsMatchProducts() {
        let random = DeterministicRandom(seed: [22])
        let count = 40
        let rows = random.bytes(count: count * 32)
        let chiBytes = random.bytes(count: count * 16)
        let chi = (0..<(2 * count)).map { index in
            chiBytes[(index * 8)..<(index * 8 + 8)].withUnsafeBytes {
                UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))
            }
        }
        var expected = (GF128.Element.zero, GF128.Element.zero)
        for j in 0..<count {
            let weight = GF128.Element(low: chi[2 * j], high: chi[2 * j + 1])
            expected.0 = expected.0 ^ (weight * GF128.Element(rows[(j * 32)..<(j * 32 + 16)]))
            expected.1 = expected.1 ^ (weight * GF128.Element(rows[(j * 32 + 16)..<(j * 32 + 32)]))
        }
        let sums = rows.withUnsafeBytes { rows in
            chi.withUnsafeBufferPointer { GF128.weightedSums(rows: rows, chi: $0, count: count) }
        }
        #expect(sums.0 == expected.0 && sums.1 == expected.1)
        #expect(sums.0 != .zero)
    }

    @Test("a row's pads are its ote/pad-key hash expanded by ChaCha20, 48 bytes per scalar, as docs/ecdsa.md says")
    func padsAsDocumented() {
        let random = DeterministicRandom(seed: [23])
        let session = random.bytes(count: 32)
        let rows = random.bytes(count: 3 * 32)
        let delta = random.bytes(count: 32)
        let pads = OTPads(session: session)
        for (index, flip) in [(0, false), (2, false), (2, true)] {
            let row = (0..<32).map { rows[index * 32 + $0] ^ (flip ? delta[$0] : 0) }
            let key = ECDSAHash.digest("ote/pad-key", [.bytes(session), .bytes(ECDSAWire.uint32(index)), .bytes(row)])
            var stream = [UInt8](repeating: 0, count: 192)
            key.withUnsafeBytes { key in stream.withUnsafeMutableBytes { ECDSAStream.chacha20(key: key, into: $0) } }
            let expected = (0..<4).map { k in
                stream[(k * 48)..<(k * 48 + 48)].withUnsafeBytes {
                    Scalar(reducingBigEndian: $0, curve: .secp256k1).limbs
                }
            }
            let derived = [ScalarField.Limbs](unsafeUninitializedCapacity: 4) { buffer, initialized in
                rows.withUnsafeBytes { rows in
                    delta.withUnsafeBytes { delta in
                        pads.derive(rows: rows, index: index, flip: flip ? delta : nil, into: buffer.baseAddress!)
                    }
                }
                initialized = 4
            }
            #expect(derived == expected)
        }
    }
}

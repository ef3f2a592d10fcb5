import ShareCrypto
import ShareRecovery

/// The measured cost of each primitive on one curve, and the floors derived from operation counts.
struct PrimitiveCosts {
    var generatorMultiply = 0.0
    var pointMultiply = 0.0
    var add = 0.0
    var parse = 0.0
    var aead = 0.0
    var hkdf = 0.0
    var open = 0.0
    var seal = 0.0
    /// One SHA-256 (secp256k1) or SHA-512 (ed25519) block: the FROST and DKG hashes.
    var sha = 0.0
    /// One compression of SHA-256 and of SHA-512, timed on a long message: threshold ECDSA's hashes,
    /// counted in compressions (``ECDSACounts``).
    var sha256Block = 0.0
    var sha512Block = 0.0
    /// One ChaCha20 block (64 bytes of keystream), timed on a long keystream: the OT extension's
    /// expansions (``ECDSACounts``).
    var chachaBlock = 0.0

    /// The unavoidable operations of one step, counted from the protocol (docs/formats.md §3, §4, §7).
    struct Count {
        var generatorMultiply = 0, pointMultiply = 0, add = 0, parse = 0, aead = 0, hkdf = 0, open = 0, seal = 0,
            sha = 0, sha256Block = 0, sha512Block = 0, chachaBlock = 0

        static func + (a: Count, b: Count) -> Count {
            Count(
                generatorMultiply: a.generatorMultiply + b.generatorMultiply,
                pointMultiply: a.pointMultiply + b.pointMultiply,
                add: a.add + b.add, parse: a.parse + b.parse, aead: a.aead + b.aead, hkdf: a.hkdf + b.hkdf,
                open: a.open + b.open, seal: a.seal + b.seal, sha: a.sha + b.sha,
                sha256Block: a.sha256Block + b.sha256Block, sha512Block: a.sha512Block + b.sha512Block,
                chachaBlock: a.chachaBlock + b.chachaBlock)
        }

        static func * (times: Int, a: Count) -> Count {
            (0..<times).reduce(Count()) { sum, _ in sum + a }
        }

        var summary: String {
            "\(generatorMultiply) k·G, \(pointMultiply) k·P, \(add) P+Q, \(parse) parse, \(aead) AEAD, \(hkdf) HKDF, \(open) open, \(seal) seal"
                + (sha > 0 ? ", \(sha) SHA" : "")
                + (sha256Block + sha512Block > 0
                    ? ", \(sha256Block) SHA-256 and \(sha512Block) SHA-512 compressions" : "")
                + (chachaBlock > 0 ? ", \(chachaBlock) ChaCha20 blocks" : "")
        }
    }

    func floor(_ count: Count) -> Double {
        Double(count.generatorMultiply) * generatorMultiply + Double(count.pointMultiply) * pointMultiply
            + Double(count.add) * add + Double(count.parse) * parse + Double(count.aead) * aead
            + Double(count.hkdf) * hkdf + Double(count.open) * open + Double(count.seal) * seal + Double(count.sha)
            * sha + Double(count.sha256Block) * sha256Block + Double(count.sha512Block) * sha512Block
            + Double(count.chachaBlock) * chachaBlock
    }
}

/// Operation counts for t-of-n sets with the user at index 1 and the custodian at 2…n, for the
/// cheapest correct algorithm we know (docs/performance.md): Feldman evaluations by Horner's rule
/// with small public multipliers (double-and-add); X_i computed once per record; a dealer's D_{j,0}
/// as λ_j·X_j by small multiples when λ_j is a small integer (always for Q = {1, …, t}); each dealer
/// checked once per process, as b·D_{j,0} == a·X_j for λ_j = a/b small, the last one by
/// Σ_j D_{j,0} == Y (the sum A'_0 is made anyway); every sub-share checked on its own with one k·G
/// (docs/formats.md §3 step 3), which implies step 5, against Σ_m k^m·D_{j,m} stepped by one addition
/// from the previous receiver's when t' = 2.
///
/// `naive: true` gives the previous floor, kept for comparison: D_{j,0} by k·G, every dealer's
/// X_j recomputed and checked with one k·P for λ_j·X_j.
enum OperationCounts {
    /// Point additions (doublings included) for n·P with a small public n, or one k·P beyond 5 bits.
    static func smallMultiple(_ n: Int) -> PrimitiveCosts.Count {
        let n = n.magnitude
        if n <= 1 { return PrimitiveCosts.Count() }
        if n >= 32 { return PrimitiveCosts.Count(pointMultiply: 1) }
        let bits = UInt.bitWidth - n.leadingZeroBitCount
        return PrimitiveCosts.Count(add: (bits - 1) + (n.nonzeroBitCount - 1))
    }

    /// X_i = (…(A_{t−1}·i + A_{t−2})·i + …)·i + A_0.
    static func feldman(index: Int, threshold: Int) -> PrimitiveCosts.Count {
        var count = PrimitiveCosts.Count()
        for _ in 1..<threshold { count = count + smallMultiple(index) + PrimitiveCosts.Count(add: 1) }
        return count
    }

    /// λ_j^Q = a/b with b > 0, in lowest terms (Q's indices are small).
    static func lagrange(_ j: Int, _ dealers: [Int]) -> (numerator: Int, denominator: Int) {
        var numerator = 1, denominator = 1
        for m in dealers where m != j {
            numerator *= m
            denominator *= m - j
        }
        var (x, y) = (numerator.magnitude, denominator.magnitude)
        while y != 0 { (x, y) = (y, x % y) }
        let sign = denominator < 0 ? -1 : 1
        return (sign * numerator / Int(x), sign * denominator / Int(x))
    }

    /// Parse and validate a record: parse t commitments, x_i·G, X_i.
    static func recordParse(index: Int, threshold: Int) -> PrimitiveCosts.Count {
        PrimitiveCosts.Count(generatorMultiply: 1, parse: threshold) + feldman(index: index, threshold: threshold)
    }

    /// One dealer j of Q whose record already knows X_j: t' commitments, D_{j,0} = λ_j·X_j when λ_j
    /// is a small integer. The plan's own index (1 here) takes it from the plan (``planSetup``).
    static func dealer(_ j: Int, dealers: [Int], newThreshold: Int, naive: Bool = false) -> PrimitiveCosts.Count {
        let (a, b) = lagrange(j, dealers)
        if naive || b != 1 || a.magnitude >= 32 { return PrimitiveCosts.Count(generatorMultiply: newThreshold) }
        return PrimitiveCosts.Count(generatorMultiply: newThreshold - 1)
            + (j == 1 ? PrimitiveCosts.Count() : smallMultiple(a))
    }

    /// The plan computes λ_1·X_1 once for the user's own dealing and its dealer check.
    static func planSetup(dealers: [Int], naive: Bool) -> PrimitiveCosts.Count {
        let (a, b) = lagrange(1, dealers)
        return naive || b != 1 || a.magnitude >= 32 ? PrimitiveCosts.Count() : smallMultiple(a)
    }

    /// Step 2 once per process. `knownPublicShare`: the index whose X_j the plan's old record knows.
    static func dealerChecks(dealers: [Int], threshold: Int, knownPublicShare: Int, naive: Bool = false)
        -> PrimitiveCosts.Count
    {
        var count = PrimitiveCosts.Count()
        for j in dealers {
            if naive {
                count = count + feldman(index: j, threshold: threshold) + PrimitiveCosts.Count(pointMultiply: 1)
                continue
            }
            // The last dealer: Σ_j D_{j,0} == Y, which is A'_0, counted with the new commitments.
            if j == dealers.last { break }
            let (a, b) = lagrange(j, dealers)
            // The plan's own integer λ_j·X_j is compared as computed at plan setup.
            if j == knownPublicShare, b == 1, a.magnitude < 32 { continue }
            if j != knownPublicShare { count = count + feldman(index: j, threshold: threshold) }
            count =
                count
                + (a.magnitude < 32 && b < 32
                    ? smallMultiple(a) + smallMultiple(b) : PrimitiveCosts.Count(pointMultiply: 1))
        }
        return count
    }

    /// Resharing with every role in one process: dealer checks once, new commitments summed once,
    /// then per new party and dealer g_j(k)·G against Σ_m k^m·D_{j,m}.
    static func resharing(
        dealers: [Int], threshold: Int, newThreshold: Int, receivers: [Int], knownPublicShare: Int = 1,
        naive: Bool = false
    ) -> PrimitiveCosts.Count {
        var count = PrimitiveCosts.Count(add: (dealers.count - 1) * newThreshold)
        count =
            count
            + dealerChecks(dealers: dealers, threshold: threshold, knownPublicShare: knownPublicShare, naive: naive)
        for (position, k) in receivers.enumerated() {
            // t' = 2: the next consecutive receiver's Σ_m k^m·D_{j,m} is the last one's plus D_{j,1}.
            let stepped = !naive && newThreshold == 2 && position > 0 && receivers[position - 1] == k - 1
            let evaluation = stepped ? PrimitiveCosts.Count(add: 1) : feldman(index: k, threshold: newThreshold)
            for _ in dealers { count = count + PrimitiveCosts.Count(generatorMultiply: 1) + evaluation }
        }
        return count
    }

    /// One receiver k over |Q| dealers, dealer checks included.
    static func receiver(index: Int, dealers: [Int], threshold: Int, newThreshold: Int, naive: Bool = false)
        -> PrimitiveCosts.Count
    {
        resharing(dealers: dealers, threshold: threshold, newThreshold: newThreshold, receivers: [index], naive: naive)
    }

    /// Every dealer of Q = {1, …, t} dealing t' commitments.
    static func dealing(threshold t: Int, newThreshold: Int, naive: Bool) -> PrimitiveCosts.Count {
        (1...t).reduce(PrimitiveCosts.Count()) {
            $0 + dealer($1, dealers: Array(1...t), newThreshold: newThreshold, naive: naive)
        }
    }

    /// A full offline recovery: ``RecoveryEngine`` over an in-process custodian, so each role does its
    /// own work as it would on its own machine. The custodian selects its backup shares, plans and
    /// deals; the client deals and receives its new share (index 1); the custodian receives its own
    /// (2…n). Each receipt checks the dealers and sums the new commitments in its own role, and the
    /// custodian's first receiver cannot step from the client's. 2-of-2: 8 k·G, 0 k·P, 13 P+Q,
    /// 2 parse, 1 AEAD, 1 HKDF (none with Argon2id), 1 open, 0 seal.
    static func offlineRecovery(threshold t: Int, parties n: Int, argon: Bool, naive: Bool = false)
        -> PrimitiveCosts.Count
    {
        var count = PrimitiveCosts.Count(aead: 1, hkdf: argon ? 0 : 1)
        count = count + recordParse(index: 1, threshold: t)
        // Custodian candidates: their commitments equal the user's, so only unseal, x_j·G and X_j
        // (for t = 2 stepped from the user's X_1: X_j = X_1 + (j − 1)·A_1).
        for custodian in 2...t {
            let publicShare =
                !naive && t == 2
                ? smallMultiple(custodian - 1) + PrimitiveCosts.Count(add: 1) : feldman(index: custodian, threshold: t)
            count = count + PrimitiveCosts.Count(generatorMultiply: 1, open: 1) + publicShare
        }
        count =
            count + planSetup(dealers: Array(1...t), naive: naive)
            + dealing(threshold: t, newThreshold: t, naive: naive)
        let receipt = { (receivers: [Int]) in
            resharing(dealers: Array(1...t), threshold: t, newThreshold: t, receivers: receivers, naive: naive)
        }
        return count + receipt([1]) + receipt(Array(2...n))
    }

    /// A 2-of-2 cloudKey recovery through the reference server, both parties: the offline recovery's
    /// work, each party's dealing sealed to the other's session key and opened, and the custodian's
    /// six at-rest AEAD calls (open its signing share; seal and open the session's secrets and its
    /// pending state; seal the new share). The two session key pairs are left out (a lower bound).
    static var serverSession: PrimitiveCosts.Count {
        offlineRecovery(threshold: 2, parties: 2, argon: false) + PrimitiveCosts.Count(aead: 6, open: 2, seal: 2)
    }

    /// A full backup: t dealers, n receivers, one AEAD seal, n−1 sealed boxes.
    static func backup(threshold t: Int, parties n: Int, naive: Bool = false) -> PrimitiveCosts.Count {
        PrimitiveCosts.Count(aead: 1, hkdf: 1, seal: n - 1) + planSetup(dealers: Array(1...t), naive: naive)
            + dealing(threshold: t, newThreshold: t, naive: naive)
            + resharing(dealers: Array(1...t), threshold: t, newThreshold: t, receivers: Array(1...n), naive: naive)
    }
}

/// Operation counts of the wallet protocols (docs/formats.md §10–§11) with every party in one process,
/// each doing its own work as it would on its own machine.
enum ProtocolCounts {
    /// One hash to a scalar: SHA-512 once on ed25519; hash_to_field (expand_message_xmd, L = 48) is
    /// three SHA-256 blocks on secp256k1.
    static func hashToScalar(_ curve: Curve) -> PrimitiveCosts.Count {
        PrimitiveCosts.Count(sha: curve == .ed25519 ? 1 : 3)
    }

    /// A DKG of n parties, threshold t. Per party: t commitments and R (k·G each) and its challenge;
    /// each other party's proof (μ·G, c·C_{i,0}, one addition, the challenge); each sub-share received
    /// (f_i(j)·G against Σ_k j^k·C_{i,k} by Horner); the group commitments summed; the setId hash.
    static func dkg(threshold t: Int, parties n: Int, curve: Curve) -> PrimitiveCosts.Count {
        var total = PrimitiveCosts.Count()
        for j in 1...n {
            var party = PrimitiveCosts.Count(generatorMultiply: t + 1) + hashToScalar(curve)
            party =
                party + (n - 1)
                * (PrimitiveCosts.Count(generatorMultiply: 1, pointMultiply: 1, add: 1) + hashToScalar(curve))
            party =
                party + (n - 1)
                * (PrimitiveCosts.Count(generatorMultiply: 1) + OperationCounts.feldman(index: j, threshold: t))
            party = party + PrimitiveCosts.Count(add: (n - 1) * t, sha: 1)
            total = total + party
        }
        return total
    }

    /// Adding a device (docs/devices.md), every role in one process on a plan whose old record is the
    /// custodian's (index 2, as the server makes it): D_{1,1} and D_{2,1} (k·G each), D_{1,0} = 2·X_1
    /// and D_{2,0} = −X_2 (the plan's own); the approver's check of the custodian's dealing (dealer 1
    /// once, A'_0 and A'_1 summed); the custodian's receipt at index 2 and the new device's at index 1,
    /// each with its dealer checks; three sub-shares sealed and opened.
    static func deviceAdd() -> PrimitiveCosts.Count {
        let dealers = [1, 2]
        let receipt = { (k: Int) in
            OperationCounts.resharing(
                dealers: dealers, threshold: 2, newThreshold: 2, receivers: [k], knownPublicShare: 2)
        }
        return PrimitiveCosts.Count(generatorMultiply: 2, add: 1 + 2, open: 3, seal: 3)
            + OperationCounts.dealerChecks(dealers: dealers, threshold: 2, knownPublicShare: 2) + receipt(2)
            + receipt(1)
    }

    /// One signature by t signers of a t-of-n set. Each signer: two nonces (k·G each) and their
    /// hashes, and the session values (binding factors or nonce coefficient, group commitment,
    /// challenge); the aggregator: the session values again, every signer's public share and a
    /// check of its signature share (z_i·G against D_i + ρ_i·E_i + cλ_i·X_i), and the final
    /// single-signer verification (one k·G, one k·P).
    static func signing(threshold t: Int, mode: SigningMode, curve: Curve) -> PrimitiveCosts.Count {
        let commit: PrimitiveCosts.Count
        let session: PrimitiveCosts.Count
        switch mode {
        case .rfc9591:
            commit = PrimitiveCosts.Count(generatorMultiply: 2) + 2 * hashToScalar(curve)
            // H4 and H5 (one block each), t binding factors, R = Σ D_i + ρ_i·E_i, the challenge.
            session = PrimitiveCosts.Count(pointMultiply: t, add: 2 * t - 1, sha: 2) + (t + 1) * hashToScalar(curve)
        case .bip340:
            // NonceGen: the aux mask and two nonce hashes. Sign, as the draft requires: d'·G against
            // the signer's public share, and its own partial signature verified before release.
            commit =
                PrimitiveCosts.Count(generatorMultiply: 2, sha: 3)
                + PrimitiveCosts.Count(generatorMultiply: 2, pointMultiply: 2, add: 2)
            // ValidateSignersCtx (t public shares and Y parsed, Σ λ_i·X_i == Y), NonceAgg,
            // b = H(noncecoef), R = R1 + b·R2, e = H(challenge).
            session = PrimitiveCosts.Count(pointMultiply: t + 1, add: (t - 1) + 2 * (t - 1) + 1, parse: t + 1, sha: 2)
        }
        var total = t * (commit + session) + session
        for i in 1...t {
            total =
                total + OperationCounts.feldman(index: i, threshold: t)
                + PrimitiveCosts.Count(generatorMultiply: 1, pointMultiply: 2, add: 2)
        }
        return total + PrimitiveCosts.Count(generatorMultiply: 1, pointMultiply: 1, add: 1) + hashToScalar(curve)
    }
}

/// Operation counts of threshold ECDSA (DKLs23 as docs/ecdsa.md specifies it), 2-of-2 with both
/// parties in one process. Points as for FROST; hashes in compression blocks of the hashes the
/// transcript specifies, each input absorbed once (a shared prefix once), and keystreams in ChaCha20
/// blocks (an XChaCha20 stream one more, for its HChaCha20 subkey): what any implementation of this
/// transcript must compute.
///
/// A signature (per direction of the pair, each party is OT-extension receiver in one):
/// - receiver: 2 × 256 XChaCha20 columns of 84 bytes, the check's key (SHA-256 over the 21.5 KB
///   message) and its 10,752 bytes of ChaCha20 challenges, 416 pad keys (one compression each after
///   the shared tag-and-dsid block) with 192 bytes of ChaCha20 each, τ hashed once (53 KB), θ, μ;
/// - sender: 256 columns, the same check key and challenges, 2 × 416 pad keys and streams, τ once,
///   θ, μ;
/// - per party: R_i, pk_i, Γ^u, Γ^v (k·G each), the round-3 checks χ·R_j − d^u·G and χ·pk_j − d^v·G
///   (2 k·G, 2 k·P, 2 P+Q), Σ pk and Σ R (one P+Q each), 4 points of round 2 parsed, the
///   commitment, session and zero-share hashes; then one verification (k·G, k·P, P+Q).
/// 2-of-2: 13 k·G, 5 k·P, 9 P+Q, 8 parse, about 7,240 SHA-256 and 10 SHA-512 compressions and
/// 12,770 ChaCha20 blocks.
///
/// A pair setup, per party: A and K (k·G), the peer's proof (e·A, one P+Q, z·G), 256 base OTs as
/// receiver (b_l·G, B_l = b_l·G + Δ_l·A selected without a branch, b_l·A, one key hash each) and as
/// sender (a·A once, then a·B_l and a·(B_l − A) = a·B_l − a·A: one k·P and one P+Q, two key hashes
/// each), 2 + 256 points parsed. 2-of-2: 518 k·G, 1,028 k·P, 1,026 P+Q, 516 parse, about 3,090
/// SHA-256 compressions: the curve is the floor.
enum ECDSACounts {
    /// SHA-256 compressions of an `n`-byte message (padding included).
    static func sha256Blocks(_ n: Int) -> Int { (n + 9 + 63) / 64 }
    /// SHA-512 compressions of an `n`-byte message (padding included).
    static func sha512Blocks(_ n: Int) -> Int { (n + 17 + 127) / 128 }
    /// ChaCha20 blocks of an `n`-byte keystream.
    static func chachaBlocks(_ n: Int) -> Int { (n + 63) / 64 }

    /// The length of a framed hash input (docs/ecdsa.md "Hashes"): the tag
    /// `share-recovery/ecdsa@1/NAME` and each part, each after a 4-byte length.
    static func framed(_ tag: String, _ parts: [Int]) -> Int {
        4 + "share-recovery/ecdsa@1/\(tag)".utf8.count + parts.reduce(0) { $0 + 4 + $1 }
    }

    static func digest(_ tag: String, _ parts: [Int]) -> Int { sha256Blocks(framed(tag, parts)) }
    static func scalar(_ tag: String, _ parts: [Int]) -> Int { sha512Blocks(framed(tag, parts)) }

    /// One direction of the signature's multiplication: hashes and keystreams of its OT-extension
    /// receiver and sender.
    static var multiplicationDirection: PrimitiveCosts.Count {
        let batch = 416, rows = 672, columnBytes = rows / 8
        let tau = batch * 4 * 32
        let column = 1 + chachaBlocks(columnBytes)
        let checkKey = digest("ote/check-key", [32, 256 * columnBytes])
        let challenges = chachaBlocks(rows * 16)
        // The pad key's first block (tag and dsid) once per side; then the rest of the input per row.
        let prefix = 64
        let padKey = sha256Blocks(framed("ote/pad-key", [32, 4, 32]) - prefix)
        let padStream = chachaBlocks(4 * 48)
        let tauDigest = digest("rvole/tau", [32, tau])
        let theta = scalar("rvole/theta", [1, 32])
        let small =
            2 * digest("ote/id", [32, 32]) + 2 * digest("rvole/mu", [32, 32, 32])
            + 2 * digest("session/direction", [32, 2])
        return PrimitiveCosts.Count(
            sha256Block: 2 * checkKey + 2 + 3 * batch * padKey + 2 * tauDigest + small, sha512Block: 4 * theta,
            chachaBlock: 3 * 256 * column + 2 * challenges + 3 * batch * padStream)
    }

    /// A 2-of-2 signature over stored pair setups, both parties, and its verification.
    static var signing: PrimitiveCosts.Count {
        let perParty =
            PrimitiveCosts.Count(generatorMultiply: 6, pointMultiply: 2, add: 4, parse: 4)
            + PrimitiveCosts.Count(
                sha256Block: 2 * digest("commit", [1, 32, 33, 32])
                    + digest("session", [33, 32, 32, 1, 32, 1, 32]),
                sha512Block: scalar("zero-share", [32, 32]))
        return 2 * (perParty + multiplicationDirection)
            + PrimitiveCosts.Count(generatorMultiply: 1, pointMultiply: 1, add: 1)
    }
    /// A 2-of-2 pair setup, both parties.
    static var pairSetup: PrimitiveCosts.Count {
        let key = digest("base-ot/key", [32, 4, 33])
        let perParty = PrimitiveCosts.Count(
            generatorMultiply: 2 + 1 + 256, pointMultiply: 1 + 256 + 1 + 256, add: 1 + 256 + 256, parse: 2 + 256,
            sha256Block: 3 * 256 * key + digest("pair/zero-seed", [21, 21, 32, 32]) + 2
                * digest(
                    "pair/direction", [21, 21]),
            sha512Block: 2 * scalar("base-ot/proof", [32, 33, 33]))
        return 2 * perParty
    }
}

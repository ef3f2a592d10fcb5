import ShareCrypto

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

    /// The unavoidable operations of one step, counted from the protocol (FORMATS.md §3, §4, §7).
    struct Count {
        var generatorMultiply = 0, pointMultiply = 0, add = 0, parse = 0, aead = 0, hkdf = 0, open = 0, seal = 0

        static func + (a: Count, b: Count) -> Count {
            Count(
                generatorMultiply: a.generatorMultiply + b.generatorMultiply, pointMultiply: a.pointMultiply + b.pointMultiply,
                add: a.add + b.add, parse: a.parse + b.parse, aead: a.aead + b.aead, hkdf: a.hkdf + b.hkdf,
                open: a.open + b.open, seal: a.seal + b.seal)
        }

        var summary: String {
            "\(generatorMultiply) k·G, \(pointMultiply) k·P, \(add) P+Q, \(parse) parse, \(aead) AEAD, \(hkdf) HKDF, \(open) open, \(seal) seal"
        }
    }

    func floor(_ count: Count) -> Double {
        Double(count.generatorMultiply) * generatorMultiply + Double(count.pointMultiply) * pointMultiply
            + Double(count.add) * add + Double(count.parse) * parse + Double(count.aead) * aead
            + Double(count.hkdf) * hkdf + Double(count.open) * open + Double(count.seal) * seal
    }
}

/// Operation counts for t-of-n sets with the user at index 1 and the custodian at 2…n, for the
/// cheapest correct algorithm we know: Feldman evaluations by Horner's rule with small public
/// multipliers (double-and-add), each dealer checked once per process (one k·P for λ_j·X_j), and
/// every sub-share checked on its own (FORMATS.md §3 step 3), which implies step 5.
enum OperationCounts {
    /// Point additions (doublings included) for n·P with a small public n, or one k·P beyond 5 bits.
    static func smallMultiple(_ n: Int) -> PrimitiveCosts.Count {
        if n <= 1 { return PrimitiveCosts.Count() }
        if n >= 32 { return PrimitiveCosts.Count(pointMultiply: 1) }
        let bits = Int.bitWidth - n.leadingZeroBitCount
        return PrimitiveCosts.Count(add: (bits - 1) + (n.nonzeroBitCount - 1))
    }

    /// X_i = (…(A_{t−1}·i + A_{t−2})·i + …)·i + A_0.
    static func feldman(index: Int, threshold: Int) -> PrimitiveCosts.Count {
        var count = PrimitiveCosts.Count()
        for _ in 1..<threshold { count = count + smallMultiple(index) + PrimitiveCosts.Count(add: 1) }
        return count
    }

    /// Parse and validate a record: parse t commitments, x_i·G, X_i.
    static func recordParse(index: Int, threshold: Int) -> PrimitiveCosts.Count {
        PrimitiveCosts.Count(generatorMultiply: 1, parse: threshold) + feldman(index: index, threshold: threshold)
    }

    /// One dealer: t' commitments.
    static func dealer(newThreshold: Int) -> PrimitiveCosts.Count {
        PrimitiveCosts.Count(generatorMultiply: newThreshold)
    }

    /// Resharing with every role in one process: dealer checks (X_j, λ_j·X_j) once per dealer, new
    /// commitments summed once, then per new party and dealer g_j(k)·G against Σ_m k^m·D_{j,m}.
    static func resharing(dealers: [Int], threshold: Int, newThreshold: Int, receivers: [Int]) -> PrimitiveCosts.Count {
        var count = PrimitiveCosts.Count(add: (dealers.count - 1) * newThreshold)
        for dealer in dealers { count = count + feldman(index: dealer, threshold: threshold) + PrimitiveCosts.Count(pointMultiply: 1) }
        for k in receivers {
            for _ in dealers {
                count = count + PrimitiveCosts.Count(generatorMultiply: 1) + feldman(index: k, threshold: newThreshold)
            }
        }
        return count
    }

    /// One receiver k over |Q| dealers, dealer checks included.
    static func receiver(index: Int, dealers: [Int], threshold: Int, newThreshold: Int) -> PrimitiveCosts.Count {
        resharing(dealers: dealers, threshold: threshold, newThreshold: newThreshold, receivers: [index])
    }

    /// A full offline recovery, both roles in one process.
    static func offlineRecovery(threshold t: Int, parties n: Int, argon: Bool) -> PrimitiveCosts.Count {
        var count = PrimitiveCosts.Count(aead: 1, hkdf: argon ? 0 : 1)
        count = count + recordParse(index: 1, threshold: t)
        // Custodian candidates: their commitments equal the user's, so only unseal, x_j·G and X_j.
        for custodian in 2...t {
            count = count + PrimitiveCosts.Count(generatorMultiply: 1, open: 1) + feldman(index: custodian, threshold: t)
        }
        count = count + PrimitiveCosts.Count(generatorMultiply: t * t)
        return count + resharing(dealers: Array(1...t), threshold: t, newThreshold: t, receivers: Array(1...n))
    }

    /// A full backup: t dealers, n receivers, one AEAD seal, n−1 sealed boxes.
    static func backup(threshold t: Int, parties n: Int) -> PrimitiveCosts.Count {
        PrimitiveCosts.Count(generatorMultiply: t * t, aead: 1, hkdf: 1, seal: n - 1)
            + resharing(dealers: Array(1...t), threshold: t, newThreshold: t, receivers: Array(1...n))
    }
}

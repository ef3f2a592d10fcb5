public import ShareCrypto

/// Every ECDSA role of a signing subset run in one process (docs/formats.md §12): for offline tools
/// that hold the t shares themselves, and for tests.
public enum ThresholdECDSA {
    /// Pair setups among the shares' parties, every pair once.
    /// - Parameters:
    ///   - shares: Signing shares of one set.
    ///   - seeds: Each party's 32-byte seed by index; fresh random seeds for the parties left out.
    /// - Returns: Each party's setups, by party index.
    /// - Throws: ``ShareRecoveryError/Code/inconsistentShares`` for shares of different sets or
    ///   generations; as ``PairSetupParty``.
    public static func pairSetups(shares: [ShareRecord], seeds: [Int: SecureBytes] = [:])
        throws(ShareRecoveryError) -> [Int: [PairSetup]]
    {
        try checkOneSet(shares)
        var setups = [Int: [PairSetup]]()
        for (position, first) in shares.enumerated() {
            for second in shares[(position + 1)...] {
                let (i, j) = (first.partyIndex, second.partyIndex)
                let a = try PairSetupParty(
                    share: first, peer: j, seed: seeds[i] ?? SystemRandom().secureBytes(count: 32))
                let b = try PairSetupParty(
                    share: second, peer: i, seed: seeds[j] ?? SystemRandom().secureBytes(count: 32))
                let a2 = try a.round2(peerMessage: b.round1Message)
                let b2 = try b.round2(peerMessage: a.round1Message)
                setups[i, default: []].append(try a.finish(peerMessage: b2))
                setups[j, default: []].append(try b.finish(peerMessage: a2))
            }
        }
        return setups
    }

    /// One signature by the shares' parties over their stored setups.
    /// - Parameters:
    ///   - shares: t signing shares of one set, with secrets.
    ///   - setups: Each party's pair setups, by index (from ``pairSetups(shares:seeds:)``).
    ///   - digest: The 32-byte digest.
    ///   - path: A non-hardened BIP-32 path, root by default.
    ///   - seeds: Each party's 32-byte session seed; fresh random seeds where absent.
    /// - Returns: The verified signature and the key it verifies under.
    /// - Throws: ``ShareRecoveryError``: `inconsistentShares` for shares of different sets or
    ///   generations, and as ``ECDSASigningParty``.
    public static func sign(
        shares: [ShareRecord], setups: [Int: [PairSetup]], digest: [UInt8], path: DerivationPath = .root,
        seeds: [Int: SecureBytes] = [:]
    ) throws(ShareRecoveryError) -> (signature: ECDSASignature, signingKey: Point) {
        try checkOneSet(shares)
        let signers = shares.map(\.partyIndex).sorted()
        var parties = [Int: ECDSASigningParty]()
        for share in shares {
            parties[share.partyIndex] = try ECDSASigningParty(
                share: share, signers: signers, setups: setups[share.partyIndex] ?? [], digest: digest, path: path,
                seed: seeds[share.partyIndex] ?? SystemRandom().secureBytes(count: 32))
        }
        let round1 = try exchange(signers) { (index) throws(ShareRecoveryError) in try parties[index]!.round1() }
        let round2 = try exchange(signers) { (index) throws(ShareRecoveryError) in
            try parties[index]!.round2(round1[index]!)
        }
        var broadcasts = [Int: [UInt8]]()
        for index in signers { broadcasts[index] = try parties[index]!.round3(round2[index]!) }
        let first = parties[signers[0]]!
        return (try first.signature(broadcasts), first.signingKey)
    }

    /// Runs one round at every signer and sorts the messages into each receiver's inbox.
    private static func exchange(_ signers: [Int], _ round: (Int) throws(ShareRecoveryError) -> [Int: [UInt8]])
        throws(ShareRecoveryError) -> [Int: [Int: [UInt8]]]
    {
        var inboxes = [Int: [Int: [UInt8]]]()
        for sender in signers {
            for (receiver, message) in try round(sender) { inboxes[receiver, default: [:]][sender] = message }
        }
        return inboxes
    }

    private static func checkOneSet(_ shares: [ShareRecord]) throws(ShareRecoveryError) {
        guard let first = shares.first, shares.allSatisfy({ $0.isSameSet(as: first) }),
            Set(shares.map(\.partyIndex)).count == shares.count
        else {
            throw ShareRecoveryError(
                .inconsistentShares, "ECDSA needs distinct parties' shares of one signing set and generation")
        }
    }
}

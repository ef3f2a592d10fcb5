public import ShareCrypto

/// SLIP-39 Shamir backups of a master secret as word mnemonics, in two levels: a group threshold
/// over groups, and a member threshold inside each group (SLIP-0039).
///
/// ```swift
/// let kit = try SLIP39.generateShares(
///     masterSecret: secret, groupThreshold: 1, groups: [SLIP39.Group(memberThreshold: 2, memberCount: 3)])
/// let recovered = try SLIP39.combine([kit[0][0], kit[0][2]])
/// ```
///
/// SLIP-39 has no passphrase check: a wrong passphrase yields a different master secret, not an error.
public enum SLIP39 {
    /// The iteration exponent used when the caller gives none: 2500 << 1 = 5000 PBKDF2 iterations
    /// per Feistel round, 20 000 in all, the value the reference implementation and hardware wallets use.
    public static let defaultIterationExponent = 1
    /// The shortest master secret SLIP-39 allows, in bytes (128 bits).
    public static let minimumSecretCount = 16
    /// The longest master secret generated or read back, in bytes (8192 bits; its shares are 827 words).
    ///
    /// SLIP-39 itself sets no upper bound, but its RS1024 checksum is designed for mnemonics of up to
    /// about a thousand words (SLIP-0039 §Design rationale, checksum design). A bound of our own lets
    /// the decoder refuse an oversize mnemonic by its word count before it looks up a single word.
    public static let maximumSecretCount = 1024
    /// The most groups, and the most members in a group (4-bit indices).
    public static let maximumShareCount = Shamir.maximumShareCount

    /// One group of a backup: how many member shares it has and how many of them recover the group.
    public struct Group: Sendable, Hashable, CustomStringConvertible {
        /// How many member shares recover the group share (1...memberCount).
        public let memberThreshold: Int
        /// How many member shares the group has (1...16).
        public let memberCount: Int

        /// Describes a group; the values are checked by ``SLIP39/generateShares(masterSecret:groupThreshold:groups:passphrase:iterationExponent:extendable:using:)``.
        /// - Parameters:
        ///   - memberThreshold: How many member shares recover the group share.
        ///   - memberCount: How many member shares to make.
        public init(memberThreshold: Int, memberCount: Int) {
            self.memberThreshold = memberThreshold
            self.memberCount = memberCount
        }

        /// `T-of-N`.
        public var description: String { "\(memberThreshold)-of-\(memberCount)" }
    }

    /// GenerateShares (SLIP-0039 §Generating the shares): encrypts the master secret under the
    /// passphrase and splits it into groups of member shares.
    ///
    /// - Parameters:
    ///   - masterSecret: The secret to back up: 16 to 1024 bytes, an even number of bytes.
    ///   - groupThreshold: How many groups recover the master secret (1...groups.count).
    ///   - groups: The groups, in group-index order; 1 to 16 of them.
    ///   - passphrase: Printable ASCII (32...126) only; empty for none.
    ///   - iterationExponent: e in 0...15; each of the four Feistel rounds runs 2500 << e PBKDF2 iterations.
    ///   - extendable: The extendable backup flag. When set (the SLIP-39 recommendation), the identifier
    ///     is not part of the encryption, so later backups of the same encrypted secret can use other identifiers.
    ///   - random: The source of the identifier and of every random share byte.
    /// - Returns: One array per group, each with `memberCount` shares ordered by member index.
    /// - Throws: ``RecoveryKitError`` with code ``RecoveryKitError/Code/invalidSecretLength``,
    ///   ``RecoveryKitError/Code/invalidPassphrase``, ``RecoveryKitError/Code/invalidIterationExponent``,
    ///   ``RecoveryKitError/Code/invalidGroupCount``, ``RecoveryKitError/Code/invalidGroupThreshold``,
    ///   ``RecoveryKitError/Code/invalidMemberCount``, ``RecoveryKitError/Code/invalidMemberThreshold``,
    ///   ``RecoveryKitError/Code/multipleMembersWithThresholdOne`` or ``RecoveryKitError/Code/backendFailure``.
    public static func generateShares(
        masterSecret: SecureBytes,
        groupThreshold: Int,
        groups: [Group],
        passphrase: SecureBytes = SecureBytes(zeros: 0),
        iterationExponent: Int = defaultIterationExponent,
        extendable: Bool = true,
        using random: some RandomSource = SystemRandom()
    ) throws -> [[Share]] {
        guard (minimumSecretCount...maximumSecretCount).contains(masterSecret.count), masterSecret.count % 2 == 0 else {
            throw RecoveryKitError(
                .invalidSecretLength,
                "a \(masterSecret.count)-byte secret; SLIP-39 needs an even number of bytes, "
                    + "at least \(minimumSecretCount), and this implementation takes at most \(maximumSecretCount)")
        }
        let printable = passphrase.withUnsafeBytes { $0.allSatisfy { (32...126).contains($0) } }
        guard printable else {
            throw RecoveryKitError(.invalidPassphrase, "the passphrase must be printable ASCII (32...126)")
        }
        guard (0...15).contains(iterationExponent) else {
            throw RecoveryKitError(
                .invalidIterationExponent, "iteration exponent \(iterationExponent) is outside 0...15")
        }
        guard (1...maximumShareCount).contains(groups.count) else {
            throw RecoveryKitError(.invalidGroupCount, "\(groups.count) groups; a backup has 1...16")
        }
        guard (1...groups.count).contains(groupThreshold) else {
            throw RecoveryKitError(
                .invalidGroupThreshold, "group threshold \(groupThreshold) is outside 1...\(groups.count)")
        }
        for (index, group) in groups.enumerated() {
            guard (1...maximumShareCount).contains(group.memberCount) else {
                throw RecoveryKitError(
                    .invalidMemberCount, "group \(index) has \(group.memberCount) members; a group has 1...16")
            }
            guard (1...group.memberCount).contains(group.memberThreshold) else {
                throw RecoveryKitError(
                    .invalidMemberThreshold,
                    "group \(index) has member threshold \(group.memberThreshold), outside 1...\(group.memberCount)")
            }
            // GenerateShares step 1: a 1-of-N group adds nothing over 1-of-1 and is most likely a mistake.
            guard group.memberThreshold > 1 || group.memberCount == 1 else {
                throw RecoveryKitError(
                    .multipleMembersWithThresholdOne,
                    "group \(index) is 1-of-\(group.memberCount); use a 1-of-1 group instead")
            }
        }

        let identifierBytes = random.bytes(count: 2)
        let identifier = (Int(identifierBytes[0]) << 8 | Int(identifierBytes[1])) & 0x7FFF
        let encryptedMasterSecret = try MasterSecretEncryption.encrypt(
            masterSecret, passphrase: passphrase, iterationExponent: iterationExponent, identifier: identifier,
            extendable: extendable)

        let groupShares = Shamir.split(
            threshold: groupThreshold, count: groups.count, secret: encryptedMasterSecret, using: random)
        return zip(groups, groupShares).map { group, groupShare in
            Shamir.split(
                threshold: group.memberThreshold, count: group.memberCount, secret: groupShare.y, using: random
            ).map { member in
                Share(
                    identifier: identifier, extendable: extendable, iterationExponent: iterationExponent,
                    groupIndex: Int(groupShare.x), groupThreshold: groupThreshold, groupCount: groups.count,
                    memberIndex: Int(member.x), memberThreshold: group.memberThreshold, value: member.y)
            }
        }
    }

    /// Combining the shares (SLIP-0039 §Combining the shares): checks the set, recovers each group
    /// share and the encrypted master secret, and decrypts it under the passphrase.
    ///
    /// SLIP-39 asks for exactly the threshold: exactly `groupThreshold` groups, and in each exactly
    /// `memberThreshold` shares. Any passphrase bytes are accepted, as shares from other tools may use them.
    /// - Parameters:
    ///   - shares: Decoded shares, in any order.
    ///   - passphrase: The passphrase the backup was made with; empty for none.
    /// - Returns: The master secret. A wrong passphrase gives a different secret, not an error.
    /// - Throws: ``RecoveryKitError`` with code ``RecoveryKitError/Code/emptyInput``,
    ///   ``RecoveryKitError/Code/mismatchedIdentifier``, ``RecoveryKitError/Code/mismatchedExtendable``,
    ///   ``RecoveryKitError/Code/mismatchedIterationExponent``, ``RecoveryKitError/Code/mismatchedGroupThreshold``,
    ///   ``RecoveryKitError/Code/mismatchedGroupCount``, ``RecoveryKitError/Code/mismatchedShareLength``,
    ///   ``RecoveryKitError/Code/mismatchedMemberThreshold``, ``RecoveryKitError/Code/duplicateMemberIndex``,
    ///   ``RecoveryKitError/Code/insufficientGroups``, ``RecoveryKitError/Code/tooManyGroups``,
    ///   ``RecoveryKitError/Code/insufficientMembers``, ``RecoveryKitError/Code/tooManyMembers``,
    ///   ``RecoveryKitError/Code/invalidDigest`` or ``RecoveryKitError/Code/backendFailure``.
    public static func combine(_ shares: [Share], passphrase: SecureBytes = SecureBytes(zeros: 0)) throws -> SecureBytes
    {
        guard let first = shares.first else { throw RecoveryKitError(.emptyInput, "no shares were given") }
        for (position, share) in shares.enumerated().dropFirst() {
            try checkCommonParameters(of: share, at: position, against: first)
        }

        var groups: [(index: Int, members: [Share])] = []
        for share in shares {
            guard let slot = groups.firstIndex(where: { $0.index == share.groupIndex }) else {
                groups.append((share.groupIndex, [share]))
                continue
            }
            let member = groups[slot].members[0]
            guard share.memberThreshold == member.memberThreshold else {
                throw RecoveryKitError(
                    .mismatchedMemberThreshold,
                    "group \(share.groupIndex) has shares with member thresholds \(member.memberThreshold) "
                        + "and \(share.memberThreshold)")
            }
            guard !groups[slot].members.contains(where: { $0.memberIndex == share.memberIndex }) else {
                throw RecoveryKitError(
                    .duplicateMemberIndex,
                    "group \(share.groupIndex) has two shares with member index \(share.memberIndex)")
            }
            groups[slot].members.append(share)
        }

        guard groups.count >= first.groupThreshold else {
            throw RecoveryKitError(
                .insufficientGroups, "shares from \(groups.count) groups; \(first.groupThreshold) are needed")
        }
        guard groups.count == first.groupThreshold else {
            throw RecoveryKitError(
                .tooManyGroups, "shares from \(groups.count) groups; give exactly \(first.groupThreshold)")
        }
        for group in groups {
            let threshold = group.members[0].memberThreshold
            guard group.members.count >= threshold else {
                throw RecoveryKitError(
                    .insufficientMembers,
                    "group \(group.index) has \(group.members.count) shares; \(threshold) are needed")
            }
            guard group.members.count == threshold else {
                throw RecoveryKitError(
                    .tooManyMembers, "group \(group.index) has \(group.members.count) shares; give exactly \(threshold)"
                )
            }
        }

        let groupShares = try groups.map { group in
            ShamirPoint(
                x: UInt8(group.index),
                y: try Shamir.recover(
                    threshold: group.members[0].memberThreshold,
                    points: group.members.map { ShamirPoint(x: UInt8($0.memberIndex), y: $0.value) },
                    level: "share of group \(group.index)"))
        }
        let encryptedMasterSecret = try Shamir.recover(
            threshold: first.groupThreshold, points: groupShares, level: "encrypted master secret")
        return try MasterSecretEncryption.decrypt(
            encryptedMasterSecret, passphrase: passphrase, iterationExponent: first.iterationExponent,
            identifier: first.identifier, extendable: first.extendable)
    }

    /// Decodes every mnemonic, then combines them; see ``combine(_:passphrase:)``.
    /// - Parameters:
    ///   - mnemonics: One mnemonic per element, as UTF-8 text.
    ///   - passphrase: The passphrase the backup was made with; empty for none.
    /// - Returns: The master secret.
    /// - Throws: ``RecoveryKitError``: a decoding error (its reason names the mnemonic) or any error of
    ///   ``combine(_:passphrase:)``.
    public static func combine(mnemonics: [SecureBytes], passphrase: SecureBytes = SecureBytes(zeros: 0)) throws
        -> SecureBytes
    {
        let shares = try mnemonics.enumerated().map { position, mnemonic in
            try decode(mnemonic, context: "mnemonic \(position + 1)")
        }
        return try combine(shares, passphrase: passphrase)
    }

    /// Decodes text that holds one mnemonic per line, such as a file or stdin; blank lines are skipped.
    /// - Parameter text: UTF-8 text.
    /// - Returns: The shares, in line order.
    /// - Throws: ``RecoveryKitError`` from ``Share/init(mnemonic:)-(SecureBytes)``, its reason naming the line.
    public static func decodeMnemonics(lines text: SecureBytes) throws -> [Share] {
        let lineRanges: [(number: Int, range: Range<Int>)] = text.withUnsafeBytes { bytes in
            var ranges: [(Int, Range<Int>)] = []
            var start = 0
            var number = 1
            for offset in 0...bytes.count where offset == bytes.count || bytes[offset] == UInt8(ascii: "\n") {
                let isBlank = bytes[start..<offset].allSatisfy { $0 == 0x20 || (0x09...0x0D).contains($0) }
                if !isBlank { ranges.append((number, start..<offset)) }
                start = offset + 1
                number += 1
            }
            return ranges
        }
        return try lineRanges.map { line in try decode(text.slice(line.range), context: "line \(line.number)") }
    }

    private static func decode(_ mnemonic: SecureBytes, context: String) throws -> Share {
        do {
            return try Share(mnemonic: mnemonic)
        } catch let error as RecoveryKitError {
            throw error.inContext(context)
        }
    }

    /// All shares MUST agree on identifier, extendable flag, iteration exponent, group threshold,
    /// group count and length (§Combining the shares, step 1).
    private static func checkCommonParameters(of share: Share, at position: Int, against first: Share) throws {
        func mismatch(_ code: RecoveryKitError.Code, _ name: String, _ mine: Any, _ theirs: Any) -> RecoveryKitError {
            RecoveryKitError(code, "share \(position + 1) has \(name) \(mine), share 1 has \(theirs)")
        }
        guard share.identifier == first.identifier else {
            throw mismatch(.mismatchedIdentifier, "identifier", share.identifier, first.identifier)
        }
        guard share.extendable == first.extendable else {
            throw mismatch(.mismatchedExtendable, "extendable flag", share.extendable, first.extendable)
        }
        guard share.iterationExponent == first.iterationExponent else {
            throw mismatch(
                .mismatchedIterationExponent, "iteration exponent", share.iterationExponent, first.iterationExponent)
        }
        guard share.groupThreshold == first.groupThreshold else {
            throw mismatch(.mismatchedGroupThreshold, "group threshold", share.groupThreshold, first.groupThreshold)
        }
        guard share.groupCount == first.groupCount else {
            throw mismatch(.mismatchedGroupCount, "group count", share.groupCount, first.groupCount)
        }
        guard share.value.count == first.value.count else {
            throw mismatch(.mismatchedShareLength, "a value length of", share.value.count, first.value.count)
        }
    }
}

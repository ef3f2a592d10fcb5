public import ShareCrypto

extension SLIP39 {
    /// One SLIP-39 share: the public metadata every mnemonic carries and the secret share value.
    ///
    /// Make one from a mnemonic with ``init(mnemonic:)-(SecureBytes)``; get the mnemonic back with
    /// ``mnemonic``. The description shows the metadata only, never the value or the words.
    public struct Share: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The 15-bit random identifier shared by every share of one backup.
        public let identifier: Int
        /// The extendable backup flag: when set, the identifier is not part of the encryption salt.
        public let extendable: Bool
        /// The iteration exponent e (0...15): each Feistel round runs 2500 << e PBKDF2 iterations.
        public let iterationExponent: Int
        /// The group index, 0-based (0...15): the x value of the group share.
        public let groupIndex: Int
        /// How many groups recover the master secret (1...16), the actual value rather than the encoded one.
        public let groupThreshold: Int
        /// How many groups the backup has (1...16).
        public let groupCount: Int
        /// The member index inside the group, 0-based (0...15): the x value of the member share.
        public let memberIndex: Int
        /// How many members of this group recover the group share (1...16).
        public let memberThreshold: Int
        /// The share value, as long as the master secret. Secret.
        public let value: SecureBytes

        init(
            identifier: Int, extendable: Bool, iterationExponent: Int, groupIndex: Int, groupThreshold: Int,
            groupCount: Int, memberIndex: Int, memberThreshold: Int, value: SecureBytes
        ) {
            self.identifier = identifier
            self.extendable = extendable
            self.iterationExponent = iterationExponent
            self.groupIndex = groupIndex
            self.groupThreshold = groupThreshold
            self.groupCount = groupCount
            self.memberIndex = memberIndex
            self.memberThreshold = memberThreshold
            self.value = value
        }

        /// Metadata only; the value is redacted.
        public var description: String {
            "SLIP39.Share(identifier: \(identifier), extendable: \(extendable), iterationExponent: \(iterationExponent), "
                + "groupIndex: \(groupIndex), groupThreshold: \(groupThreshold), groupCount: \(groupCount), "
                + "memberIndex: \(memberIndex), memberThreshold: \(memberThreshold), value: \(value))"
        }

        /// Same as ``description``.
        public var debugDescription: String { description }
    }
}

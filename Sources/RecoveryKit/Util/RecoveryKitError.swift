/// The one error type of `RecoveryKit`.
///
/// Errors compare equal by ``code`` alone, so tests and callers can match on the stable code
/// while the ``reason`` stays free to explain. A reason names positions and public share metadata
/// (identifier, indices, thresholds) only: never a word of a share value, a secret byte or a passphrase.
public struct RecoveryKitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable error code. Codes may be added; existing ones never change meaning.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        // A private enum behind a struct lets us add codes without breaking exhaustive switches.
        private enum Backing: String, Sendable {
            // Decoding one mnemonic.
            case invalidWord, invalidMnemonicLength, invalidSecretLength, invalidChecksum, invalidPadding
            case invalidGroupThreshold
            // Combining a set of shares.
            case emptyInput, mismatchedIdentifier, mismatchedExtendable, mismatchedIterationExponent
            case mismatchedGroupThreshold, mismatchedGroupCount, mismatchedShareLength, mismatchedMemberThreshold
            case duplicateMemberIndex, insufficientGroups, tooManyGroups, insufficientMembers, tooManyMembers
            case invalidDigest
            // Generating shares.
            case invalidGroupCount, invalidMemberCount, invalidMemberThreshold, multipleMembersWithThresholdOne
            case invalidIterationExponent, invalidPassphrase
            // Kits for MPC backup shares.
            case invalidKitShare
            // Below us.
            case backendFailure
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// A kit made from, or giving back, something other than a user backup share's 32-byte scalar.
        public static let invalidKitShare = Code(.invalidKitShare)
        /// A mnemonic contains a word that is not in the SLIP-39 word list.
        public static let invalidWord = Code(.invalidWord)
        /// A mnemonic has fewer words than a 128-bit share needs (20), or more than a share of the
        /// longest secret read back, ``SLIP39/maximumSecretCount`` bytes (827).
        public static let invalidMnemonicLength = Code(.invalidMnemonicLength)
        /// A share or master secret length that SLIP-39 does not allow: under 128 bits, not a whole
        /// number of 16-bit units, or (in a mnemonic) more than 8 bits of padding; or a master secret
        /// over ``SLIP39/maximumSecretCount`` bytes.
        public static let invalidSecretLength = Code(.invalidSecretLength)
        /// The RS1024 checksum of a mnemonic does not verify.
        public static let invalidChecksum = Code(.invalidChecksum)
        /// A padding bit in front of the share value is not zero.
        public static let invalidPadding = Code(.invalidPadding)
        /// The group threshold exceeds the group count (in a mnemonic or in a generation request),
        /// or is below 1.
        public static let invalidGroupThreshold = Code(.invalidGroupThreshold)
        /// No mnemonics were given.
        public static let emptyInput = Code(.emptyInput)
        /// Shares carry different identifiers: they come from different backups.
        public static let mismatchedIdentifier = Code(.mismatchedIdentifier)
        /// Shares disagree on the extendable backup flag.
        public static let mismatchedExtendable = Code(.mismatchedExtendable)
        /// Shares disagree on the iteration exponent.
        public static let mismatchedIterationExponent = Code(.mismatchedIterationExponent)
        /// Shares disagree on the group threshold.
        public static let mismatchedGroupThreshold = Code(.mismatchedGroupThreshold)
        /// Shares disagree on the group count.
        public static let mismatchedGroupCount = Code(.mismatchedGroupCount)
        /// Shares have share values of different lengths.
        public static let mismatchedShareLength = Code(.mismatchedShareLength)
        /// Shares of one group disagree on the member threshold.
        public static let mismatchedMemberThreshold = Code(.mismatchedMemberThreshold)
        /// Two shares of one group have the same member index.
        public static let duplicateMemberIndex = Code(.duplicateMemberIndex)
        /// Fewer distinct groups than the group threshold.
        public static let insufficientGroups = Code(.insufficientGroups)
        /// More distinct groups than the group threshold (SLIP-39 asks for exactly the threshold).
        public static let tooManyGroups = Code(.tooManyGroups)
        /// A group has fewer shares than its member threshold.
        public static let insufficientMembers = Code(.insufficientMembers)
        /// A group has more shares than its member threshold (SLIP-39 asks for exactly the threshold).
        public static let tooManyMembers = Code(.tooManyMembers)
        /// The recovered secret does not match the digest stored at index 254: a share is wrong or forged.
        public static let invalidDigest = Code(.invalidDigest)
        /// A generation request with no groups or more than 16.
        public static let invalidGroupCount = Code(.invalidGroupCount)
        /// A generation request with a group of no members or more than 16.
        public static let invalidMemberCount = Code(.invalidMemberCount)
        /// A generation request with a member threshold below 1 or above the group's member count.
        public static let invalidMemberThreshold = Code(.invalidMemberThreshold)
        /// A generation request for a group of several members with member threshold 1, which
        /// SLIP-39 forbids (use a 1-of-1 group instead).
        public static let multipleMembersWithThresholdOne = Code(.multipleMembersWithThresholdOne)
        /// An iteration exponent outside 0...15.
        public static let invalidIterationExponent = Code(.invalidIterationExponent)
        /// A passphrase with a byte outside printable ASCII (32...126).
        public static let invalidPassphrase = Code(.invalidPassphrase)
        /// The crypto layer failed in a way no input should cause.
        public static let backendFailure = Code(.backendFailure)

        /// The code's stable name, e.g. `invalidChecksum`.
        public var description: String { backing.rawValue }
    }

    /// The stable code.
    public let code: Code
    /// A human explanation. Never contains secret bytes.
    public let reason: String
    /// Where the error was raised, for diagnostics.
    public let location: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - reason: A human explanation without secret bytes.
    ///   - file: Where it was raised (the caller's file, by default).
    ///   - line: Where it was raised (the caller's line, by default).
    public init(_ code: Code, _ reason: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.location = "\(file):\(line)"
    }

    private init(code: Code, reason: String, location: String) {
        self.code = code
        self.reason = reason
        self.location = location
    }

    /// The same error with `context` (e.g. "line 3") in front of the reason; code and location stay.
    func inContext(_ context: String) -> RecoveryKitError {
        RecoveryKitError(code: code, reason: "\(context): \(reason)", location: location)
    }

    /// Equality by ``code`` alone.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    /// `code: reason`.
    public var description: String { "\(code): \(reason)" }
}

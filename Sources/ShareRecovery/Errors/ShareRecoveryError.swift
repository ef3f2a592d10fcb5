import ShareCrypto

/// The one error type of `ShareRecovery`.
///
/// Codes are the error names of docs/formats.md §9 plus a few finer ones of the engine (its stores,
/// sessions and inputs); errors compare equal by ``code``. The engine knows nothing of transport:
/// an error a source or custodian implementation throws (an HTTP client's own error type, say)
/// passes through the engine unchanged, and a server maps these codes to its answers itself. A ``reason`` never contains secret bytes; where a check names a party (a dealer, a
/// candidate), the reason says which.
public struct ShareRecoveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Sendable, CaseIterable {
            // docs/formats.md §9, normative names.
            case malformedRecord, malformedCipherText, malformedCustodianShare, unsupportedVersion
            case unsupportedMethod, kdfMismatch, invalidKdfParameters, invalidKeyMaterial, emptySecret
            case invalidParameters, invalidScalar, invalidPoint, invalidShare, publicKeyMismatch
            case authenticationFailed, tamperedShare, unsealFailed, dealerCheckFailed, subShareCheckFailed
            case noMatchingShare, inconsistentShares, dkgProofFailed, invalidSignatureShare, nonceReused
            // Finer codes of this implementation.
            case notFound, cancelled, storageFailure, malformedInput, conflict, operationInProgress
            case invalidPasscode, passcodeMismatch, passcodeAlreadySet, passcodeNotSet, notAuthenticated, wrongPasscode
            case attemptTooSoon, lockedOut, storeCorrupted
            case walletEjected
            case ecdsaCheckFailed, pairSetupStale, ecdsaRestart
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// A share record (§4) that does not parse: magic, length, JSON shape, hex.
        public static let malformedRecord = Code(.malformedRecord)
        /// A cipherText (§5) envelope that does not parse: base64, magic, truncation, keyId.
        public static let malformedCipherText = Code(.malformedCipherText)
        /// A custodian backup share (§6) JSON that does not parse.
        public static let malformedCustodianShare = Code(.malformedCustodianShare)
        /// A version byte or format string of another version.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// A backup method byte or name outside §5's list.
        public static let unsupportedMethod = Code(.unsupportedMethod)
        /// A kdf byte that does not belong to the method.
        public static let kdfMismatch = Code(.kdfMismatch)
        /// Argon2id parameters outside §5's bounds.
        public static let invalidKdfParameters = Code(.invalidKdfParameters)
        /// HKDF key material that is not 32 bytes, or a secret of the wrong kind for the method.
        public static let invalidKeyMaterial = Code(.invalidKeyMaterial)
        /// An empty password or recovery code.
        public static let emptySecret = Code(.emptySecret)
        /// A field out of its range (curve, kind, threshold, parties, index, walletId length, plan).
        public static let invalidParameters = Code(.invalidParameters)
        /// A scalar ≥ the order, or a zero secret.
        public static let invalidScalar = Code(.invalidScalar)
        /// A point that fails §1 validation, or an identity result.
        public static let invalidPoint = Code(.invalidPoint)
        /// A share with x_i·G ≠ X_i.
        public static let invalidShare = Code(.invalidShare)
        /// A public key that is not commitments[0], or a resharing whose A'_0 ≠ Y.
        public static let publicKeyMismatch = Code(.publicKeyMismatch)
        /// A wrong secret or a tampered cipherText (deliberately one error).
        public static let authenticationFailed = Code(.authenticationFailed)
        /// A sealed record that disagrees with its JSON or is not a backup share.
        public static let tamperedShare = Code(.tamperedShare)
        /// A sealed share that does not open with the custodian key.
        public static let unsealFailed = Code(.unsealFailed)
        /// A resharing dealer whose D_{j,0} ≠ λ_j·X_j (or whose dealing has the wrong shape).
        public static let dealerCheckFailed = Code(.dealerCheckFailed)
        /// A sub-share that does not match its dealer's commitments.
        public static let subShareCheckFailed = Code(.subShareCheckFailed)
        /// No custodian share survived the metadata filter (§7).
        public static let noMatchingShare = Code(.noMatchingShare)
        /// Some custodian shares matched, but fewer than t−1 distinct valid ones (§7).
        public static let inconsistentShares = Code(.inconsistentShares)
        /// A DKG party's proof of knowledge of its constant term does not verify (§10 step 3).
        public static let dkgProofFailed = Code(.dkgProofFailed)
        /// A signer's partial signature (or its nonce commitment) does not verify (§11).
        public static let invalidSignatureShare = Code(.invalidSignatureShare)
        /// A single-use signing nonce was asked to sign a second time (§11).
        public static let nonceReused = Code(.nonceReused)
        /// A threshold ECDSA check failed (§12): the signature is aborted and the pair setup with the
        /// named party (every party when none is named) is discarded; make a fresh pair setup to sign again.
        public static let ecdsaCheckFailed = Code(.ecdsaCheckFailed)
        /// An ECDSA pair setup is older than a party's current share (§12): make a fresh pair setup.
        public static let pairSetupStale = Code(.pairSetupStale)
        /// An ECDSA session drew a nonce point with x(R) ≥ n (odds about 2^-128): sign again with
        /// fresh seeds; the pair setups stay valid.
        public static let ecdsaRestart = Code(.ecdsaRestart)
        /// A cipherText or share that a source does not have.
        public static let notFound = Code(.notFound)
        /// The task was cancelled.
        public static let cancelled = Code(.cancelled)
        /// A store could not read or write.
        public static let storageFailure = Code(.storageFailure)
        /// Another recovery, backup or method change of the same wallet is running: in this process, in
        /// another process on this device (the share store is open there), or, at the custodian, from
        /// another device of the account. Nothing was changed; retry once it has finished.
        public static let operationInProgress = Code(.operationInProgress)
        /// A protocol state that moved on: a round applied twice, or a custodian's signing set that
        /// changed since the session opened. Start again from the current state.
        public static let conflict = Code(.conflict)
        /// Input text that is not what it should be (not UTF-8, not JSON, too large).
        public static let malformedInput = Code(.malformedInput)
        /// A passcode that breaks the passcode rules (``PasscodeKind``): 4 or 6 digits, or 6+ characters.
        public static let invalidPasscode = Code(.invalidPasscode)
        /// A new passcode and its confirmation differ.
        public static let passcodeMismatch = Code(.passcodeMismatch)
        /// A passcode is already set; change it instead.
        public static let passcodeAlreadySet = Code(.passcodeAlreadySet)
        /// The store has no passcode yet.
        public static let passcodeNotSet = Code(.passcodeNotSet)
        /// Share access before a successful ``FileSigningShareStore/authenticate(_:)``.
        public static let notAuthenticated = Code(.notAuthenticated)
        /// A passcode that does not unlock the store; the reason says how many attempts remain.
        public static let wrongPasscode = Code(.wrongPasscode)
        /// A passcode attempt before the delay after earlier failures has passed; nothing was checked or counted.
        public static let attemptTooSoon = Code(.attemptTooSoon)
        /// Too many wrong passcodes: the store only allows ``FileSigningShareStore/remove()``.
        public static let lockedOut = Code(.lockedOut)
        /// A store file that does not parse or does not authenticate under the store's key.
        public static let storeCorrupted = Code(.storeCorrupted)
        /// The wallet was ejected (docs/eject.md): its key left, so the custodian signs for it no more.
        public static let walletEjected = Code(.walletEjected)

        /// Every code, for documentation and exhaustive tests.
        public static var allCodes: [Code] { Backing.allCases.map(Code.init) }

        /// Parses a code's name.
        public init?(name: String) {
            guard let backing = Backing(rawValue: name) else { return nil }
            self.backing = backing
        }

        public var description: String { backing.rawValue }
    }

    /// The stable code.
    public let code: Code
    /// A human explanation without secret bytes.
    public let reason: String
    /// Where the error was raised.
    public let location: String
    /// The party index (docs/formats.md §1) to blame, where a protocol check names one (a DKG party, a signer).
    public let party: Int?

    /// Creates an error.
    public init(_ code: Code, _ reason: String, party: Int? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.party = party
        self.location = "\(file):\(line)"
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    public var description: String { "\(code): \(reason)" }
}

extension ShareRecoveryError {
    /// Maps a crypto-layer error to this module's code of the same meaning.
    init(_ error: ShareCryptoError, file: String = #fileID, line: Int = #line) {
        let code: Code =
            switch error.code {
            case .invalidScalar: .invalidScalar
            case .invalidPoint: .invalidPoint
            case .authenticationFailed: .authenticationFailed
            case .invalidKdfParameters: .invalidKdfParameters
            case .invalidKeyMaterial: .invalidKeyMaterial
            case .emptySecret: .emptySecret
            case .unsealFailed: .unsealFailed
            case .invalidKey: .invalidKeyMaterial
            case .invalidShare: .invalidShare
            case .publicKeyMismatch: .publicKeyMismatch
            case .subShareCheckFailed: .subShareCheckFailed
            case .dkgProofFailed: .dkgProofFailed
            case .invalidSignatureShare: .invalidSignatureShare
            case .nonceReused: .nonceReused
            case .ecdsaCheckFailed: .ecdsaCheckFailed
            case .pairSetupStale: .pairSetupStale
            case .ecdsaRestart: .ecdsaRestart
            default: .invalidParameters
            }
        self.init(code, error.reason, party: error.party, file: file, line: line)
    }
}

/// Runs `body`, turning crypto-layer errors into ``ShareRecoveryError``.
@inline(__always)
package func mappingCryptoErrors<R>(_ body: () throws -> R) throws(ShareRecoveryError) -> R {
    do {
        return try body()
    } catch let error as ShareCryptoError {
        throw ShareRecoveryError(error)
    } catch let error as ShareRecoveryError {
        throw error
    } catch {
        throw ShareRecoveryError(.invalidParameters, "unexpected error: \(type(of: error))")
    }
}

import ShareCrypto

/// An error that says what an app can do about it: whether the same operation may succeed if tried
/// again unchanged, and one line for the user. ``ShareRecoveryError`` conforms, and so do the error
/// types of the modules that sit between the engine and a server (an HTTP client's transport
/// error), so a failed recovery is described the same way wherever it failed (``RecoveryFailure``).
public protocol ActionableError: Error {
    /// The error's stable code, as its module names it.
    var codeName: String { get }
    /// Whether the same operation, tried again later without changing anything, may succeed.
    var isRetryable: Bool { get }
    /// What to do, in one line for the user of a wallet app.
    var hint: String { get }
}

extension ShareRecoveryError: ActionableError {
    public var codeName: String { code.description }

    /// Retryable: a cancelled operation, one that met another of the same wallet, and a round that
    /// met a moved state (a fresh attempt starts from the current state). Everything else fails the
    /// same way again until the input, the secret or the device changes.
    public var isRetryable: Bool { [.cancelled, .operationInProgress, .conflict].contains(code) }

    public var hint: String {
        switch code {
        case .cancelled: "The operation was cancelled; nothing changed. Try again."
        case .operationInProgress:
            "Another recovery, backup or method change of this wallet is running; try again when it has finished."
        case .conflict: "The custodian's state moved on during the operation; try again."
        case .authenticationFailed:
            "The secret does not open this backup; try the password, key or code again, or another method."
        case .emptySecret, .invalidKeyMaterial:
            "The secret is empty or of the wrong kind for this method; enter it again."
        case .notFound: "There is no backup for this method; choose another recovery method."
        case .noMatchingShare, .inconsistentShares:
            "The custodian has no usable share of this backup (another wallet or an older backup); choose another recovery method."
        case .malformedCipherText, .unsupportedVersion, .unsupportedMethod, .kdfMismatch, .invalidKdfParameters:
            "The stored backup cannot be read by this version; update the app or choose another method."
        case .dealerCheckFailed, .subShareCheckFailed, .publicKeyMismatch, .invalidShare, .tamperedShare, .unsealFailed,
            .invalidPoint, .invalidScalar, .dkgProofFailed, .invalidSignatureShare:
            RecoveryFailure.badPartyHint
        case .storageFailure, .storeCorrupted:
            "This device's share store cannot be read or written; free space or repair it, then try again."
        case .notAuthenticated, .wrongPasscode, .passcodeNotSet: "Unlock the share store with its passcode first."
        case .attemptTooSoon: "Wait a moment before entering the passcode again."
        case .lockedOut: "Too many wrong passcodes; the store is locked."
        case .walletEjected: "This wallet was ejected: its key was exported, so sign with it in the wallet it went to."
        case .ecdsaCheckFailed:
            "The ECDSA signature was aborted and the pair setup with the named party discarded; delete its stored copy, make a fresh pair setup, then sign again."
        case .pairSetupStale:
            "The ECDSA pair setup predates a party's current share; make a fresh pair setup, then sign."
        case .ecdsaRestart:
            "The ECDSA session drew an unusable nonce (very rare); sign again, the pair setups stay valid."
        default: RecoveryFailure.reportHint
        }
    }
}

/// A failed operation as an app shows it: the error's code and reason, whether trying again may
/// help, and what to do (``ActionableError``). An error of any other type is described as not
/// retryable, to be reported.
public struct RecoveryFailure: Sendable, Equatable, CustomStringConvertible {
    /// The error's stable code (`authenticationFailed`, `unavailable`, …).
    public let code: String
    /// What happened, in the error's own words (never a secret).
    public let reason: String
    /// Whether the same operation, tried again later unchanged, may succeed.
    public let isRetryable: Bool
    /// What to do, in one line.
    public let hint: String

    /// Describes an error.
    public init(_ error: any Error) {
        if let error = error as? any ActionableError {
            code = error.codeName
            isRetryable = error.isRetryable
            hint = error.hint
        } else if let error = error as? ShareCryptoError {
            // The crypto layer's checks failed on what a party sent.
            code = error.code.description
            isRetryable = false
            hint = Self.badPartyHint
        } else {
            code = "unexpectedError"
            isRetryable = false
            hint = Self.reportHint
        }
        reason = String(describing: error)
    }

    static let badPartyHint =
        "A party sent values that do not check out; nothing was stored. Report this with the request id."
    static let reportHint = "The operation failed; report this with the request id."

    public var description: String { "\(code) (\(isRetryable ? "retryable" : "not retryable")): \(hint)" }
}

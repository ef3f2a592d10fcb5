/// What each kind of protocol session is to the server, in one place: the keeper that opens it, the
/// route that opens it, whether the account's one-session rule holds, the label its sealed state is
/// bound to, and the audit events and metric series that tell its life. Adding a protocol adds a case
/// (docs/architecture.md, "How to add a protocol"); `ProtocolSessionKindTests` checks each case's
/// entries against the router, the audit events and the metrics.
extension ProtocolSessionRecord.Kind {
    /// The keeper whose opening sequence (``ProtocolSessionKeeper``) stores sessions of this kind.
    var keeper: any ProtocolSessionKeeping.Type {
        switch self {
        case .resharing: CustodianSessions.self
        case .dkg, .signing: WalletSessions.self
        case .deviceAdd: DeviceSessions.self
        case .ecdsaPairSetup, .ecdsaSigning: ECDSASessions.self
        }
    }

    /// The request that opens a session of this kind (docs/openapi.yaml).
    var openingRoute: (method: String, path: String) {
        switch self {
        case .resharing: ("POST", "/recovery/sessions")
        case .dkg: ("POST", "/wallets/dkg")
        case .signing: ("POST", "/wallets/signing-sessions")
        case .deviceAdd: ("POST", "/wallets/device-sessions")
        case .ecdsaPairSetup: ("POST", "/wallets/ecdsa/pair-setups")
        case .ecdsaSigning: ("POST", "/wallets/ecdsa/signing-sessions")
        }
    }

    /// The kinds of the account's running sessions beside which a session of this kind does not open
    /// (docs/server.md, "One at a time per account"): a resharing session beside another; an ECDSA
    /// pair setup or signature beside a resharing session (which may replace the set it is bound to)
    /// or another ECDSA session (a setup replaced under a signature would abort it). Empty: no rule.
    var refusedBeside: [Self] {
        switch self {
        case .resharing: [.resharing]
        case .ecdsaPairSetup, .ecdsaSigning: [.resharing, .ecdsaPairSetup, .ecdsaSigning]
        case .dkg, .signing, .deviceAdd: []
        }
    }

    /// Whether opening a session of this kind ends the account's unfinished ones of the kind rather
    /// than being refused beside them: a device whose ECDSA pair setup failed on its side makes a
    /// fresh one at once (an unfinished setup keeps nothing but its round state).
    var supersedesUnfinished: Bool { self == .ecdsaPairSetup }

    /// The label the sealed state of an open session is bound to (with the session id), so a sealed
    /// state cannot be moved to another row or another protocol. Stored rows depend on it: never change it.
    var sealedStateLabel: String { self == .resharing ? "secrets" : rawValue }

    /// The `protocol` label of `share_recovery_sessions_total` for the session's steps: a resharing
    /// session counts as a backup, a recovery or a refresh.
    var metricProtocols: [String] { self == .resharing ? ["backup", "recovery", "refresh"] : [rawValue] }

    /// Whether the opening is audited (`…Started`, counted from the committed row); otherwise the
    /// keeper counts the start itself, since nothing exists to audit until the session completes.
    var startIsAudited: Bool { self == .resharing }

    /// The audit events that record a completed session of this kind (each counted as `completed`).
    var completionEvents: [AuditEventKind] {
        switch self {
        case .resharing: [.backupCompleted, .recoveryCompleted, .refreshCompleted]
        case .dkg: [.walletCreated]
        case .signing: [.signatureShareReleased]
        case .deviceAdd: [.deviceAdded]
        case .ecdsaPairSetup: [.ecdsaPairSetupMade]
        case .ecdsaSigning: [.ecdsaSigned]
        }
    }
}

/// A keeper of protocol sessions: a custodian role's server side, which opens its sessions through
/// ``ProtocolSessionKeeper`` and advances each once.
protocol ProtocolSessionKeeping: Sendable {
    /// The kinds of session the keeper opens.
    static var sessionKinds: Set<ProtocolSessionRecord.Kind> { get }
}

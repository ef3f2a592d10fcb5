/// What an integrator event announces (docs/server.md, "Integrator events"): the changes a wallet's
/// owner must hear about at once, since hearing about them is how an account takeover is noticed.
///
/// Each kind is one audit row kind (``AuditEventKind``): the outbox row is written by a trigger on the
/// audit trail's insert (Migrations+Events.swift), so an event exists exactly when its audited change
/// committed. The names are stable (receivers switch on them): add kinds, never rename one. A kind
/// added later needs a case here and a migration that re-creates the trigger with the longer list,
/// as `ecdsa.aborted` came with ``Migrations/ecdsaEventOutbox``.
package enum IntegratorEventKind: String, Sendable, CaseIterable {
    case recoveryStarted = "recovery.started"
    case recoveryCompleted = "recovery.completed"
    case recoveryFailed = "recovery.failed"
    case recoveryMethodAdded = "recoveryMethod.added"
    case recoveryMethodRotated = "recoveryMethod.rotated"
    case recoveryMethodDeleted = "recoveryMethod.deleted"
    case deviceAdded = "device.added"
    case deviceRemoved = "device.removed"
    case walletCreated = "wallet.created"
    case walletEjected = "wallet.ejected"
    case otpFlowExhausted = "otpFlow.exhausted"
    case ecdsaAborted = "ecdsa.aborted"

    /// The audit row kind the event is made of.
    package var auditKind: AuditEventKind {
        switch self {
        case .recoveryStarted: .recoveryStarted
        case .recoveryCompleted: .recoveryCompleted
        case .recoveryFailed: .recoveryFailed
        case .recoveryMethodAdded: .methodAdded
        case .recoveryMethodRotated: .methodRotated
        case .recoveryMethodDeleted: .methodDeleted
        case .deviceAdded: .deviceAdded
        case .deviceRemoved: .deviceRemoved
        case .walletCreated: .walletCreated
        case .walletEjected: .walletEjected
        case .otpFlowExhausted: .otpExhausted
        case .ecdsaAborted: .ecdsaAborted
        }
    }

    /// The event kind of an audit row kind, `nil` for rows that are not announced (reads, tokens, backups).
    package init?(auditKind: AuditEventKind) {
        guard let kind = Self.allCases.first(where: { $0.auditKind == auditKind }) else { return nil }
        self = kind
    }
}

import ShareCrypto

/// The audit events a transaction appended, collected while it runs, so that ``MeteredStorage`` counts
/// them only once the transaction has committed: a metric never counts a change that rolled back, and
/// the session and one-time-code counters say exactly what the audit trail says.
final class CommittedEvents: Sendable {
    private let events = Locked<[AuditEvent]>([])

    /// The collector of the transaction running in this task, if a ``MeteredStorage`` started it.
    @TaskLocal static var current: CommittedEvents?

    func append(_ more: [AuditEvent]) { events.withLock { $0 += more } }

    /// Forgets what an attempt that is about to run again appended.
    func removeAll() { events.withLock { $0.removeAll() } }

    var all: [AuditEvent] { events.withLock { $0 } }
}

extension ServerMetrics {
    /// Counts committed audit events into the session and one-time-code counters.
    func committed(_ events: [AuditEvent]) {
        for event in events {
            let reason = event.detail.reason?.name ?? ""
            switch event.kind {
            case .backupStarted: session("backup", .started)
            case .backupCompleted: session("backup", .completed)
            case .backupFailed: session("backup", .failed, reason: reason)
            case .backupAborted: session("backup", .aborted)
            case .recoveryStarted: session("recovery", .started)
            case .recoveryCompleted: session("recovery", .completed)
            case .recoveryFailed: session("recovery", .failed, reason: reason)
            case .recoveryAborted: session("recovery", .aborted)
            case .refreshStarted: session("refresh", .started)
            case .refreshCompleted: session("refresh", .completed)
            case .refreshFailed: session("refresh", .failed, reason: reason)
            case .refreshAborted: session("refresh", .aborted)
            case .walletCreated: session("dkg", .completed)
            case .signatureShareReleased: session("signing", .completed)
            case .deviceAdded: session("deviceAdd", .completed)
            case .ecdsaPairSetupMade: session("ecdsaPairSetup", .completed)
            case .ecdsaSigned: session("ecdsaSigning", .completed)
            case .ecdsaAborted: session("ecdsaSigning", .aborted, reason: event.detail.check ?? "")
            case .tokenIssued: otpAttempt("verified")
            case .otpFailed: otpAttempt("wrongCode")
            case .otpExhausted: otpAttempt("exhausted")
            case .methodAdded, .methodRotated, .methodDeleted, .cipherTextRead, .custodianShareStored,
                .custodianSharesServed, .custodianSharesDeleted, .walletRegistered, .walletEjected, .deviceRemoved:
                break
            }
        }
    }
}

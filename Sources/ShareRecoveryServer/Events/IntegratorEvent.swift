import ShareRecovery

/// One integrator event as delivered (docs/openapi.yaml, `webhooks`): a stable id, the kind, the
/// account, the time, the request that caused it and the audit row's public details. Nothing secret
/// can be in it: every field comes from the audit row, which holds no secret (``AuditEvent``).
package struct IntegratorEvent: Sendable, Equatable {
    /// `evt_` and 32 hex digits; also the delivery's `webhook-id`.
    package let id: String
    /// The audit row's sequence: commit order, across accounts.
    package let sequence: Int64
    package let kind: IntegratorEventKind
    package let account: String
    /// Unix seconds of the change.
    package let at: Int64
    package let requestId: String
    /// The audit row's detail, a JSON object.
    package let detail: String

    /// The JSON body, the same bytes on every attempt (made only of stored, unchanging fields).
    package var body: String {
        let data = (try? StrictJSON.parse(detail)) ?? .object([])
        return JSONWriter.write(
            .object([
                ("id", .string(id)), ("type", .string(kind.rawValue)), ("timestamp", .string(RFC3339.format(at))),
                ("account", .string(account)), ("requestId", .string(requestId)), ("data", data),
            ]))
    }
}

/// An outbox row: the event and where its delivery stands.
package struct OutboxEntry: Sendable, Equatable {
    package enum State: String, Sendable, CaseIterable {
        /// Waiting for its (next) attempt.
        case pending
        /// A receiver answered 2xx.
        case delivered
        /// Every attempt failed; it waits for `share-recovery events redeliver`.
        case dead
    }

    package let event: IntegratorEvent
    package let state: State
    package let attempts: Int
    /// Unix milliseconds of the next attempt (pending only).
    package let nextAttemptAt: Int64
    /// Unix milliseconds of the delivery.
    package let deliveredAt: Int64?
    /// Why the last attempt failed (a status code or a transport failure), never a body.
    package let lastError: String?
}

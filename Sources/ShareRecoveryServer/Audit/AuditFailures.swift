import Logging

extension ServerState {
    /// Runs a step; when it throws, appends `failure` with the error's code as `reason`, on its own
    /// (``ServerStorage/recordAudit(_:)-([AuditEvent])``: on PostgreSQL joined with other requests'
    /// rows; the step's own transaction, if it had one, has rolled back and left no success row), and
    /// rethrows. A failure to record is logged, never answered: the client sees the step's error.
    func recordingFailure<Result>(_ failure: AuditEvent, _ step: () async throws -> Result) async throws -> Result {
        do {
            return try await step()
        } catch {
            var event = failure
            // Only the stable code, as the client saw it: a message could quote input.
            event.detail.reason = APIError.answering(error)?.code ?? .internalError
            do {
                // A refusal is not a change: its row does not take the request's Idempotency-Key,
                // which a repeat of the request may take (or has taken) with the change itself.
                let claim = IdempotencyClaim.current.flatMap { $0.isWritten ? $0 : nil }
                try await IdempotencyClaim.$current.withValue(claim) { try await storage.recordAudit(event) }
            } catch let auditError {
                logger.error(
                    "audit row not recorded",
                    metadata: [
                        "event": "\(event.kind.rawValue)", "requestId": "\(event.requestId)", "error": "\(auditError)",
                    ])
            }
            throw error
        }
    }
}

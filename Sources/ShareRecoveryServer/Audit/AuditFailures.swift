import Logging

extension ServerState {
    /// Runs a step; when it throws, appends `failure` with the error's code as `reason`, in a transaction
    /// of its own (the step's own transaction, if it had one, has rolled back and left no success row),
    /// and rethrows. A failure to record is logged, never answered: the client sees the step's error.
    func recordingFailure<Result>(_ failure: AuditEvent, _ step: () async throws -> Result) async throws -> Result {
        do {
            return try await step()
        } catch {
            var event = failure
            // Only the stable code, as the client saw it: a message could quote input.
            event.detail.reason = (error as? APIError)?.code ?? .internalError
            do {
                if (error as? APIError)?.code == .requestInProgress {
                    // This request lost its Idempotency-Key to a repeat of itself: its failure is
                    // recorded, but the key is not this request's to take.
                    try await IdempotencyClaim.$current.withValue(nil) { try await storage.recordAudit(event) }
                } else {
                    try await storage.recordAudit(event)
                }
            } catch let auditError {
                logger.error(
                    "audit row not recorded",
                    metadata: ["event": "\(event.kind.rawValue)", "requestId": "\(event.requestId)", "error": "\(auditError)"])
            }
            throw error
        }
    }
}

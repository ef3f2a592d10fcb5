import ShareCrypto

/// Refresh (docs/formats.md §3): the device's signing set reshared with the custodian into a new
/// signing set of the same parties and threshold, one generation later, under the same public key.
/// A share that leaked before the refresh signs nothing after it: the custodian keeps only the new set.
///
/// The session runs as a recovery's does (``PendingSession`` recorded first, the new share staged,
/// checked, and promoted only after the custodian's confirm), so a refresh cut off at any moment
/// leaves the old share current or the new one, never half of each.
extension RecoveryEngine {
    /// Refreshes the device's current signing share with the custodian.
    /// - Returns: The new signing share (stored and current when this returns).
    /// - Throws: ``ShareRecoveryError``: `notFound` when no signing share is stored, `noMatchingShare`
    ///   when the custodian holds no share of this set (an older generation), `operationInProgress`
    ///   when another session of the wallet runs, the resharing checks' codes; or the custodian's own
    ///   error. On any failure the stored share is unchanged.
    @discardableResult
    public func refresh() async throws -> ShareRecord {
        try await operation("refresh") {
            try await performResume()
            guard let current = try await configuration.shareStore.currentShare() else {
                throw ShareRecoveryError(.notFound, "no signing share is stored on this device")
            }
            let request = ResharingSessionRequest(
                clientId: configuration.userId, purpose: .refresh, clientShare: current)
            let (sessionId, dealt) = try await reshareWithCustodian(request, ownShare: current, newKind: .signing)
            let pending = PendingSession(sessionId: sessionId, purpose: .refresh)
            let verified = try await abandoningOnFailure(pending) {
                let result = try await configuration.custodian.finishSession(
                    id: sessionId, clientDealing: dealt.outgoingDealing)
                // The plan's shape and later generation were checked on accept; here the key, as after a recovery.
                let newShare = try RecoveryPipeline.verifyNewShares(
                    [try dealt.finish(result: result)], from: current, progress: { _ in })[0]
                try await stage(newShare)
                return newShare
            }
            try await confirmAndPromote(pending)
            return verified
        }
    }
}

/// One backup or recovery per account at a time: the custodian opens no session while the client
/// has another that is open or finished (a finished one may have staged its share and be about to
/// confirm) and not expired. Every keeper of the role asks this before it opens a session, so the
/// rule and its answer are the same in process (``LocalCustodian``) and on the reference server,
/// whose storage finds the running sessions under the account's lock and answers with
/// ``runningOperation(secondsLeft:)``.
extension ResharingCustodian {
    /// The refusal while another session of the account runs, or `nil` when none does.
    /// - Parameter secondsLeft: One entry per session of the account that is open or finished and
    ///   not expired: the seconds until it expires, or `nil` for a keeper whose sessions do not
    ///   expire (they end by confirm, abort or settle).
    /// - Returns: ``ShareRecoveryError/Code/operationInProgress`` saying when to retry, or `nil`.
    public static func runningOperation(secondsLeft: [Int64?]) -> ShareRecoveryError? {
        guard !secondsLeft.isEmpty else { return nil }
        let latest = secondsLeft.compactMap { $0 }.max()
        return ShareRecoveryError(
            .operationInProgress,
            "a backup or recovery of this account is in progress (another device or attempt); retry when it has finished"
                + (latest.map { ", at the latest in \(max($0, 1)) s when its session expires" } ?? "")
        )
    }

    /// Refuses to open a session while another of the account runs.
    /// - Parameter secondsLeft: As for ``runningOperation(secondsLeft:)``.
    /// - Throws: ``ShareRecoveryError/Code/operationInProgress`` when `secondsLeft` is not empty.
    public static func refuseWhileRunning(secondsLeft: [Int64?]) throws(ShareRecoveryError) {
        if let refusal = runningOperation(secondsLeft: secondsLeft) { throw refusal }
    }
}

/// One backup or recovery per account at a time: the custodian opens no session while the client
/// has another that is open or finished (a finished one may have staged its share and be about to
/// confirm) and not expired. Every keeper of the role asks this before it opens a session, so the
/// rule and its answer are the same in process (``LocalCustodian``) and on the reference server.
extension ResharingCustodian {
    /// Refuses to open a session while another of the account runs.
    /// - Parameter secondsLeft: One entry per session of the account that is open or finished and
    ///   not expired: the seconds until it expires, or `nil` for a keeper whose sessions do not
    ///   expire (they end by confirm, abort or settle).
    /// - Throws: ``ShareRecoveryError/Code/operationInProgress`` when `secondsLeft` is not empty,
    ///   saying when to retry.
    public static func refuseWhileRunning(secondsLeft: [Int64?]) throws(ShareRecoveryError) {
        guard !secondsLeft.isEmpty else { return }
        let latest = secondsLeft.compactMap { $0 }.max()
        throw ShareRecoveryError(
            .operationInProgress,
            "a backup or recovery of this account is in progress (another device or attempt); retry when it has finished"
                + (latest.map { ", at the latest in \(max($0, 1)) s when its session expires" } ?? "")
        )
    }
}

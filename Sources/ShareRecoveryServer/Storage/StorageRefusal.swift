/// Why the store refused a change: what is stored conflicts with it. Storage speaks of accounts,
/// sessions, sets, devices and tokens, never of HTTP; the routes answer each refusal
/// (`StorageRefusal+HTTP.swift`). Thrown inside a transaction, a refusal also rolls it back.
enum StorageRefusal: Error, Sendable, Equatable {
    /// A backup or recovery of the account is running (docs/server.md, "One at a time per account");
    /// its session expires in `secondsLeft` seconds at the latest.
    case operationInProgress(secondsLeft: Int64)
    /// An ECDSA pair setup or signing session of the account is running (one at a time per account);
    /// it ends with its last round or its abort, or expires in `secondsLeft` seconds at the latest.
    case ecdsaSessionInProgress(secondsLeft: Int64)
    /// A session with the chosen id exists already.
    case sessionIdTaken
    /// A resharing session is confirmed only once finished.
    case sessionNotFinished
    /// The session left the state it was read in while it was being confirmed.
    case sessionChangedDuringConfirm
    /// The user already has a signing set: a DKG never replaces a wallet.
    case walletExists
    /// The custodian's signing set changed (a recovery, a removed device) since the signing session opened.
    case signingSetChanged
    /// The set that approved a new device no longer signs for the wallet.
    case approvingSetNotCurrent(setId: String)
    /// The device id is in use (or is the primary device's).
    case deviceIdTaken(deviceId: String)
    /// The wallet has `devices` devices, the server's limit.
    case deviceLimitReached(devices: Int)
    /// The single-use token was spent by a concurrent request.
    case tokenSpent
    /// Another request holds the request's `Idempotency-Key` and is still changing something.
    case idempotencyKeyTaken
}

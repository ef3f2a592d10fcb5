/// What ``RecoveryEngine/resumeInterruptedOperation()`` did with an operation that was cut off.
public enum ResumeOutcome: Sendable, Equatable {
    /// No operation was cut off: nothing to do.
    case nothingToResume
    /// The custodian had confirmed the session: a recovery's staged share is now current, a
    /// backup is in place.
    case completed(PendingSession.Purpose)
    /// The custodian had not confirmed it, and now never will: the session is abandoned and a
    /// recovery's staged share discarded; the device is as before the operation.
    case rolledBack(PendingSession.Purpose)
}

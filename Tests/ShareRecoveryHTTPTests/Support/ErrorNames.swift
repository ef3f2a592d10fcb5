import ShareRecovery
import ShareRecoveryHTTP

/// An error's code with the module that owns it, e.g. `engine.noMatchingShare` or
/// `transport.unauthorized`: one value to compare, whichever of the two types an HTTP call threw.
func errorName(_ error: (any Error)?) -> String {
    switch error {
    case let error as ShareRecoveryError: "engine.\(error.code)"
    case let error as TransportError: "transport.\(error.code.rawValue)"
    case nil: "none"
    case let error?: "other.\(type(of: error))"
    }
}

/// The reason of either error type ("" for anything else).
func errorReason(_ error: (any Error)?) -> String {
    switch error {
    case let error as ShareRecoveryError: error.reason
    case let error as TransportError: error.reason
    default: ""
    }
}

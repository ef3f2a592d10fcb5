// Conformances of public types are public, so these imports must be too.
public import ArgumentParser
public import ShareCrypto
public import ShareRecovery
public import ShareRecoveryServer

extension BackupMethod: ExpressibleByArgument {
    /// Accepts the JSON names (`password`, `iCloud`, …) and the API names (`PASSWORD`, `ICLOUD`, …).
    public init?(argument: String) {
        if let method = BackupMethod(name: argument) ?? BackupMethod(apiName: argument) {
            self = method
            return
        }
        guard let method = BackupMethod.allCases.first(where: { $0.name.lowercased() == argument.lowercased() }) else {
            return nil
        }
        self = method
    }

    public static var allValueStrings: [String] { allCases.map(\.name) }
}

extension Curve: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { allCases.map(\.name) }
}

extension TrustedProxies.Header: ExpressibleByArgument {}
extension PostgresSettings.TLSMode: ExpressibleByArgument {}

/// Argon2id parameters for new password and recovery-code backups.
struct KDFOptions: ParsableArguments {
    @Option(help: "Argon2id opslimit (1…16) for password and recovery-code methods.")
    var kdfOps: UInt32 = Argon2idParameters.default.opslimit

    @Option(help: "Argon2id memlimit in KiB (8…1048576).")
    var kdfMemKib: UInt32 = Argon2idParameters.default.memlimitKiB

    @Option(help: "Which cloud key object or passkey credential (stored in the cipherText header).")
    var keyId: String = ""

    func parameters() throws -> Argon2idParameters {
        try Self.parameters(opslimit: kdfOps, memlimitKiB: kdfMemKib)
    }

    /// Argon2id parameters from options; out of bounds is a usage error (`invalidKdfParameters`, exit 2).
    static func parameters(opslimit: UInt32, memlimitKiB: UInt32) throws -> Argon2idParameters {
        do {
            return try Argon2idParameters(opslimit: opslimit, memlimitKiB: memlimitKiB)
        } catch let error as ShareCryptoError {
            throw CLIError.usage(ShareRecoveryError(.invalidKdfParameters, error.reason))
        }
    }
}

/// How progress is shown.
struct ProgressOptions: ParsableArguments {
    @Flag(help: "Progress as JSON lines on stderr.")
    var json = false
}

/// `sign`/`verify --mode`: one of the engine's FROST modes, or threshold ECDSA (docs/ecdsa.md), which
/// is no FROST mode: it signs a 32-byte digest of the message by another protocol.
enum SignatureMode: Equatable, ExpressibleByArgument {
    case frost(SigningMode)
    case ecdsa

    init?(argument: String) {
        if argument == "ecdsa" {
            self = .ecdsa
        } else if let mode = SigningMode(rawValue: argument) {
            self = .frost(mode)
        } else {
            return nil
        }
    }

    static var allValueStrings: [String] { SigningMode.allCases.map(\.rawValue) + ["ecdsa"] }

    /// The FROST mode, nil for ECDSA.
    var frost: SigningMode? {
        if case .frost(let mode) = self { return mode }
        return nil
    }
}

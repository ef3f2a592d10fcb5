/// How a user backup share is protected (docs/formats.md §5 method byte).
public enum BackupMethod: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// A password the user remembers (Argon2id).
    case password = 1
    /// A passkey's 32-byte PRF output (HKDF).
    case passkey = 2
    /// A 32-byte key kept in iCloud Keychain (HKDF).
    case iCloud = 3
    /// A 32-byte key kept in Google Drive's app data (HKDF).
    case googleDrive = 4
    /// A 32-byte key kept in any other key store (HKDF).
    case cloudKey = 5
    /// A one-time recovery code (Argon2id); deleted after a successful recovery.
    case recoveryCode = 6

    /// The key derivation this method is bound to.
    public var kdf: KeyDerivation {
        switch self {
        case .password, .recoveryCode: .argon2id13
        case .passkey, .iCloud, .googleDrive, .cloudKey: .hkdfSHA256
        }
    }

    /// The JSON name (§6 `backupMethod`).
    public var name: String {
        switch self {
        case .password: "password"
        case .passkey: "passkey"
        case .iCloud: "iCloud"
        case .googleDrive: "googleDrive"
        case .cloudKey: "cloudKey"
        case .recoveryCode: "recoveryCode"
        }
    }

    /// The integrator API's query value (`backupMethod=PASSWORD|PASSKEY|ICLOUD|GDRIVE|CUSTOM|RECOVERY_CODE`).
    public var apiName: String {
        switch self {
        case .password: "PASSWORD"
        case .passkey: "PASSKEY"
        case .iCloud: "ICLOUD"
        case .googleDrive: "GDRIVE"
        case .cloudKey: "CUSTOM"
        case .recoveryCode: "RECOVERY_CODE"
        }
    }

    /// Whether a successful recovery consumes the method.
    public var isOneTime: Bool { self == .recoveryCode }

    /// Parses a JSON name.
    public init?(name: String) {
        guard let method = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = method
    }

    /// Parses an integrator API name.
    public init?(apiName: String) {
        guard let method = Self.allCases.first(where: { $0.apiName == apiName }) else { return nil }
        self = method
    }

    public var description: String { name }
}

/// The key derivation of a cipherText (§5 kdf byte).
public enum KeyDerivation: UInt8, Sendable, CustomStringConvertible {
    /// Argon2id v1.3 via `crypto_pwhash`.
    case argon2id13 = 1
    /// HKDF-SHA256 (RFC 5869).
    case hkdfSHA256 = 2

    public var description: String { self == .argon2id13 ? "argon2id13" : "hkdf-sha256" }
}

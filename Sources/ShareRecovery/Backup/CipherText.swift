public import ShareCrypto

/// The key-derivation parameters carried in a cipherText header.
public enum KDFParameters: Sendable, Equatable {
    /// opslimit, memlimit (KiB) and a 16-byte salt.
    case argon2id13(Argon2idParameters, salt: [UInt8])
    /// A 32-byte salt.
    case hkdfSHA256(salt: [UInt8])

    /// The derivation these parameters belong to.
    public var kdf: KeyDerivation {
        switch self {
        case .argon2id13: .argon2id13
        case .hkdfSHA256: .hkdfSHA256
        }
    }

    /// The salt.
    public var salt: [UInt8] {
        switch self {
        case .argon2id13(_, let salt), .hkdfSHA256(let salt): salt
        }
    }
}

/// An encrypted user backup share, version 1 (docs/formats.md §5).
public struct CipherText: Sendable, Equatable {
    /// `SRCT`.
    public static let magic: [UInt8] = [0x53, 0x52, 0x43, 0x54]
    /// The version this implementation reads and writes.
    public static let version: UInt8 = 1
    /// Largest accepted encoded size: far above any real share record, small enough to bound work.
    public static let maximumByteCount = 64 * 1024

    /// The backup method.
    public let method: BackupMethod
    /// The KDF and its parameters.
    public let kdfParameters: KDFParameters
    /// Which cloud key object or passkey credential (may be empty).
    public let keyId: String

    /// The keyId that marks a `recoveryCode` cipherText as a SLIP-39 recovery kit's (RecoveryKit's
    /// lifecycle kits); the engine refuses it for a typed recovery code, so the mark cannot lie.
    public static let recoveryKitKeyId = "slip39-kit"
    /// The 24-byte nonce.
    public let nonce: [UInt8]
    /// XChaCha20-Poly1305 ciphertext with its 16-byte tag.
    public let sealedRecord: [UInt8]

    /// Assembles an envelope, checking every field as the parser would.
    /// - Throws: ``ShareRecoveryError`` (`kdfMismatch`, `malformedCipherText`).
    public init(
        method: BackupMethod, kdfParameters: KDFParameters, keyId: String, nonce: [UInt8], sealedRecord: [UInt8]
    )
        throws(ShareRecoveryError)
    {
        guard kdfParameters.kdf == method.kdf else {
            throw ShareRecoveryError(.kdfMismatch, "\(method) uses \(method.kdf), not \(kdfParameters.kdf)")
        }
        let saltCount = method.kdf == .argon2id13 ? Argon2id.saltCount : 32
        guard kdfParameters.salt.count == saltCount, nonce.count == XChaCha20Poly1305.nonceCount,
            keyId.utf8.count <= 255, sealedRecord.count >= XChaCha20Poly1305.tagCount
        else {
            throw ShareRecoveryError(.malformedCipherText, "a field has the wrong size")
        }
        self.method = method
        self.kdfParameters = kdfParameters
        self.keyId = keyId
        self.nonce = nonce
        self.sealedRecord = sealedRecord
    }

    /// Parses the binary envelope. Checks run in byte order: magic, version, method, kdf pairing,
    /// kdf parameters, keyId, nonce, then the minimum ciphertext size.
    /// - Throws: ``ShareRecoveryError``: `malformedCipherText`, `unsupportedVersion`, `unsupportedMethod`,
    ///   `kdfMismatch`, `invalidKdfParameters`.
    public init(bytes: [UInt8]) throws(ShareRecoveryError) {
        guard bytes.count <= Self.maximumByteCount else {
            throw ShareRecoveryError(.malformedCipherText, "cipherText of \(bytes.count) bytes is too large")
        }
        var reader = ByteReader(bytes: bytes)
        guard let magic = reader.read(4), magic == Self.magic else {
            throw ShareRecoveryError(.malformedCipherText, bytes.count < 4 ? "truncated cipherText" : "bad magic")
        }
        guard let version = reader.readByte() else {
            throw ShareRecoveryError(.malformedCipherText, "truncated cipherText")
        }
        guard version == Self.version else {
            throw ShareRecoveryError(.unsupportedVersion, "cipherText version \(version)")
        }
        guard let methodByte = reader.readByte() else {
            throw ShareRecoveryError(.malformedCipherText, "truncated cipherText")
        }
        guard let method = BackupMethod(rawValue: methodByte) else {
            throw ShareRecoveryError(.unsupportedMethod, "method byte \(methodByte)")
        }
        guard let kdfByte = reader.readByte() else {
            throw ShareRecoveryError(.malformedCipherText, "truncated cipherText")
        }
        guard kdfByte == method.kdf.rawValue else {
            throw ShareRecoveryError(.kdfMismatch, "kdf byte \(kdfByte) does not belong to \(method)")
        }
        let parameters: KDFParameters
        switch method.kdf {
        case .argon2id13:
            guard let ops = reader.readUInt32(), let mem = reader.readUInt32(), let salt = reader.read(16) else {
                throw ShareRecoveryError(.malformedCipherText, "truncated kdf parameters")
            }
            let argon = try mappingCryptoErrors { try Argon2idParameters(opslimit: ops, memlimitKiB: mem) }
            parameters = .argon2id13(argon, salt: salt)
        case .hkdfSHA256:
            guard let salt = reader.read(32) else {
                throw ShareRecoveryError(.malformedCipherText, "truncated kdf parameters")
            }
            parameters = .hkdfSHA256(salt: salt)
        }
        guard let keyIdCount = reader.readByte(), let keyIdBytes = reader.read(Int(keyIdCount)) else {
            throw ShareRecoveryError(.malformedCipherText, "truncated keyId")
        }
        guard let keyId = String(validating: keyIdBytes, as: UTF8.self) else {
            throw ShareRecoveryError(.malformedCipherText, "keyId is not UTF-8")
        }
        guard let nonce = reader.read(XChaCha20Poly1305.nonceCount) else {
            throw ShareRecoveryError(.malformedCipherText, "truncated nonce")
        }
        let rest = reader.rest()
        guard rest.count >= XChaCha20Poly1305.tagCount else {
            throw ShareRecoveryError(.malformedCipherText, "ciphertext shorter than its 16-byte tag")
        }
        try self.init(method: method, kdfParameters: parameters, keyId: keyId, nonce: nonce, sealedRecord: rest)
    }

    /// Parses the base64 text form: strict RFC 4648 base64 with padding and no whitespace.
    /// - Throws: ``ShareRecoveryError/Code/malformedCipherText`` for bad base64, then as ``init(bytes:)``.
    public init(base64 text: String) throws(ShareRecoveryError) {
        guard text.utf8.count <= Self.maximumByteCount / 3 * 4 + 4 else {
            throw ShareRecoveryError(.malformedCipherText, "cipherText text is too large")
        }
        guard let bytes = Base64.decode(text) else {
            throw ShareRecoveryError(.malformedCipherText, "not canonical padded base64")
        }
        try self.init(bytes: bytes)
    }

    /// Magic through nonce: the AAD.
    public var header: [UInt8] {
        var out = Self.magic + [Self.version, method.rawValue, method.kdf.rawValue]
        switch kdfParameters {
        case .argon2id13(let argon, let salt):
            out += bigEndian(argon.opslimit) + bigEndian(argon.memlimitKiB) + salt
        case .hkdfSHA256(let salt):
            out += salt
        }
        out.append(UInt8(keyId.utf8.count))
        out += Array(keyId.utf8)
        return out + nonce
    }

    /// The binary envelope.
    public var bytes: [UInt8] { header + sealedRecord }

    /// The base64 text form.
    public var base64: String { Base64.encode(bytes) }

    // MARK: Encryption

    /// Encrypts a backup share record under a secret with fresh salt and nonce.
    /// - Parameters:
    ///   - record: A backup share with its secret.
    ///   - method: The backup method.
    ///   - secret: The password/recovery code or 32-byte key material.
    ///   - argon2: Argon2id parameters for the password methods (defaults 3, 64 MiB).
    ///   - keyId: Which cloud key or passkey credential, up to 255 UTF-8 bytes.
    ///   - random: The random source for salt and nonce.
    /// - Throws: ``ShareRecoveryError`` for a non-backup record, a bad secret or keyId.
    public static func encrypt(
        _ record: ShareRecord, method: BackupMethod, secret: BackupSecret,
        argon2: Argon2idParameters = .default, keyId: String = "", using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> CipherText {
        let parameters: KDFParameters =
            switch method.kdf {
            case .argon2id13: .argon2id13(argon2, salt: random.bytes(count: Argon2id.saltCount))
            case .hkdfSHA256: .hkdfSHA256(salt: random.bytes(count: 32))
            }
        let key = try secret.deriveKey(method: method, parameters: parameters)
        return try encrypt(
            record, method: method, kdfParameters: parameters, key: key, keyId: keyId,
            nonce: random.bytes(count: XChaCha20Poly1305.nonceCount))
    }

    /// Encrypts with every input explicit (vectors): the derived key, parameters and nonce.
    /// - Throws: ``ShareRecoveryError``.
    public static func encrypt(
        _ record: ShareRecord, method: BackupMethod, kdfParameters: KDFParameters, key: SecureBytes, keyId: String,
        nonce: [UInt8]
    ) throws(ShareRecoveryError) -> CipherText {
        guard record.kind == .backup else {
            throw ShareRecoveryError(.invalidParameters, "only a backup share goes into a cipherText")
        }
        guard keyId.utf8.count <= 255 else {
            throw ShareRecoveryError(.invalidParameters, "keyId longer than 255 bytes")
        }
        let plaintext = try record.binary()
        // The header does not depend on the ciphertext, so build it from a placeholder envelope.
        let draft = try CipherText(
            method: method, kdfParameters: kdfParameters, keyId: keyId, nonce: nonce,
            sealedRecord: [UInt8](repeating: 0, count: XChaCha20Poly1305.tagCount))
        let sealed = try mappingCryptoErrors {
            try XChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, aad: draft.header)
        }
        return try CipherText(
            method: method, kdfParameters: kdfParameters, keyId: keyId, nonce: nonce, sealedRecord: sealed)
    }

    // MARK: Decryption

    /// Derives the 32-byte key this envelope was sealed under.
    /// - Throws: ``ShareRecoveryError``: `emptySecret`, `invalidKeyMaterial`.
    public func deriveKey(secret: BackupSecret) throws(ShareRecoveryError) -> SecureBytes {
        try secret.deriveKey(method: method, parameters: kdfParameters)
    }

    /// Decrypts and validates the user backup share.
    /// - Throws: ``ShareRecoveryError``: `authenticationFailed` for a wrong secret or any tampering,
    ///   the record codes for a bad plaintext, `invalidParameters` when it is not a backup share.
    public func decrypt(secret: BackupSecret) throws(ShareRecoveryError) -> ShareRecord {
        try decrypt(key: try deriveKey(secret: secret))
    }

    /// Decrypts with an already derived key.
    /// - Throws: As ``decrypt(secret:)``.
    public func decrypt(key: SecureBytes) throws(ShareRecoveryError) -> ShareRecord {
        let plaintext = try mappingCryptoErrors {
            try XChaCha20Poly1305.open(sealedRecord, key: key, nonce: nonce, aad: header)
        }
        let record = try ShareRecord(binary: plaintext)
        guard record.kind == .backup else {
            throw ShareRecoveryError(.invalidParameters, "the decrypted record is not a backup share")
        }
        return record
    }
}

private func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

/// Sequential reads that return `nil` instead of running past the end.
struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    mutating func read(_ count: Int) -> [UInt8]? {
        guard count >= 0, offset + count <= bytes.count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func readByte() -> UInt8? { read(1)?.first }

    mutating func readUInt32() -> UInt32? {
        read(4)?.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

import ShareCrypto

/// File names and byte formats of a ``FileSigningShareStore`` directory (docs/share-store.md).
enum StoreLayout {
    /// Held with `flock` while a store object is open.
    static let lockName = "lock"
    /// The passcode-wrapped data key and the attempt counter.
    static let headerName = "header"
    /// The current generation's share.
    static let currentName = "current.share"
    /// The staged generation's share.
    static let stagedName = "staged.share"
    /// The session of an operation cut off before it ended (``PendingSession``).
    static let pendingSessionName = "pending.session"
    /// The current share's ECDSA pair setup with the custodian (``KeptPairSetup``).
    static let pairSetupName = "ecdsa.pairsetup"

    /// Largest share file: a 255-party secp256k1 record plus framing, rounded up.
    static let maximumShareFileCount = 16 * 1024

    /// What a file is for; bound into its AEAD's associated data so no file can stand in for another kind.
    enum Role: UInt8 {
        /// The store header (the wrapped data key).
        case header = 1
        /// A signing share, current or staged (the same role, so promotion is one rename).
        case signingShare = 2
    }

    /// Big-endian bytes of an integer.
    static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// Reads a big-endian integer at `offset`.
    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ bytes: ArraySlice<UInt8>, at offset: Int) -> T {
        let start = bytes.startIndex + offset
        return bytes[start..<start + MemoryLayout<T>.size].reduce(T(0)) { $0 << 8 | T($1) }
    }
}

/// The `header` file: passcode kind, Argon2id parameters and salt, the wrapped data key, and the
/// attempt counter, which is rewritten (atomically) on every passcode attempt.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic `SRSH` |
/// | 4 | 1 | version 1 |
/// | 5 | 1 | role 1 (header) |
/// | 6 | 1 | passcode kind |
/// | 7 | 4 | Argon2id opslimit |
/// | 11 | 4 | Argon2id memlimit, KiB |
/// | 15 | 16 | salt |
/// | 31 | 24 | nonce |
/// | 55 | 48 | data key sealed under the passcode key (AAD: bytes 0..<55) |
/// | 103 | 4 | consecutive failed attempts |
/// | 107 | 8 | time of the last counted attempt, ms since 1970 (signed) |
struct StoreHeader: Sendable {
    static let magic: [UInt8] = Array("SRSH".utf8)
    static let version: UInt8 = 1
    static let wrappedKeyCount = XChaCha20Poly1305.keyCount + XChaCha20Poly1305.tagCount
    static let authenticatedCount = 31 + XChaCha20Poly1305.nonceCount
    static let encodedCount = authenticatedCount + wrappedKeyCount + 4 + 8

    var kind: PasscodeKind
    var parameters: Argon2idParameters
    var salt: [UInt8]
    var nonce: [UInt8]
    var wrappedKey: [UInt8]
    var failedAttempts: Int
    var lastAttemptMilliseconds: Int64

    /// The bytes the key wrap authenticates: everything from the magic through the nonce.
    var wrapAssociatedData: [UInt8] {
        var bytes = Self.magic + [Self.version, StoreLayout.Role.header.rawValue, kind.rawValue]
        bytes += StoreLayout.bytes(parameters.opslimit) + StoreLayout.bytes(parameters.memlimitKiB)
        return bytes + salt + nonce
    }

    /// Wraps a data key under a passcode: fresh salt and nonce, Argon2id, XChaCha20-Poly1305.
    init(
        wrapping dataKey: SecureBytes, passcode: SecureBytes, kind: PasscodeKind, parameters: Argon2idParameters,
        random: any RandomSource
    ) throws(ShareRecoveryError) {
        self.kind = kind
        self.parameters = parameters
        salt = random.bytes(count: Argon2id.saltCount)
        nonce = random.bytes(count: XChaCha20Poly1305.nonceCount)
        wrappedKey = []
        failedAttempts = 0
        lastAttemptMilliseconds = 0
        let passcodeKey = try Self.passcodeKey(passcode, salt: salt, parameters: parameters)
        let aad = wrapAssociatedData
        wrappedKey = try mappingCryptoErrors {
            try XChaCha20Poly1305.seal(dataKey, key: passcodeKey, nonce: nonce, aad: aad)
        }
    }

    /// Unwraps the data key.
    /// - Returns: The data key, or `nil` when the passcode is wrong (or the header was tampered with).
    func unwrap(with passcode: SecureBytes) throws(ShareRecoveryError) -> SecureBytes? {
        let passcodeKey = try Self.passcodeKey(passcode, salt: salt, parameters: parameters)
        do {
            let key = try XChaCha20Poly1305.open(wrappedKey, key: passcodeKey, nonce: nonce, aad: wrapAssociatedData)
            return key.count == XChaCha20Poly1305.keyCount ? key : nil
        } catch {
            return nil
        }
    }

    private static func passcodeKey(_ passcode: SecureBytes, salt: [UInt8], parameters: Argon2idParameters)
        throws(ShareRecoveryError) -> SecureBytes
    {
        try mappingCryptoErrors {
            try Argon2id.deriveKey(
                password: passcode, salt: salt, parameters: parameters, outputCount: XChaCha20Poly1305.keyCount)
        }
    }

    func encoded() -> [UInt8] {
        let attempts = StoreLayout.bytes(UInt32(clamping: failedAttempts))
        return wrapAssociatedData + wrappedKey + attempts + StoreLayout.bytes(lastAttemptMilliseconds)
    }

    init(decoding bytes: [UInt8]) throws(ShareRecoveryError) {
        let all = bytes[...]
        guard bytes.count == Self.encodedCount, Array(bytes[0..<4]) == Self.magic else {
            throw ShareRecoveryError(.storeCorrupted, "the store header has a bad magic or size")
        }
        guard bytes[4] == Self.version else {
            throw ShareRecoveryError(.unsupportedVersion, "store header version \(bytes[4])")
        }
        guard bytes[5] == StoreLayout.Role.header.rawValue, let kind = PasscodeKind(rawValue: bytes[6]) else {
            throw ShareRecoveryError(.storeCorrupted, "the store header has a bad role or passcode kind")
        }
        do {
            parameters = try Argon2idParameters(
                opslimit: StoreLayout.integer(UInt32.self, all, at: 7),
                memlimitKiB: StoreLayout.integer(UInt32.self, all, at: 11))
        } catch {
            throw ShareRecoveryError(.storeCorrupted, "the store header has Argon2id parameters out of bounds")
        }
        self.kind = kind
        salt = Array(bytes[15..<31])
        nonce = Array(bytes[31..<Self.authenticatedCount])
        wrappedKey = Array(bytes[Self.authenticatedCount..<Self.authenticatedCount + Self.wrappedKeyCount])
        let counters = Self.authenticatedCount + Self.wrappedKeyCount
        failedAttempts = Int(StoreLayout.integer(UInt32.self, all, at: counters))
        lastAttemptMilliseconds = StoreLayout.integer(Int64.self, all, at: counters + 4)
    }
}

/// A share file (`current.share`, `staged.share`): the binary share record (docs/formats.md §4) sealed
/// under the store's data key.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic `SRSF` |
/// | 4 | 1 | version 1 |
/// | 5 | 1 | role 2 (signing share) |
/// | 6 | 4 | the record's generation |
/// | 10 | 24 | nonce |
/// | 34 | rest | XChaCha20-Poly1305 of the record, tag last (AAD: bytes 0..<34) |
enum ShareFile {
    static let magic: [UInt8] = Array("SRSF".utf8)
    static let version: UInt8 = 1
    static let authenticatedCount = 10 + XChaCha20Poly1305.nonceCount

    /// Seals a signing share with a fresh nonce.
    static func seal(_ record: ShareRecord, dataKey: SecureBytes, random: any RandomSource) throws(ShareRecoveryError)
        -> [UInt8]
    {
        let plaintext = try record.binary()
        let aad =
            magic + [version, StoreLayout.Role.signingShare.rawValue] + StoreLayout.bytes(record.generation)
            + random.bytes(count: XChaCha20Poly1305.nonceCount)
        let sealed = try mappingCryptoErrors {
            try XChaCha20Poly1305.seal(plaintext, key: dataKey, nonce: Array(aad[10...]), aad: aad)
        }
        return aad + sealed
    }

    /// Opens and fully validates a share file (every §4 check of ``ShareRecord/init(binary:)``).
    /// - Throws: `storeCorrupted` for a file that does not parse, authenticate or validate.
    static func open(_ bytes: [UInt8], dataKey: SecureBytes, name: String) throws(ShareRecoveryError) -> ShareRecord {
        guard bytes.count > authenticatedCount + XChaCha20Poly1305.tagCount, Array(bytes[0..<4]) == magic else {
            throw ShareRecoveryError(.storeCorrupted, "\(name) has a bad magic or size")
        }
        guard bytes[4] == version else { throw ShareRecoveryError(.unsupportedVersion, "\(name) version \(bytes[4])") }
        guard bytes[5] == StoreLayout.Role.signingShare.rawValue else {
            throw ShareRecoveryError(.storeCorrupted, "\(name) has the wrong role")
        }
        let generation = StoreLayout.integer(UInt32.self, bytes[...], at: 6)
        let plaintext: SecureBytes
        do {
            plaintext = try XChaCha20Poly1305.open(
                Array(bytes[authenticatedCount...]), key: dataKey, nonce: Array(bytes[10..<authenticatedCount]),
                aad: Array(bytes[0..<authenticatedCount]))
        } catch {
            throw ShareRecoveryError(.storeCorrupted, "\(name) does not authenticate under the store key")
        }
        let record: ShareRecord
        do {
            record = try ShareRecord(binary: plaintext)
        } catch {
            throw ShareRecoveryError(.storeCorrupted, "\(name) holds an invalid share record (\(error.code))")
        }
        guard record.kind == .signing, record.generation == generation else {
            throw ShareRecoveryError(.storeCorrupted, "\(name) disagrees with its record's kind or generation")
        }
        return record
    }
}

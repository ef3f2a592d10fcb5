public import ShareCrypto
public import ShareRecovery

/// A recovery method in the lifecycle, as a user sees it: a backup method, or a paper recovery kit.
public enum ListedRecoveryMethod: Sendable, Hashable, CustomStringConvertible {
    /// A cipherText-based method (a `recoveryCode` here is one the user types).
    case backup(BackupMethod)
    /// A SLIP-39 kit made by `RecoveryEngine.createRecoveryKit(groupThreshold:groups:passphrase:)`.
    case recoveryKit

    public var description: String {
        switch self {
        case .backup(let method): method.name
        case .recoveryKit: "recoveryKit"
        }
    }
}

/// Recovery kits as a method of the lifecycle.
///
/// docs/formats.md §6 tags every custodian backup share with one of six backup methods and has no tag for
/// kits, so a kit takes the slot of the one it is closest to: `recoveryCode`, a one-time secret the
/// user keeps offline. A kit is a recovery code on paper. Its backup set is made like any other
/// (a resharing with the custodian); the user backup share's scalar becomes the SLIP-39 master
/// secret, and a standard §5 `recoveryCode` cipherText is stored for it, whose recovery code is the
/// master secret's lowercase hex and whose keyId is ``BackupShareKit/lifecycleKeyId``. That stored
/// cipherText is what puts the kit in the lifecycle:
/// - it is listed (the keyId tells a kit from a typed code);
/// - a new kit, or a typed recovery code, replaces the cipherText and the custodian share of the
///   slot, so the old kit is void;
/// - it is deleted like any method, and spent by a successful recovery like any recovery code;
/// - a recovery with the kit goes through the engine's normal path and §7 selection, and a wrong
///   SLIP-39 passphrase, which SLIP-39 itself cannot detect, fails authentication here.
extension RecoveryEngine {
    /// Makes a new kit: a new backup set whose user share is written as SLIP-39 mnemonics. Any
    /// earlier kit or typed recovery code stops working.
    /// - Parameters:
    ///   - groupThreshold: How many groups recover the kit.
    ///   - groups: The groups (one 1-of-1 group by default).
    ///   - passphrase: Optional SLIP-39 passphrase (printable ASCII).
    /// - Returns: One array of shares per group: the kit to print. Nothing else keeps them.
    /// - Throws: ``RecoveryKitError`` for a bad layout or passphrase, `ShareRecoveryError` otherwise;
    ///   on any failure nothing is delivered or stored.
    public func createRecoveryKit(
        groupThreshold: Int = 1, groups: [SLIP39.Group] = [SLIP39.Group(memberThreshold: 1, memberCount: 1)],
        passphrase: SecureBytes = SecureBytes(zeros: 0)
    ) async throws -> [[SLIP39.Share]] {
        var kit: [[SLIP39.Share]] = []
        let random = configuration.random
        _ = try await backup(method: .recoveryCode, keyId: BackupShareKit.lifecycleKeyId) { share in
            kit = try BackupShareKit.export(
                share, groupThreshold: groupThreshold, groups: groups, passphrase: passphrase, using: random)
            guard let secret = share.secret else {
                throw RecoveryKitError(.invalidKitShare, "the new user backup share has no secret")
            }
            return try BackupShareKit.recoveryCode(masterSecret: secret.rawRepresentation)
        }
        return kit
    }

    /// Recovers a new signing share from the active kit's mnemonics, with the §8 statuses.
    /// - Parameters:
    ///   - shares: Enough shares of the kit (``SLIP39/decodeMnemonics(lines:)``).
    ///   - passphrase: The kit's SLIP-39 passphrase (empty if none).
    ///   - progress: Told every status as it begins.
    /// - Returns: The new signing share, stored and current. The kit is spent.
    /// - Throws: ``RecoveryKitError`` when the shares do not combine; `ShareRecoveryError` `notFound`
    ///   when no kit is active (the slot is empty or holds a typed code), `authenticationFailed` for
    ///   a kit that is not the active one or a wrong passphrase.
    @discardableResult
    public func recoverFromKit(
        _ shares: [SLIP39.Share], passphrase: SecureBytes = SecureBytes(zeros: 0),
        progress: @Sendable (RecoveryStatus) -> Void = { _ in }
    ) async throws -> ShareRecord {
        let masterSecret = try SLIP39.combine(shares, passphrase: passphrase)
        let code = try BackupShareKit.recoveryCode(masterSecret: masterSecret)
        let cipherText = try await requiredKitCipherText()
        return try await recover(method: .recoveryCode, cipherText: cipherText, secret: code, progress: progress)
    }

    /// Whether the `recoveryCode` slot holds a kit. Reads the stored cipherText's header, so it needs
    /// a cipherText source (with the reference server, a `recover` token).
    public func isRecoveryKitActive() async throws -> Bool {
        try await activeKitCipherText() != nil
    }

    /// The activated methods, with a kit shown as a kit rather than as the `recoveryCode` it occupies.
    public func listRecoveryMethods() async throws -> [ListedRecoveryMethod] {
        var listed: [ListedRecoveryMethod] = []
        for method in try await activatedRecoveryMethods() {
            if method == .recoveryCode, try await kitCipherText() != nil {
                listed.append(.recoveryKit)
            } else {
                listed.append(.backup(method))
            }
        }
        return listed
    }

    /// Deletes the active kit: its cipherText and custodian backup share.
    /// - Parameter force: Delete even when it is the last method.
    /// - Throws: `notFound` when the slot is empty or holds a typed recovery code (which this must not
    ///   delete by mistake), `invalidParameters` when it is the last method and `force` is false.
    public func deleteRecoveryKit(force: Bool = false) async throws {
        _ = try await requiredKitCipherText()
        try await deleteRecoveryMethod(.recoveryCode, force: force)
    }

    /// The stored kit cipherText, or `notFound`.
    private func requiredKitCipherText() async throws -> String {
        guard let text = try await activeKitCipherText() else {
            throw ShareRecoveryError(
                .notFound, "no recovery kit is active (the recoveryCode slot is empty or holds a typed code)")
        }
        return text
    }

    /// The stored kit cipherText; `nil` when the slot is empty or holds a typed code.
    private func activeKitCipherText() async throws -> String? {
        guard try await activatedRecoveryMethods().contains(.recoveryCode) else { return nil }
        return try await kitCipherText()
    }

    /// The `recoveryCode` cipherText if it is a kit's; `nil` if it is a typed code's.
    private func kitCipherText() async throws -> String? {
        guard let source = configuration.cipherTextSource else {
            throw ShareRecoveryError(.invalidParameters, "telling a kit from a typed code needs a cipherText source")
        }
        let text = try await source.fetchCipherText(userId: configuration.userId, method: .recoveryCode)
        return try CipherText(base64: text).keyId == BackupShareKit.lifecycleKeyId ? text : nil
    }
}

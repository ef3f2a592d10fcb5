/// Fetches a user's cipherText by backup method (the integrator's
/// `GET /users/{userId}/user-backup-share?backupMethod=…`).
public protocol CipherTextSource: Sendable {
    /// The cipherText text for a user and method.
    /// - Throws: ``ShareRecoveryError`` with `notFound` when there is none; the source's own errors
    ///   (e.g. a transport failure) otherwise, which the engine passes through unchanged.
    func fetchCipherText(userId: String, method: BackupMethod) async throws -> String
}

/// Keeps users' cipherTexts (the integrator's `PUT`/`DELETE` of the same resource).
public protocol CipherTextStore: Sendable {
    /// Stores (or replaces) the cipherText for a user and method.
    func storeCipherText(_ cipherText: String, userId: String, method: BackupMethod) async throws
    /// Deletes the cipherText for a user and method; deleting a missing one is not an error.
    func deleteCipherText(userId: String, method: BackupMethod) async throws
    /// The methods that have a stored cipherText for a user.
    func storedMethods(userId: String) async throws -> [BackupMethod]
}

/// Returns every custodian backup share stored for a client (the integrator's `/backup/fetch` webhook).
public protocol CustodianShareSource: Sendable {
    /// The §6 JSON strings stored for a client, in any order.
    func fetchBackupShares(clientId: String) async throws -> [String]
}

/// Receives custodian backup shares for storage (the integrator's `/backup` webhook).
/// One share per client, backup method and curve is kept: a new one replaces the old.
public protocol CustodianBackupSink: Sendable {
    /// Stores a §6 JSON string for a client, replacing any share of the same method and curve.
    func deliverBackupShare(_ json: String, clientId: String) async throws
    /// Deletes the client's shares of one backup method.
    func deleteBackupShares(clientId: String, method: BackupMethod) async throws
}

/// An integrator kept in memory: every integrator-side protocol over dictionaries (tests, demos).
public actor InMemoryIntegrator: CipherTextSource, CipherTextStore, CustodianShareSource, CustodianBackupSink {
    private var cipherTexts: [String: [BackupMethod: String]] = [:]
    private var backupShares: [String: [String]] = [:]

    /// Creates an empty integrator.
    public init() {}

    public func fetchCipherText(userId: String, method: BackupMethod) throws(ShareRecoveryError) -> String {
        guard let text = cipherTexts[userId]?[method] else {
            throw ShareRecoveryError(.notFound, "no cipherText for this user and method \(method)")
        }
        return text
    }

    public func storeCipherText(_ cipherText: String, userId: String, method: BackupMethod) {
        cipherTexts[userId, default: [:]][method] = cipherText
    }

    public func deleteCipherText(userId: String, method: BackupMethod) {
        cipherTexts[userId]?[method] = nil
    }

    public func storedMethods(userId: String) -> [BackupMethod] {
        (cipherTexts[userId] ?? [:]).keys.sorted { $0.rawValue < $1.rawValue }
    }

    public func fetchBackupShares(clientId: String) -> [String] { backupShares[clientId] ?? [] }

    public func deliverBackupShare(_ json: String, clientId: String) throws(ShareRecoveryError) {
        let incoming = try CustodianBackupShare(json: json)
        // Replace shares of the same method and curve, but keep the other parties of the same new set.
        backupShares[clientId, default: []].removeAll { text in
            guard let existing = try? CustodianBackupShare(json: text) else { return true }
            return existing.backupMethod == incoming.backupMethod && existing.curve == incoming.curve
                && existing.setId != incoming.setId
        }
        if !(backupShares[clientId] ?? []).contains(json) { backupShares[clientId, default: []].append(json) }
    }

    public func deleteBackupShares(clientId: String, method: BackupMethod) {
        backupShares[clientId]?.removeAll { (try? CustodianBackupShare(json: $0))?.backupMethod == method }
    }
}

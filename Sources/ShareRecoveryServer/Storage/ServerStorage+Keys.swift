import ShareCrypto
import ShareRecovery

/// The server's own keys, sealed under the master key.
extension ServerStorage {
    /// The sealed key row, creating it with `create()` when absent (the first of several starting processes wins).
    func serverKey(
        name: String, create: @escaping @Sendable () throws -> (publicKey: [UInt8], sealed: [UInt8]), now: Int64
    ) async throws -> (publicKey: [UInt8], sealed: [UInt8]) {
        try await transaction { transaction in
            try await transaction.lock("server key \(name)")
            let rows = try await transaction.query(
                "SELECT public_key, sealed_secret FROM server_keys WHERE name = ?", .text(name))
            if let row = rows.first { return (try row.blob("public_key"), try row.blob("sealed_secret")) }
            let fresh = try create()
            try await transaction.query(
                "INSERT INTO server_keys (name, public_key, sealed_secret, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
                .text(name), .blob(fresh.publicKey), .blob(fresh.sealed), .integer(now))
            let stored = try await transaction.query(
                "SELECT public_key, sealed_secret FROM server_keys WHERE name = ?", .text(name))
            guard let row = stored.first else {
                throw ShareRecoveryError(.storageFailure, "the server key row vanished")
            }
            return (try row.blob("public_key"), try row.blob("sealed_secret"))
        }
    }
}

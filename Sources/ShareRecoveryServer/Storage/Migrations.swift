/// The schema, in order. A migration is never edited once released: add a new one instead. A new one
/// expands only (adds what the previous release ignores); what it replaces is dropped by a later
/// release, once the previous one runs nowhere (docs/server.md, "Upgrade and migrations").
enum Migrations {
    /// Each migration's statements, with `{int}` and `{blob}` standing for the dialect's column types
    /// and `{genesis}` for the audit chain's first previous hash (32 zero bytes) as a literal. A
    /// statement that begins with `{postgres}` or `{sqlite}` runs on that dialect only.
    static let all: [[String]] = [
        [
            // Long-lived server secrets (the custodian's X25519 key), encrypted under the master key.
            """
            CREATE TABLE server_keys (
                name TEXT PRIMARY KEY,
                public_key {blob} NOT NULL,
                sealed_secret {blob} NOT NULL,
                created_at {int} NOT NULL
            )
            """,
            // Integrator API: one cipherText per user and backup method.
            """
            CREATE TABLE cipher_texts (
                user_id TEXT NOT NULL,
                method TEXT NOT NULL,
                cipher_text TEXT NOT NULL,
                updated_at {int} NOT NULL,
                PRIMARY KEY (user_id, method)
            )
            """,
            // Custodian backup shares (docs/formats.md §6), one per client, method, curve and party of the newest set.
            """
            CREATE TABLE backup_shares (
                client_id TEXT NOT NULL,
                method TEXT NOT NULL,
                curve TEXT NOT NULL,
                party_index {int} NOT NULL,
                set_id TEXT NOT NULL,
                share_json TEXT NOT NULL,
                delivered_at {int} NOT NULL,
                PRIMARY KEY (client_id, method, curve, party_index)
            )
            """,
            // The custodian's current signing shares (parties 2…n), encrypted under the master key.
            """
            CREATE TABLE signing_shares (
                client_id TEXT NOT NULL,
                party_index {int} NOT NULL,
                set_id TEXT NOT NULL,
                generation {int} NOT NULL,
                sealed_record {blob} NOT NULL,
                PRIMARY KEY (client_id, party_index)
            )
            """,
            // OTP recovery flows: the code is kept only as a keyed hash.
            """
            CREATE TABLE recovery_flows (
                id TEXT PRIMARY KEY,
                identifier TEXT NOT NULL,
                purpose TEXT NOT NULL,
                code_hash {blob} NOT NULL,
                wrong_attempts {int} NOT NULL,
                state TEXT NOT NULL,
                expires_at {int} NOT NULL
            )
            """,
            "CREATE INDEX recovery_flows_expiry ON recovery_flows (expires_at)",
            // Ids of single-use tokens already spent, until the token would have expired anyway.
            """
            CREATE TABLE spent_tokens (
                token_id TEXT PRIMARY KEY,
                expires_at {int} NOT NULL
            )
            """,
            "CREATE INDEX spent_tokens_expiry ON spent_tokens (expires_at)",
            // Fixed-window counters for rate limits.
            """
            CREATE TABLE rate_limits (
                bucket TEXT PRIMARY KEY,
                window_start {int} NOT NULL,
                hits {int} NOT NULL
            )
            """,
            // Resharing sessions (docs/formats.md §3, custodian side); secrets encrypted under the master key.
            """
            CREATE TABLE recovery_sessions (
                id TEXT PRIMARY KEY,
                client_id TEXT NOT NULL,
                purpose TEXT NOT NULL,
                method TEXT NOT NULL,
                state TEXT NOT NULL,
                plan_json TEXT NOT NULL,
                dealings_json TEXT NOT NULL,
                expected_set TEXT NOT NULL,
                sealed_secrets {blob} NOT NULL,
                sealed_pending {blob},
                expires_at {int} NOT NULL
            )
            """,
            "CREATE INDEX recovery_sessions_expiry ON recovery_sessions (expires_at)",
        ],
        [
            // Wallet sessions in which the custodian is party 2: distributed key generation (docs/formats.md §10)
            // and threshold signing (§11). The role's state between the two requests is sealed under the
            // master key and emptied once the session is done; `public_json` binds it to a wallet and set.
            """
            CREATE TABLE protocol_sessions (
                id TEXT PRIMARY KEY,
                client_id TEXT NOT NULL,
                protocol TEXT NOT NULL,
                state TEXT NOT NULL,
                public_json TEXT NOT NULL,
                sealed_state {blob} NOT NULL,
                expires_at {int} NOT NULL
            )
            """,
            "CREATE INDEX protocol_sessions_expiry ON protocol_sessions (expires_at)",
        ],
        [
            // Resharing sessions move into protocol_sessions (protocol 'resharing'): one session store for
            // every multi-round protocol. Sessions live minutes; any open at the upgrade are abandoned.
            "DROP TABLE recovery_sessions"
        ],
        [
            // Idempotency-Key claims and the answers kept under them (docs/server.md, "Idempotent requests"):
            // scope and fingerprint are keyed hashes (never a credential or body); the answer is sealed.
            """
            CREATE TABLE idempotency_keys (
                scope TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                fingerprint {blob} NOT NULL,
                owner TEXT NOT NULL,
                state TEXT NOT NULL,
                status {int},
                content_type TEXT,
                sealed_body {blob},
                lease_until {int} NOT NULL,
                expires_at {int} NOT NULL,
                PRIMARY KEY (scope, idempotency_key)
            )
            """,
            "CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)",
        ],
        [
            // The audit trail: one row per security-relevant event, appended in the transaction of the
            // change it records, in one global hash chain (AuditChain.swift): `hash` is SHA-256 over the
            // previous row's hash and this row's fields. No secret is ever stored here.
            """
            CREATE TABLE audit_events (
                seq {int} PRIMARY KEY,
                at {int} NOT NULL,
                account TEXT NOT NULL,
                event TEXT NOT NULL,
                request_id TEXT NOT NULL,
                detail TEXT NOT NULL,
                previous_hash {blob} NOT NULL,
                hash {blob} NOT NULL
            )
            """,
            "CREATE INDEX audit_events_account ON audit_events (account, seq)",
        ],
        [
            // Eject (docs/eject.md): the wallets whose key left with their user. The custodian's
            // signing share is deleted when the row is written; the row keeps the wallet refused.
            """
            CREATE TABLE ejected_wallets (
                client_id TEXT NOT NULL,
                wallet_id TEXT NOT NULL,
                set_id TEXT NOT NULL,
                public_key TEXT NOT NULL,
                ejected_at {int} NOT NULL,
                PRIMARY KEY (client_id, wallet_id)
            )
            """
        ],
        walletDevices,
        auditHead,
        eventOutbox,
        ecdsaPairSetups,
        ecdsaEventOutbox,
        auditChains,
        signingShareAges,
    ]

    /// The statements of a migration in a dialect.
    static func statements(_ migration: [String], dialect: SQLDialect) -> [String] {
        let (int, blob, genesis) =
            dialect == .sqlite
            ? ("INTEGER", "BLOB", "zeroblob(\(AuditChain.genesis.count))")
            : ("BIGINT", "BYTEA", "decode(repeat('00', \(AuditChain.genesis.count)), 'hex')")
        return migration.compactMap { statement in
            var statement = Substring(statement)
            for (marker, only) in [("{postgres}", SQLDialect.postgres), ("{sqlite}", .sqlite)]
            where statement.hasPrefix(marker) {
                guard dialect == only else { return nil }
                statement = statement.dropFirst(marker.count)
            }
            return String(statement).replacingOccurrences(of: "{int}", with: int)
                .replacingOccurrences(of: "{blob}", with: blob).replacingOccurrences(of: "{genesis}", with: genesis)
        }
    }

    /// How many migrations the database lacks (0: migrated), read without changing anything; throws
    /// when the database cannot be reached or was never migrated.
    static func missing(in transaction: any SQLTransaction) async throws -> Int {
        let applied = try await transaction.query("SELECT version FROM schema_migrations").map {
            try $0.integer("version")
        }
        return Set((1...all.count).map(Int64.init)).subtracting(applied).count
    }

    /// A database's schema against this build's migrations.
    enum SchemaState: Sendable, Equatable {
        /// Every migration of this build, and no other.
        case current
        /// Lacks `missing` of this build's migrations (all of them: an empty database).
        case behind(missing: Int)
        /// Has every migration of this build and these later ones, from a newer release.
        case newer(versions: [Int64])

        /// Whether this build's server runs on it: every table it uses is there (a newer release only
        /// adds, until a release that no longer runs beside this one contracts; docs/server.md).
        var isUsable: Bool {
            if case .behind = self { return false }
            return true
        }
    }

    /// The schema's state, read without changing anything (a database never migrated is behind by all).
    static func state(in transaction: any SQLTransaction, dialect: SQLDialect) async throws -> SchemaState {
        let exists =
            dialect == .postgres
            ? "SELECT CASE WHEN to_regclass('schema_migrations') IS NULL THEN 0 ELSE 1 END AS present"
            : "SELECT count(*) AS present FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        guard try await transaction.query(exists).first?.integer("present") ?? 0 > 0 else {
            return .behind(missing: all.count)
        }
        let applied = Set(
            try await transaction.query("SELECT version FROM schema_migrations").map { try $0.integer("version") })
        let known = Set((1...all.count).map(Int64.init))
        let missing = known.subtracting(applied).count
        if missing > 0 { return .behind(missing: missing) }
        let later = applied.subtracting(known).sorted()
        return later.isEmpty ? .current : .newer(versions: later)
    }

    /// Applies every migration not yet recorded, inside the caller's (locked) transaction.
    /// - Returns: How many were applied.
    @discardableResult
    static func apply(in transaction: any SQLTransaction, dialect: SQLDialect) async throws -> Int {
        try await transaction.query(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version \(dialect == .sqlite ? "INTEGER" : "BIGINT") PRIMARY KEY)"
        )
        let applied = try await transaction.query("SELECT version FROM schema_migrations").map {
            try $0.integer("version")
        }
        let done = Set(applied)
        var count = 0
        for (offset, migration) in all.enumerated() where !done.contains(Int64(offset + 1)) {
            for statement in statements(migration, dialect: dialect) { try await transaction.query(statement) }
            try await transaction.query(
                "INSERT INTO schema_migrations (version) VALUES (?)", .integer(Int64(offset + 1)))
            count += 1
        }
        return count
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

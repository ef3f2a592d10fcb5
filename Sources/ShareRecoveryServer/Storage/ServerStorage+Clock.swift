import ShareRecovery

extension ServerStorage {
    /// Seconds since the Unix epoch by the clock that decides expiries, rate-limit windows and purges.
    /// On PostgreSQL it is the database's own clock, so every process of a fleet reads the same time
    /// however far their own clocks drift; SQLite is embedded in one process, whose clock it keeps.
    /// - Parameters:
    ///   - processClock: This process's clock (SQLite's time).
    ///   - databaseOffset: Seconds added to PostgreSQL's reading (0; tests move the database's time with it).
    /// - Throws: A storage failure when PostgreSQL cannot be read.
    func currentTime(processClock: ServerClock, databaseOffset: Int64) async throws -> Int64 {
        switch dialect {
        case .sqlite:
            return processClock.now
        case .postgres:
            // clock_timestamp(), not now(): this read is a transaction of its own, whose start is this moment anyway.
            let rows = try await read { transaction in
                try await transaction.query(
                    "SELECT CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp())) AS BIGINT) AS database_now")
            }
            guard let row = rows.first else {
                throw ShareRecoveryError(.storageFailure, "PostgreSQL returned no time")
            }
            return try row.integer("database_now") + databaseOffset
        }
    }
}

extension ServerStorage {
    /// Unix milliseconds by the same deciding clock, for the integrator events' claims and retries,
    /// which the fleet's processes compare with each other: PostgreSQL's clock there, else `process`.
    /// - Throws: A storage failure when PostgreSQL cannot be read.
    func currentMilliseconds(process: @autoclosure () -> Int64) async throws -> Int64 {
        switch dialect {
        case .sqlite:
            return process()
        case .postgres:
            let rows = try await read { transaction in
                try await transaction.query(
                    "SELECT CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT) AS database_now")
            }
            guard let row = rows.first else {
                throw ShareRecoveryError(.storageFailure, "PostgreSQL returned no time")
            }
            return try row.integer("database_now")
        }
    }
}

extension Migrations {
    /// When the custodian stored each primary signing share (seconds, by the deciding clock): the age
    /// `refreshAfterSeconds` refuses signing at (docs/server.md, "Refresh policy"). Rows that exist are
    /// counted from the migration; a row a previous release writes while a fleet upgrades gets 0, which
    /// the policy reads as unknown and never refuses (expand first: that release ignores the column).
    static let signingShareAges: [String] = [
        "ALTER TABLE signing_shares ADD COLUMN stored_at {int} NOT NULL DEFAULT 0",
        "{sqlite}UPDATE signing_shares SET stored_at = CAST(strftime('%s', 'now') AS INTEGER)",
        "{postgres}UPDATE signing_shares SET stored_at = CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp())) AS BIGINT)",
    ]
}

extension Migrations {
    /// ECDSA pair setups with the custodian (docs/ecdsa.md, "Pair setup"): one row per signing set the
    /// custodian holds a share of (the wallet's primary set or an added device's), keeping the
    /// custodian's side of that set's device–custodian setup, sealed under the master key like a
    /// signing share. The setup is bound to the set and its generation: a recovery's confirm and an
    /// eject delete the account's rows, a device's removal its set's row, and an aborted signature
    /// the row it signed over, so the device must make a fresh setup.
    static let ecdsaPairSetups: [String] = [
        """
        CREATE TABLE ecdsa_pair_setups (
            client_id TEXT NOT NULL,
            set_id TEXT NOT NULL,
            generation {int} NOT NULL,
            sealed_setup {blob} NOT NULL,
            created_at {int} NOT NULL,
            PRIMARY KEY (client_id, set_id)
        )
        """
    ]
}

extension Migrations {
    /// The wallet's further devices (docs/devices.md): one row per device added by resharing from an
    /// approving device's set, holding the custodian's share of that device's own 2-of-2 set, sealed
    /// under the master key. The device that created or recovered the wallet keeps its set in
    /// `signing_shares`. Removing a device deletes its row, and with it the only other share of its set.
    /// `enrolment_json` is public: the plan, the commitments and the sub-shares sealed to the new device.
    static let walletDevices: [String] = [
        """
        CREATE TABLE wallet_devices (
            client_id TEXT NOT NULL,
            device_id TEXT NOT NULL,
            set_id TEXT NOT NULL,
            generation {int} NOT NULL,
            approved_by TEXT NOT NULL,
            sealed_record {blob} NOT NULL,
            enrolment_json TEXT NOT NULL,
            created_at {int} NOT NULL,
            PRIMARY KEY (client_id, device_id)
        )
        """,
        "CREATE UNIQUE INDEX wallet_devices_set ON wallet_devices (set_id)",
    ]
}

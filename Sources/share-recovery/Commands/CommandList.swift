import ArgumentParser

/// Every subcommand, in help order.
let commandList: [any ParsableCommand.Type] = [
    Keygen.self, WalletCommand.self, DeviceCommand.self, SignCommand.self, VerifyCommand.self, DeriveCommand.self,
    CustodianCommand.self, Backup.self, Encrypt.self, Decrypt.self, Select.self, Recover.self, StoreCommand.self,
    StatusCommand.self, MethodsCommand.self, OTPCommand.self, VectorsCommand.self, KitCommand.self, DemoCommand.self,
    ServeCommand.self, MigrateCommand.self, KeysCommand.self, AuditCommand.self, EventsCommand.self, EjectCommand.self,
    RefreshCommand.self,
]

import ArgumentParser
import ShareRecoveryServer

/// Where a wrapped master key file's wrapping key lives: a PKCS#11 module, token and key, and the PIN
/// (from a file or `$SHARE_RECOVERY_PKCS11_PIN`, never the command line). docs/server.md, "Master key on
/// a PKCS#11 token".
struct MasterKeyPKCS11Options: ParsableArguments {
    @Option(
        name: .customLong("master-key-pkcs11-module"),
        help:
            "PKCS#11 module holding the master key's wrapping key (Debian's SoftHSM2: /usr/lib/softhsm/libsofthsm2.so)."
    )
    var masterKeyPKCS11Module: String?
    @Option(name: .customLong("master-key-pkcs11-token"), help: "Label of the PKCS#11 token holding the wrapping key.")
    var masterKeyPKCS11Token: String?
    @Option(
        name: .customLong("master-key-pkcs11-key"),
        help: "Label of the AES key on the token that wraps the master key file.")
    var masterKeyPKCS11Key: String?
    @Option(
        name: .customLong("master-key-pkcs11-pin-file"),
        help: "File with the token's user PIN (else $SHARE_RECOVERY_PKCS11_PIN; never on the command line).")
    var masterKeyPKCS11PinFile: String?

    /// The token's key, or `nil` when no option of the group is given.
    /// - Throws: ``CLIError`` (usage) when some are given and the module, token or key is missing.
    func location() throws -> PKCS11KeyLocation? {
        guard
            masterKeyPKCS11Module != nil || masterKeyPKCS11Token != nil || masterKeyPKCS11Key != nil
                || masterKeyPKCS11PinFile != nil
        else { return nil }
        guard let module = masterKeyPKCS11Module, let token = masterKeyPKCS11Token, let key = masterKeyPKCS11Key
        else {
            throw CLIError.usage(
                "a master key on a PKCS#11 token needs --master-key-pkcs11-module, --master-key-pkcs11-token and --master-key-pkcs11-key"
            )
        }
        return PKCS11KeyLocation(
            module: module, tokenLabel: token, keyLabel: key,
            pin: masterKeyPKCS11PinFile.map { ServerConfiguration.SecretSource.file(path: $0) }
                ?? .environment(name: "SHARE_RECOVERY_PKCS11_PIN"))
    }

    /// The master key's source: the wrapped file unwrapped by the token, or the plain file.
    /// - Throws: ``CLIError`` (usage) when both or, if `required`, neither file is given, or the token's
    ///   options are incomplete or given without a wrapped file.
    func masterKey(plainFile: String?, wrappedFile: String?, required: Bool) throws -> ServerConfiguration.SecretSource?
    {
        let location = try location()
        switch (plainFile, wrappedFile, location) {
        case (.some, .some, _):
            throw CLIError.usage("give --master-key-file or --master-key-pkcs11, not both")
        case (_, .some(let wrapped), .some(let location)):
            return .pkcs11Wrapped(path: wrapped, key: location)
        case (_, .some, nil):
            throw CLIError.usage(
                "--master-key-pkcs11 needs --master-key-pkcs11-module, --master-key-pkcs11-token and --master-key-pkcs11-key"
            )
        case (_, nil, .some):
            throw CLIError.usage("the --master-key-pkcs11-… options need --master-key-pkcs11 (the wrapped file)")
        case (.some(let plain), nil, nil):
            return .file(path: plain)
        case (nil, nil, nil):
            guard !required else { throw CLIError.usage("give --master-key-file or --master-key-pkcs11") }
            return nil
        }
    }
}

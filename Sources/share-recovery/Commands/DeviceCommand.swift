import ArgumentParser
import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// `device add|list|remove`: a wallet's devices against a reference server (docs/devices.md).
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Add, list and remove the devices of a wallet held with a reference server.",
        discussion: helpText(
            "Each device holds its own 2-of-2 set with the server's custodian, all of one public key: a new device joins by resharing from an approving device's set (the key is never rebuilt, and neither the approver nor the server learns the new share), and removing a device deletes the custodian's share of its set, so that device's share alone signs nothing while the others keep signing. Devices together never sign without the custodian. See docs/devices.md.",
            examples: [
                "share-recovery device add request --key-file phone.key",
                "share-recovery device add approve --server http://127.0.0.1:8080 --user-id user-1 --token-file add.token --store device --passcode-file passcode.txt --device-id phone --device-key \"$DEVICE_KEY\"",
                "share-recovery device add join --server http://127.0.0.1:8080 --token-file add.token --device-id phone --key-file phone.key --out phone-share.json",
                "share-recovery device list --server http://127.0.0.1:8080 --token-file sign.token",
                "share-recovery device remove --server http://127.0.0.1:8080 --token-file remove.token --device-id phone",
            ]),
        subcommands: [Add.self, List.self, Remove.self])

    /// The server and a token file (the server's user is the token's).
    struct DeviceServerOptions: ParsableArguments {
        @Option(help: "The reference server's base URL (e.g. http://127.0.0.1:8080).") var server: String
        @Option(help: "A file with a token of the operation's purpose (from `otp verify`).") var tokenFile: String

        func client() throws -> HTTPWalletClient {
            HTTPWalletClient(baseURL: server, tokenProvider: try TokenFile.provider(tokenFile))
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a device: request (new device), approve (a current device), join (new device).",
            discussion: helpText(
                "Three steps. 1. On the new device, `request` makes its sealing key (--key-file, mode 0600) and prints its public deviceKey. 2. Carry deviceKey to a device that already signs (by hand, QR code: not through the server, which could otherwise swap it) and run `approve` there with a token of purpose addDevice: it reshares that device's set with the custodian into the new device's set. 3. On the new device, `join` with a token of purpose addDevice combines its share from the sub-shares sealed to its key and writes it to --out.",
                examples: [
                    "share-recovery device add request --key-file phone.key",
                    "share-recovery device add approve --server http://127.0.0.1:8080 --user-id user-1 --token-file add.token --signing-share device-share.json --device-id phone --device-key \"$DEVICE_KEY\"",
                    "share-recovery device add join --server http://127.0.0.1:8080 --token-file add.token --device-id phone --key-file phone.key --out phone-share.json",
                ]),
            subcommands: [Request.self, Approve.self, Join.self])
    }

    struct Request: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "On the new device: make its sealing key and print the deviceKey to approve.",
            discussion: helpText(
                "Writes a fresh X25519 secret key to --key-file (mode 0600; an existing file is refused) and prints {\"deviceKey\": hex}. Give deviceKey to the approving device; keep the key file until `device add join` has run (it deletes it).",
                examples: ["share-recovery device add request --key-file phone.key"]))

        @Option(help: "Where to write this device's sealing key (secret, mode 0600).") var keyFile: String

        func run() throws {
            guard !FileManager.default.fileExists(atPath: keyFile) else {
                throw CLIError.outputExists("\(keyFile) exists: give a new path, or run `device add join` with it")
            }
            let pair = SealingKeyPair()
            try Files.write(Hex.encode(pair.secretKey.revealedBytes()) + "\n", to: keyFile, secret: true)
            Terminal.output(JSONWriter.write(.object([("deviceKey", .string(Hex.encode(pair.publicKey)))])))
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "On a device that signs: approve a new device by resharing this device's set.",
            discussion: helpText(
                "Runs the approver's side of docs/devices.md with the server: checks the custodian's plan and dealing keep the wallet key, deals this device's share, seals the new device's sub-share to --device-key and the custodian's to the session key. Needs a token of purpose addDevice and this device's share: --signing-share, or --store with --passcode-file. Prints the new device's id, set and the approving set. The server refuses a device beyond its limit (server code deviceLimitReached).",
                examples: [
                    "share-recovery device add approve --server http://127.0.0.1:8080 --user-id user-1 --token-file add.token --signing-share device-share.json --device-id phone --device-key \"$DEVICE_KEY\"",
                    "share-recovery device add approve --server http://127.0.0.1:8080 --user-id user-1 --token-file add.token --store device --passcode-file passcode.txt --device-id phone --device-key \"$DEVICE_KEY\"",
                ]))

        @OptionGroup var serverOptions: ServerOptions
        @Option(help: "This device's signing share file (party 1).") var signingShare: String?
        @Option(help: "Instead of --signing-share: this device's share store (its current share approves).") var store:
            String?
        @Option(help: "With --store: the store's passcode file.") var passcodeFile: String?
        @Option(help: "The new device's id (1…64 of A–Z a–z 0–9 . _ -).") var deviceId: String
        @Option(help: "The new device's deviceKey, as `device add request` printed it (64 hex digits).") var deviceKey:
            String

        func run() async throws {
            guard (signingShare == nil) != (store == nil), (store == nil) == (passcodeFile == nil) else {
                throw CLIError.usage("give this device's share: --signing-share, or --store with --passcode-file")
            }
            guard let key = Hex.decode(deviceKey), key.count == 32 else {
                throw CLIError.usage("--device-key must be the 64 hex digits `device add request` printed")
            }
            let share: ShareRecord
            if let store, let passcodeFile {
                let device = try FileSigningShareStore(directory: store)
                try await device.authenticate(try Files.readSecretLine(passcodeFile))
                guard let current = try await device.currentShare() else {
                    throw ShareRecoveryError(.notFound, "the store \(store) holds no signing share")
                }
                share = current
            } else {
                share = try Files.readShare(signingShare!)
            }
            let client = HTTPWalletClient(baseURL: serverOptions.server, tokenProvider: try serverOptions.tokens())
            let added = try await client.approveDevice(
                share: share, clientId: serverOptions.userId, deviceId: deviceId, deviceKey: key)
            Terminal.output(JSONWriter.write(deviceJSON(added)))
        }
    }

    struct Join: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "On the new device, once approved: combine this device's share and write it to --out.",
            discussion: helpText(
                "Fetches the enrolment (a token of purpose addDevice), opens the two sub-shares sealed to --key-file, checks them against every commitment and the custodian's, and writes this device's signing share to --out (mode 0600); then deletes --key-file. With --public-key the enrolment must be for that wallet key (compare it with `wallet create`'s, out of band). With --user-id and --sign-token-file (a token of purpose sign) a secp256k1 device also makes its ECDSA pair setup with the custodian and keeps it in --out.pairsetup; without them the first `sign --server --mode ecdsa` makes it. Sign with `sign --server --signing-share`.",
                examples: [
                    "share-recovery device add join --server http://127.0.0.1:8080 --token-file add.token --device-id phone --key-file phone.key --out phone-share.json",
                    "share-recovery device add join --server http://127.0.0.1:8080 --token-file add.token --device-id phone --key-file phone.key --out phone-share.json --user-id user-1 --sign-token-file sign.token",
                    "share-recovery device add join --server http://127.0.0.1:8080 --token-file add.token --device-id phone --key-file phone.key --out phone-share.json --public-key \"$KEY\"",
                ]))

        @OptionGroup var serverOptions: DeviceServerOptions
        @Option(help: "This device's id, as the approver gave it.") var deviceId: String
        @Option(help: "The key file `device add request` wrote.") var keyFile: String
        @Option(help: "Where to write this device's signing share (with its secret, mode 0600).") var out: String
        @Option(help: "The wallet's public key (hex), to check the enrolment against.") var publicKey: String?
        @Option(help: "With --sign-token-file: the user, to make the ECDSA pair setup with the custodian.")
        var userId: String?
        @Option(
            help:
                "A token of purpose sign: a secp256k1 device then makes its ECDSA pair setup and keeps it in --out.pairsetup."
        ) var signTokenFile: String?

        func run() async throws {
            guard (userId == nil) == (signTokenFile == nil) else {
                throw CLIError.usage("--user-id and --sign-token-file go together (they make the ECDSA pair setup)")
            }
            guard let secret = Hex.decodeSecret(try Files.readTrimmedLine(keyFile)), secret.count == 32,
                let pair = try? SealingKeyPair(secretKey: secret)
            else {
                throw ShareRecoveryError(
                    .invalidKeyMaterial, "\(keyFile) must hold the 64 hex digits `device add request` wrote")
            }
            let expected = try publicKey.map { (text) throws -> Point in
                guard let bytes = Hex.decode(text) else { throw CLIError.usage("--public-key must be hex") }
                return try Point(rawRepresentation: bytes, curve: bytes.count == 33 ? .secp256k1 : .ed25519)
            }
            let share = try await serverOptions.client().joinDevice(
                deviceId: deviceId, keyPair: pair, walletPublicKey: expected)
            try Files.write(share.json(includingSecret: true) + "\n", to: out, secret: true)
            try? FileManager.default.removeItem(atPath: keyFile)
            if let userId, let signTokenFile {
                let client = HTTPWalletClient(
                    baseURL: serverOptions.server, tokenProvider: try TokenFile.provider(signTokenFile))
                try await KeptSetupPlace.file(besideShare: out).make(for: share, client: client, clientId: userId)
            }
            Terminal.output(share.json())
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the wallet's devices: the primary one first, then each added one.",
            discussion: helpText(
                "Prints {\"devices\": [...], \"maximumDevices\": n}: each device's id, set, generation and (for an added one) the set that approved it. The token may be of purpose sign, addDevice or removeDevice.",
                examples: ["share-recovery device list --server http://127.0.0.1:8080 --token-file sign.token"]))

        @OptionGroup var serverOptions: DeviceServerOptions

        func run() async throws {
            let (devices, maximum) = try await serverOptions.client().devices()
            Terminal.output(
                JSONWriter.write(
                    .object([
                        ("devices", .array(devices.map(deviceJSON))), ("maximumDevices", .number(String(maximum))),
                    ])))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a device: its share signs nothing from then on; the others keep signing.",
            discussion: helpText(
                "Deletes the custodian's share of the device's set (a single-use token of purpose removeDevice). The primary device (the one that created or recovered the wallet) cannot be removed: recover on another device instead. Prints {\"removed\": id}.",
                examples: [
                    "share-recovery device remove --server http://127.0.0.1:8080 --token-file remove.token --device-id phone"
                ]))

        @OptionGroup var serverOptions: DeviceServerOptions
        @Option(help: "The device to remove.") var deviceId: String

        func run() async throws {
            try await serverOptions.client().removeDevice(deviceId: deviceId)
            Terminal.output(JSONWriter.write(.object([("removed", .string(deviceId))])))
        }
    }
}

/// A device as the CLI prints it.
private func deviceJSON(_ device: WalletDevice) -> JSONValue {
    var members: [(key: String, value: JSONValue)] = [
        ("deviceId", .string(device.deviceId)), ("setId", .string(device.setId)),
        ("generation", .number(String(device.generation))),
    ]
    if let approvedBy = device.approvedBy { members.append(("approvedBy", .string(approvedBy))) }
    return .object(members)
}

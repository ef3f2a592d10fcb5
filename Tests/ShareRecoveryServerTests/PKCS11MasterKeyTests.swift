import Foundation
import Logging
import ShareCrypto
import ShareRecovery
import TestSupport
import Testing

@testable import ShareRecoveryServer

/// The master key file wrapped by an AES key on a PKCS#11 token (docs/server.md, "Master key on a PKCS#11
/// token"), against Debian's SoftHSM2 with a token initialized in a temporary directory.
@Suite(
    "Master key on a PKCS#11 token", .serialized,
    .enabled(if: SoftHSMToken.runs, Comment(rawValue: SoftHSMToken.missingReason)))
struct PKCS11MasterKeyTests {
    @Test("a wrapped key file unwraps to its keys; serve seals under it; keys rotate re-seals under a new one")
    func wrapServeRotate() async throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let oldKey = SystemRandom().bytes(count: 32)
        let newKey = SystemRandom().bytes(count: 32)
        let wrappedOld = try token.wrap(keys: [oldKey], name: "old")
        let wrappedBoth = try token.wrap(keys: [newKey, oldKey], name: "both")
        let wrappedNew = try token.wrap(keys: [newKey], name: "new")
        // Nothing of a key is in the wrapped file.
        let wrappedText = try String(contentsOfFile: wrappedBoth, encoding: .utf8)
        #expect(!wrappedText.contains(Hex.encode(oldKey)) && !wrappedText.contains(Hex.encode(newKey)))

        let unwrapped = try SecretLoading.masterKeys(.pkcs11Wrapped(path: wrappedBoth, key: token.location()))
        #expect(
            unwrapped.map { SecretRing.keyId(of: $0) }
                == [newKey, oldKey].map { SecretRing.keyId(of: SecureBytes(copying: $0)) })

        var logger = Logger(label: "pkcs11")
        logger.logLevel = .critical
        try await TestWorld.with(.sqlite) { configuration in
            configuration.masterKey = .pkcs11Wrapped(path: wrappedOld, key: token.location())
        } _: { world in
            let bearer = try await world.token(for: "hsm", purpose: "sign", server: 0)
            _ = try await WalletWire.createWallet(
                world: world, userId: "hsm", walletId: "w-hsm", curve: .secp256k1, token: bearer, server: 0)
            // Sealed under the unwrapped old key: the new key alone does not open them.
            await #expect(throws: MasterKeyRotationError.self) {
                _ = try await rotateMasterKey(
                    world.database, masterKey: .pkcs11Wrapped(path: wrappedNew, key: token.location()), logger: logger)
            }
            let rotated = try await rotateMasterKey(
                world.database, masterKey: .pkcs11Wrapped(path: wrappedBoth, key: token.location()), logger: logger)
            #expect(rotated.keyId == SecretRing.keyId(of: SecureBytes(copying: newKey)))
            #expect(rotated.resealed > 0 && rotated.remaining == 0)
            let after = try await rotateMasterKey(
                world.database, masterKey: .pkcs11Wrapped(path: wrappedNew, key: token.location()), logger: logger)
            #expect(after.resealed == 0 && after.remaining == 0)
        }
    }

    @Test("a wrong PIN, token, key, module or wrapping key is a typed error that names no secret")
    func typedErrors() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let key = SystemRandom().bytes(count: 32)
        let wrapped = try token.wrap(keys: [key], name: "one")
        func code(_ location: PKCS11KeyLocation, path: String? = nil) -> ServerStartError.Code? {
            do {
                _ = try SecretLoading.masterKeys(.pkcs11Wrapped(path: path ?? wrapped, key: location))
                return nil
            } catch {
                #expect(!error.reason.contains(Hex.encode(key)) && !error.reason.contains(SoftHSMToken.pin))
                return error.code
            }
        }
        #expect(code(token.location(pin: "999999")) == .pkcs11PinIncorrect)
        #expect(code(token.location(tokenLabel: "no-such-token")) == .pkcs11TokenNotFound)
        #expect(code(token.location(keyLabel: "no-such-key")) == .pkcs11KeyNotFound)
        #expect(code(token.location(module: token.directory + "/missing.so")) == .pkcs11ModuleUnavailable)
        // Wrapped under the token's other AES key: does not open under this one.
        let other = try token.wrap(keys: [key], name: "other", keyLabel: SoftHSMToken.otherKeyLabel)
        #expect(code(token.location(), path: other) == .pkcs11UnwrapFailed)
        // A damaged file: one ciphertext digit changed.
        var text = try String(contentsOfFile: wrapped, encoding: .utf8)
        let last = text.index(text.endIndex, offsetBy: -3)
        text.replaceSubrange(last...last, with: text[last] == "0" ? "1" : "0")
        let damaged = token.directory + "/damaged"
        try text.write(toFile: damaged, atomically: true, encoding: .utf8)
        #expect(code(token.location(), path: damaged) == .pkcs11UnwrapFailed)
        // A plain key file is not a wrapped one.
        let plain = token.directory + "/plain.keys"
        try "\(Hex.encode(key))\n".write(toFile: plain, atomically: true, encoding: .utf8)
        #expect(code(token.location(), path: plain) == .pkcs11UnwrapFailed)
    }
}

/// The server's side of the test token: its key's location, and key files wrapped under it.
extension SoftHSMToken {
    func location(
        module: String = SoftHSMToken.module, tokenLabel: String = SoftHSMToken.tokenLabel,
        keyLabel: String = SoftHSMToken.keyLabel, pin: String = SoftHSMToken.pin
    ) -> PKCS11KeyLocation {
        PKCS11KeyLocation(
            module: module, tokenLabel: tokenLabel, keyLabel: keyLabel,
            pin: .value(SecureBytes(copying: Array(pin.utf8))))
    }

    /// A key file of `keys`, wrapped under the token's key; returns the wrapped file's path.
    func wrap(keys: [[UInt8]], name: String, keyLabel: String = SoftHSMToken.keyLabel) throws -> String {
        let plain = "\(directory)/\(name).keys"
        try keys.map { Hex.encode($0) + "\n" }.joined().write(toFile: plain, atomically: true, encoding: .utf8)
        let wrapped = try wrapMasterKeyFile(plain, location: location(keyLabel: keyLabel))
        let path = "\(directory)/\(name).wrapped"
        try wrapped.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CPKCS11
package import ShareCrypto

/// Where the AES key that wraps the master key file lives: a PKCS#11 module (loaded at run time), a token
/// label, a key label, and the user PIN's source (a file or variable, never the command line).
public struct PKCS11KeyLocation: Sendable {
    /// The PKCS#11 module's path (Debian's SoftHSM2: `/usr/lib/softhsm/libsofthsm2.so`).
    public var module: String
    /// The token's label (`softhsm2-util --init-token --label`).
    public var tokenLabel: String
    /// The label of the AES secret key on the token (CKK_AES, usable for CKM_AES_GCM).
    public var keyLabel: String
    /// The user PIN: a file or environment variable, one trailing newline ignored.
    public var pin: ServerConfiguration.SecretSource

    /// - Parameters:
    ///   - module: The PKCS#11 module's path.
    ///   - tokenLabel: The token's label.
    ///   - keyLabel: The AES key's label.
    ///   - pin: The user PIN's source.
    public init(module: String, tokenLabel: String, keyLabel: String, pin: ServerConfiguration.SecretSource) {
        self.module = module
        self.tokenLabel = tokenLabel
        self.keyLabel = keyLabel
        self.pin = pin
    }
}

/// The master key file wrapped by an AES key that never leaves a PKCS#11 token: AES-256-GCM (CKM_AES_GCM,
/// which SoftHSM2 2.6 offers for encrypt and decrypt; its AES key wrap mechanisms only wrap keys) over the
/// file's text, 12-byte random IV, 128-bit tag, a fixed label as additional data. The wrapped file is one
/// line: `share-recovery-master-keys pkcs11-aes-gcm v1 <iv hex> <ciphertext and tag hex>`.
package enum PKCS11MasterKeyFile {
    static let prefix = "share-recovery-master-keys pkcs11-aes-gcm v1 "
    static let additionalData = Array("share-recovery master key file v1".utf8)

    /// The master key file's text, unwrapped by the token's key.
    /// - Throws: ``ServerStartError`` with a `pkcs11…` code naming what to fix.
    package static func unwrap(path: String, location: PKCS11KeyLocation) throws(ServerStartError) -> SecureBytes {
        let wrapped = try SecretLoading.readFile(path)
        guard let text = wrapped.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }),
            text.hasPrefix(prefix)
        else {
            throw ServerStartError(
                .pkcs11UnwrapFailed,
                "\(path) is not a wrapped master key file: make one with `share-recovery keys wrap --master-key-pkcs11-module …`"
            )
        }
        let fields = text.dropFirst(prefix.count).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let iv = Hex.decode(String(fields[0])), iv.count == 12,
            let sealed = Hex.decode(String(fields[1])), sealed.count > 16
        else {
            throw ServerStartError(.pkcs11UnwrapFailed, "\(path) is a damaged wrapped master key file: wrap it again")
        }
        let session = try PKCS11Session(location)
        defer { session.close() }
        guard let plain = session.decrypt(iv: iv, sealed: sealed, additionalData: additionalData) else {
            throw ServerStartError(
                .pkcs11UnwrapFailed,
                "\(path) does not open under key \(location.keyLabel) of token \(location.tokenLabel): it was wrapped by another key, or is damaged"
            )
        }
        return plain
    }

    /// The wrapped file's text for a master key file's text.
    /// - Throws: ``ServerStartError`` with a `pkcs11…` code naming what to fix.
    package static func wrap(_ plain: SecureBytes, location: PKCS11KeyLocation) throws(ServerStartError) -> String {
        let iv = SystemRandom().bytes(count: 12)
        let session = try PKCS11Session(location)
        defer { session.close() }
        let sealed = try session.encrypt(iv: iv, plain: plain, additionalData: additionalData)
        return "\(prefix)\(Hex.encode(iv)) \(Hex.encode(sealed))\n"
    }
}

/// One logged-in session on the token, with the AES key found: loads the module (dlopen), initializes it,
/// and finalizes it on ``close()``. Used within one call, on one thread; never shared.
final class PKCS11Session {
    private let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    private let session: CK_SESSION_HANDLE
    private let key: CK_OBJECT_HANDLE
    private let finalizes: Bool

    init(_ location: PKCS11KeyLocation) throws(ServerStartError) {
        // The module is never dlclose'd: modules commonly keep threads or atexit handlers.
        guard let handle = dlopen(location.module, RTLD_NOW | RTLD_LOCAL) else {
            throw ServerStartError(
                .pkcs11ModuleUnavailable,
                "cannot load the PKCS#11 module \(location.module): install it (Debian: apt-get install softhsm2 gives /usr/lib/softhsm/libsofthsm2.so) or give its path to --master-key-pkcs11-module"
            )
        }
        guard let symbol = dlsym(handle, "C_GetFunctionList") else {
            throw ServerStartError(
                .pkcs11ModuleUnavailable, "\(location.module) is not a PKCS#11 module (it has no C_GetFunctionList)")
        }
        let getFunctionList = unsafeBitCast(symbol, to: CK_C_GetFunctionList.self)
        var list: UnsafeMutablePointer<CK_FUNCTION_LIST>?
        guard getFunctionList(&list) == CKR_OK, let list else {
            throw ServerStartError(.pkcs11ModuleUnavailable, "\(location.module) gave no PKCS#11 function list")
        }
        functions = list
        let initialized = list.pointee.C_Initialize(nil)
        guard initialized == CKR_OK || initialized == CKR_CRYPTOKI_ALREADY_INITIALIZED else {
            throw ServerStartError(
                .pkcs11ModuleUnavailable,
                "the PKCS#11 module \(location.module) did not initialize (CKR 0x\(String(initialized, radix: 16))): for SoftHSM2, check SOFTHSM2_CONF and its tokendir"
            )
        }
        // Another user in this process initialized it first: leave finalizing to that one.
        finalizes = initialized == CKR_OK
        var opened: CK_SESSION_HANDLE = 0
        do throws(ServerStartError) {
            let slot = try Self.slot(list, label: location.tokenLabel)
            guard list.pointee.C_OpenSession(slot, CK_FLAGS(CKF_SERIAL_SESSION), nil, nil, &opened) == CKR_OK else {
                throw ServerStartError(.pkcs11TokenNotFound, "cannot open a session on token \(location.tokenLabel)")
            }
            try Self.login(list, session: opened, pin: try SecretLoading.text(location.pin), token: location.tokenLabel)
            key = try Self.findKey(list, session: opened, label: location.keyLabel, token: location.tokenLabel)
            session = opened
        } catch {
            if opened != 0 { _ = list.pointee.C_CloseSession(opened) }
            if finalizes { _ = list.pointee.C_Finalize(nil) }
            throw error
        }
    }

    /// Logs out, closes the session and finalizes the module (when this session initialized it).
    func close() {
        _ = functions.pointee.C_Logout(session)
        _ = functions.pointee.C_CloseSession(session)
        if finalizes { _ = functions.pointee.C_Finalize(nil) }
    }

    /// The plaintext, or `nil` when the tag does not verify (another key, or a damaged file).
    func decrypt(iv: [UInt8], sealed: [UInt8], additionalData: [UInt8]) -> SecureBytes? {
        var ok = true
        var produced = 0
        let out = SecureBytes(count: sealed.count) { out in
            ok = withGCM(iv: iv, additionalData: additionalData) { mechanism in
                guard functions.pointee.C_DecryptInit(session, mechanism, key) == CKR_OK else { return false }
                var count = CK_ULONG(out.count)
                var input = sealed
                let rv = input.withUnsafeMutableBufferPointer {
                    functions.pointee.C_Decrypt(
                        session, $0.baseAddress, CK_ULONG($0.count),
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), &count)
                }
                produced = Int(count)
                return rv == CKR_OK
            }
        }
        guard ok, produced <= out.count, let plain = try? out.slice(0..<produced) else { return nil }
        return plain
    }

    /// The ciphertext with its 16-byte tag appended.
    func encrypt(iv: [UInt8], plain: SecureBytes, additionalData: [UInt8]) throws(ServerStartError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: plain.count + 16)
        var count = CK_ULONG(out.count)
        let ok = withGCM(iv: iv, additionalData: additionalData) { mechanism in
            guard functions.pointee.C_EncryptInit(session, mechanism, key) == CKR_OK else { return false }
            return plain.withUnsafeBytes { input in
                out.withUnsafeMutableBufferPointer { output in
                    functions.pointee.C_Encrypt(
                        session, UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: UInt8.self)),
                        CK_ULONG(input.count), output.baseAddress, &count) == CKR_OK
                }
            }
        }
        guard ok, Int(count) == out.count else {
            throw ServerStartError(
                .pkcs11UnwrapFailed,
                "the token's key cannot encrypt with AES-GCM: it must be an AES key with CKA_ENCRYPT")
        }
        return out
    }

    private func withGCM(
        iv: [UInt8], additionalData: [UInt8], _ body: (UnsafeMutablePointer<CK_MECHANISM>) -> Bool
    ) -> Bool {
        var iv = iv
        var aad = additionalData
        return iv.withUnsafeMutableBufferPointer { ivBuffer in
            aad.withUnsafeMutableBufferPointer { aadBuffer in
                var parameters = CK_GCM_PARAMS(
                    pIv: ivBuffer.baseAddress, ulIvLen: CK_ULONG(ivBuffer.count),
                    ulIvBits: CK_ULONG(ivBuffer.count * 8),
                    pAAD: aadBuffer.baseAddress, ulAADLen: CK_ULONG(aadBuffer.count), ulTagBits: 128)
                return withUnsafeMutablePointer(to: &parameters) { pointer in
                    var mechanism = CK_MECHANISM(
                        mechanism: CK_MECHANISM_TYPE(CKM_AES_GCM), pParameter: UnsafeMutableRawPointer(pointer),
                        ulParameterLen: CK_ULONG(MemoryLayout<CK_GCM_PARAMS>.size))
                    return body(&mechanism)
                }
            }
        }
    }

    /// The slot whose token has the label (PKCS#11 pads labels with spaces to 32 bytes).
    private static func slot(_ list: UnsafeMutablePointer<CK_FUNCTION_LIST>, label: String)
        throws(ServerStartError) -> CK_SLOT_ID
    {
        var count: CK_ULONG = 0
        guard list.pointee.C_GetSlotList(CK_BBOOL(CK_TRUE), nil, &count) == CKR_OK else {
            throw ServerStartError(.pkcs11TokenNotFound, "the PKCS#11 module lists no slots")
        }
        var slots = [CK_SLOT_ID](repeating: 0, count: Int(count))
        guard count > 0, list.pointee.C_GetSlotList(CK_BBOOL(CK_TRUE), &slots, &count) == CKR_OK else {
            throw ServerStartError(
                .pkcs11TokenNotFound,
                "the PKCS#11 module has no token: initialize one (softhsm2-util --init-token --free --label \(label))")
        }
        for slot in slots.prefix(Int(count)) {
            var info = CK_TOKEN_INFO()
            guard list.pointee.C_GetTokenInfo(slot, &info) == CKR_OK else { continue }
            let padded = withUnsafeBytes(of: info.label) { Array($0) }
            let name = String(decoding: padded, as: UTF8.self).trimmingSuffix(" ")
            if name == label { return slot }
        }
        throw ServerStartError(
            .pkcs11TokenNotFound,
            "no token labelled \(label) in the PKCS#11 module: check --master-key-pkcs11-token (softhsm2-util --show-slots lists them)"
        )
    }

    private static func login(
        _ list: UnsafeMutablePointer<CK_FUNCTION_LIST>, session: CK_SESSION_HANDLE, pin: SecureBytes, token: String
    ) throws(ServerStartError) {
        let rv = pin.withUnsafeBytes { bytes in
            list.pointee.C_Login(
                session, CK_USER_TYPE(CKU_USER),
                UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)),
                CK_ULONG(bytes.count))
        }
        switch rv {
        case CKR_OK, CKR_USER_ALREADY_LOGGED_IN: return
        case CKR_PIN_INCORRECT, CKR_PIN_LEN_RANGE:
            throw ServerStartError(
                .pkcs11PinIncorrect,
                "the user PIN of token \(token) is wrong: check the PIN file or variable (too many tries lock the token)"
            )
        case CKR_PIN_LOCKED:
            throw ServerStartError(
                .pkcs11PinIncorrect, "the user PIN of token \(token) is locked: its SO must reset it")
        default:
            throw ServerStartError(
                .pkcs11PinIncorrect, "login to token \(token) failed (CKR 0x\(String(rv, radix: 16)))")
        }
    }

    private static func findKey(
        _ list: UnsafeMutablePointer<CK_FUNCTION_LIST>, session: CK_SESSION_HANDLE, label: String, token: String
    ) throws(ServerStartError) -> CK_OBJECT_HANDLE {
        var keyClass = CK_OBJECT_CLASS(CKO_SECRET_KEY)
        var labelBytes = Array(label.utf8)
        var found: [CK_OBJECT_HANDLE] = [0, 0]
        var count: CK_ULONG = 0
        let rv = withUnsafeMutablePointer(to: &keyClass) { classPointer in
            labelBytes.withUnsafeMutableBufferPointer { labelBuffer in
                var template = [
                    CK_ATTRIBUTE(
                        type: CK_ATTRIBUTE_TYPE(CKA_CLASS), pValue: UnsafeMutableRawPointer(classPointer),
                        ulValueLen: CK_ULONG(MemoryLayout<CK_OBJECT_CLASS>.size)),
                    CK_ATTRIBUTE(
                        type: CK_ATTRIBUTE_TYPE(CKA_LABEL), pValue: UnsafeMutableRawPointer(labelBuffer.baseAddress),
                        ulValueLen: CK_ULONG(labelBuffer.count)),
                ]
                guard list.pointee.C_FindObjectsInit(session, &template, CK_ULONG(template.count)) == CKR_OK else {
                    return CKR_GENERAL_ERROR
                }
                let rv = list.pointee.C_FindObjects(session, &found, CK_ULONG(found.count), &count)
                _ = list.pointee.C_FindObjectsFinal(session)
                return rv
            }
        }
        guard rv == CKR_OK, count > 0 else {
            throw ServerStartError(
                .pkcs11KeyNotFound,
                "token \(token) has no secret key labelled \(label): check --master-key-pkcs11-key (pkcs11-tool --list-objects --login lists them)"
            )
        }
        guard count == 1 else {
            throw ServerStartError(
                .pkcs11KeyNotFound,
                "token \(token) has several secret keys labelled \(label): give the key a unique label")
        }
        return found[0]
    }
}

extension String {
    fileprivate func trimmingSuffix(_ character: Character) -> String {
        var text = self
        while text.last == character { text.removeLast() }
        return text
    }
}

/// A master key file (one key a line, as `serve --master-key-file` reads it) wrapped by the token's AES
/// key: the text `serve --master-key-pkcs11` and `keys rotate --master-key-pkcs11` unwrap at start.
/// - Parameters:
///   - plainFile: The master key file; its keys are checked as `serve` checks them before wrapping.
///   - location: The token's AES key and the PIN's source.
/// - Returns: The wrapped file's text (nothing secret: the keys are sealed under the token's key).
/// - Throws: ``ServerStartError`` `invalidConfiguration` for a master key file `serve` would refuse, or a
///   `pkcs11…` code naming the module, token, key or PIN to fix.
public func wrapMasterKeyFile(_ plainFile: String, location: PKCS11KeyLocation) throws(ServerStartError) -> String {
    _ = try SecretLoading.masterKeys(.file(path: plainFile))
    let text = try SecretLoading.readFile(plainFile)
    return try PKCS11MasterKeyFile.wrap(text, location: location)
}

import ShareCrypto
import ShareRecovery

/// `ciphertext.json`: the encrypted user backup share of §5.
enum CipherTextVectors: VectorKind {
    static let kind = "ciphertext"
    static let summary =
        "docs/formats.md §5 cipherTexts. A valid case gives every input (secret or keyMaterial, salt, Argon2id "
        + "parameters, keyId, nonce), the derived key and the plaintext record: deriving the key from the secret "
        + "gives derivedKey, decrypting gives recordHex, and encrypting recordHex with derivedKey, the header "
        + "fields and the nonce gives cipherText byte for byte. An invalid case must be refused, by parsing "
        + "cipherText or by decrypting it with the secret, with the named error."
    static let fields: Set<String> = [
        "method", "cipherText", "secret", "keyMaterial", "keyId", "salt", "opslimit", "memlimitKiB", "nonce",
        "derivedKey",
        "recordHex",
    ]

    // MARK: Verification

    /// The case's secret, in the form its `method` takes.
    static func secret(of vector: VectorCase) throws -> (BackupMethod, BackupSecret) {
        let name = try vector.string("method")
        guard let method = BackupMethod(name: name) else { throw VectorProblem("unknown method \"\(name)\"") }
        switch method.kdf {
        case .argon2id13:
            guard !vector.has("keyMaterial") else {
                throw VectorProblem("\(method) takes \"secret\", not \"keyMaterial\"")
            }
            return (method, .text(try vector.string("secret")))
        case .hkdfSHA256:
            guard !vector.has("secret") else { throw VectorProblem("\(method) takes \"keyMaterial\", not \"secret\"") }
            return (method, .keyMaterial(SecureBytes(copying: try vector.hex("keyMaterial"))))
        }
    }

    static func checkValid(_ vector: VectorCase) throws {
        let (method, secret) = try secret(of: vector)
        let text = try vector.string("cipherText")
        let envelope = try CipherText(base64: text)
        guard envelope.method == method else {
            throw VectorProblem("the header says \(envelope.method), the case \(method)")
        }

        // The header fields the case lists are the envelope's.
        let salt = try vector.hex("salt"), nonce = try vector.hex("nonce"), keyId = try vector.string("keyId")
        let parameters: KDFParameters
        switch method.kdf {
        case .argon2id13:
            let argon = try Argon2idParameters(
                opslimit: UInt32(try vector.integer("opslimit")), memlimitKiB: UInt32(try vector.integer("memlimitKiB"))
            )
            parameters = .argon2id13(argon, salt: salt)
        case .hkdfSHA256:
            guard !vector.has("opslimit"), !vector.has("memlimitKiB") else {
                throw VectorProblem("an hkdf-sha256 case has no opslimit or memlimitKiB")
            }
            parameters = .hkdfSHA256(salt: salt)
        }
        guard envelope.kdfParameters == parameters else {
            throw VectorProblem("salt or Argon2id parameters differ from the header")
        }
        guard envelope.nonce == nonce else { throw VectorProblem("nonce differs from the header") }
        guard envelope.keyId == keyId else { throw VectorProblem("keyId differs from the header") }

        // Derive, decrypt, re-encrypt.
        let derivedKey = try vector.hex("derivedKey")
        guard try envelope.deriveKey(secret: secret).revealedBytes() == derivedKey else {
            throw VectorProblem("deriving the key from the secret does not give derivedKey")
        }
        let recordBytes = try vector.hex("recordHex")
        let decrypted = try envelope.decrypt(secret: secret)
        guard try VectorFixtures.binary(decrypted) == recordBytes else {
            throw VectorProblem("decrypting does not give recordHex")
        }
        let record = try ShareRecord(binary: SecureBytes(copying: recordBytes))
        let again = try CipherText.encrypt(
            record, method: method, kdfParameters: parameters, key: SecureBytes(copying: derivedKey), keyId: keyId,
            nonce: nonce)
        guard again.base64 == text else { throw VectorProblem("re-encrypting recordHex does not reproduce cipherText") }
    }

    static func exerciseInvalid(_ vector: VectorCase) throws {
        let (_, secret) = try secret(of: vector)
        let envelope = try CipherText(base64: try vector.string("cipherText"))
        _ = try envelope.decrypt(secret: secret)
    }

    // MARK: Generation

    /// One valid envelope and everything that made it.
    struct Sample {
        let method: BackupMethod
        let secret: Secret
        let record: ShareRecord
        let parameters: KDFParameters
        let keyId: String
        let nonce: [UInt8]
        let key: SecureBytes
        let envelope: CipherText

        enum Secret {
            case text(String)
            case keyMaterial([UInt8])

            var backupSecret: BackupSecret {
                switch self {
                case .text(let text): .text(text)
                case .keyMaterial(let bytes): .keyMaterial(SecureBytes(copying: bytes))
                }
            }

            var field: (key: String, value: JSONValue) {
                switch self {
                case .text(let text): ("secret", .string(text))
                case .keyMaterial(let bytes): ("keyMaterial", .hex(bytes))
                }
            }
        }

        var validFields: [(key: String, value: JSONValue)] {
            var fields: [(key: String, value: JSONValue)] = [
                ("method", .string(method.name)), ("cipherText", .string(envelope.base64)), secret.field,
                ("keyId", .string(keyId)), ("salt", .hex(parameters.salt)),
            ]
            if case .argon2id13(let argon, _) = parameters {
                fields += [("opslimit", .integer(argon.opslimit)), ("memlimitKiB", .integer(argon.memlimitKiB))]
            }
            fields += [
                ("nonce", .hex(nonce)), ("derivedKey", .hex(key.revealedBytes())),
                ("recordHex", .hex((try? VectorFixtures.binary(record)) ?? [])),
            ]
            return fields
        }

        /// Invalid-case fields: the method, a cipherText and this sample's secret (or another one).
        func invalidFields(_ bytes: [UInt8], secret: Secret? = nil) -> [(key: String, value: JSONValue)] {
            invalidFields(text: Base64.encode(bytes), secret: secret)
        }

        func invalidFields(text: String, secret: Secret? = nil) -> [(key: String, value: JSONValue)] {
            [("method", .string(method.name)), ("cipherText", .string(text)), (secret ?? self.secret).field]
        }

        /// Offset of the keyId length byte.
        var keyIdLengthOffset: Int { method.kdf == .argon2id13 ? 31 : 39 }
        /// Offset of the nonce.
        var nonceOffset: Int { keyIdLengthOffset + 1 + keyId.utf8.count }
        /// Offset of the ciphertext.
        var bodyOffset: Int { nonceOffset + XChaCha20Poly1305.nonceCount }
    }

    static func makeSample(
        record: ShareRecord, method: BackupMethod, secret: Sample.Secret, argon: Argon2idParameters = .minimum,
        keyId: String, random: DeterministicRandom
    ) throws -> Sample {
        let parameters: KDFParameters =
            switch method.kdf {
            case .argon2id13: .argon2id13(argon, salt: random.bytes(count: Argon2id.saltCount))
            case .hkdfSHA256: .hkdfSHA256(salt: random.bytes(count: 32))
            }
        let nonce = random.bytes(count: XChaCha20Poly1305.nonceCount)
        let key = try secret.backupSecret.deriveKey(method: method, parameters: parameters)
        let envelope = try CipherText.encrypt(
            record, method: method, kdfParameters: parameters, key: key, keyId: keyId, nonce: nonce)
        return Sample(
            method: method, secret: secret, record: record, parameters: parameters, keyId: keyId, nonce: nonce,
            key: key,
            envelope: envelope)
    }

    /// A recovery code as users see it: four groups of four base32 characters.
    static func recoveryCode(random: DeterministicRandom) -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        let characters = random.bytes(count: 16).map { alphabet[Int($0) % alphabet.count] }
        return stride(from: 0, to: 16, by: 4).map { String(characters[$0..<$0 + 4]) }.joined(separator: "-")
    }

    static let keyIds: [BackupMethod: String] = [
        .password: "", .recoveryCode: "", .passkey: "passkey-credential-5f1c9a",
        .iCloud: "icloud-keychain/share-recovery-backup-key", .googleDrive: "appDataFolder/share-recovery.key",
        .cloudKey: "cl\u{E9}-de-secours/1",
    ]

    static func cases(random: DeterministicRandom) throws -> [JSONValue] {
        var cases: [JSONValue] = []
        var samples: [String: Sample] = [:]
        let secpSet = try VectorFixtures.dealSet(
            curve: .secp256k1, walletId: "wallet-secp256k1-ct", kind: .backup, threshold: 2, parties: 2, generation: 0,
            random: random)
        let edSet = try VectorFixtures.dealSet(
            curve: .ed25519, walletId: "wallet-ed25519-ct", kind: .backup, threshold: 2, parties: 3, generation: 2,
            random: random)

        for (curve, set) in [(Curve.secp256k1, secpSet), (.ed25519, edSet)] {
            let layout = "\(set[0].threshold)of\(set[0].parties)"
            for method in BackupMethod.allCases {
                let secret: Sample.Secret =
                    switch (method, curve) {
                    case (.password, .secp256k1): .text("correct horse battery staple")
                    // NFD on purpose: the key comes from the NFC form, "café au lait".
                    case (.password, .ed25519): .text("cafe\u{301} au lait")
                    case (.recoveryCode, _): .text(recoveryCode(random: random))
                    default: .keyMaterial(random.bytes(count: 32))
                    }
                let argon: Argon2idParameters =
                    curve == .ed25519 && method == .password
                    ? try Argon2idParameters(opslimit: 2, memlimitKiB: 16) : .minimum
                let sample = try makeSample(
                    record: set[0], method: method, secret: secret, argon: argon, keyId: keyIds[method]!, random: random
                )
                let id =
                    "\(curve)-\(layout)-\(method.name)"
                    + (curve == .ed25519 && method == .password ? "-nfd-secret" : "")
                cases.append(CaseBuilder.valid(id, sample.validFields))
                samples["\(curve)-\(method.name)"] = sample
            }
        }
        // A user share of another layout and a long keyId.
        let secpWide = try VectorFixtures.dealSet(
            curve: .secp256k1, walletId: "wallet-secp256k1-ct-2", kind: .backup, threshold: 2, parties: 3,
            generation: 9,
            random: random)
        let wide = try makeSample(
            record: secpWide[0], method: .cloudKey, secret: .keyMaterial(random.bytes(count: 32)),
            keyId: String(repeating: "k", count: 255), random: random)
        cases.append(CaseBuilder.valid("secp256k1-2of3-cloudKey-keyid-255-bytes", wide.validFields))

        cases += try invalidCases(samples: samples, random: random)
        return cases
    }

    private static func invalidCases(samples: [String: Sample], random: DeterministicRandom) throws -> [JSONValue] {
        var cases: [JSONValue] = []
        let password = samples["secp256k1-password"]!, passkey = samples["secp256k1-passkey"]!
        let code = samples["secp256k1-recoveryCode"]!, edCloud = samples["ed25519-googleDrive"]!
        let pw = password.envelope.bytes, pk = passkey.envelope.bytes
        let m = VectorFixtures.mutated
        func invalid(_ id: String, _ error: ShareRecoveryError.Code, _ fields: [(key: String, value: JSONValue)]) {
            cases.append(CaseBuilder.invalid(id, error, fields))
        }

        // Text form.
        let texts = samples.keys.sorted().map { samples[$0]!.envelope.base64 }
        guard
            let padded = texts.first(where: { $0.hasSuffix("=") && !$0.hasSuffix("==") })
                ?? texts.first(where: { $0.hasSuffix("=") }),
            let slashed = texts.first(where: { $0.contains("+") || $0.contains("/") })
        else { throw VectorProblem("no sample text with padding or with + or /") }
        let paddedSample = samples.values.first { $0.envelope.base64 == padded }!
        let slashedSample = samples.values.first { $0.envelope.base64 == slashed }!
        invalid("base64-empty", .malformedCipherText, password.invalidFields(text: ""))
        invalid(
            "base64-bad-character", .malformedCipherText,
            password.invalidFields(text: "U1JDVAEB!" + String(password.envelope.base64.dropFirst(9))))
        invalid(
            "base64-line-break", .malformedCipherText,
            password.invalidFields(text: insert("\n", into: password.envelope.base64, at: 64)))
        invalid(
            "base64-trailing-newline", .malformedCipherText,
            password.invalidFields(text: password.envelope.base64 + "\n"))
        invalid(
            "base64-space", .malformedCipherText,
            password.invalidFields(text: insert(" ", into: password.envelope.base64, at: 8)))
        invalid(
            "base64-missing-padding", .malformedCipherText,
            paddedSample.invalidFields(text: String(padded.prefix { $0 != "=" })))
        invalid(
            "base64-non-canonical-padding-bits", .malformedCipherText,
            paddedSample.invalidFields(text: nonCanonical(padded)))
        invalid(
            "base64-url-safe-alphabet", .malformedCipherText,
            slashedSample.invalidFields(
                text: String(slashed.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })))

        // Envelope, in the parser's check order.
        invalid("truncated-magic", .malformedCipherText, password.invalidFields(Array(pw.prefix(3))))
        invalid("bad-magic", .malformedCipherText, password.invalidFields(m(pw) { $0[3] = UInt8(ascii: "X") }))
        invalid("truncated-after-magic", .malformedCipherText, password.invalidFields(Array(pw.prefix(4))))
        invalid("version-0", .unsupportedVersion, password.invalidFields(m(pw) { $0[4] = 0 }))
        invalid("version-2", .unsupportedVersion, password.invalidFields(m(pw) { $0[4] = 2 }))
        invalid(
            "version-2-and-method-7", .unsupportedVersion,
            password.invalidFields(
                m(pw) {
                    $0[4] = 2; $0[5] = 7
                }))
        invalid("method-0", .unsupportedMethod, password.invalidFields(m(pw) { $0[5] = 0 }))
        invalid("method-7", .unsupportedMethod, password.invalidFields(m(pw) { $0[5] = 7 }))
        invalid("kdf-hkdf-for-password", .kdfMismatch, password.invalidFields(m(pw) { $0[6] = 2 }))
        invalid("kdf-argon2id-for-passkey", .kdfMismatch, passkey.invalidFields(m(pk) { $0[6] = 1 }))
        invalid("kdf-0", .kdfMismatch, password.invalidFields(m(pw) { $0[6] = 0 }))
        invalid("kdf-3", .kdfMismatch, passkey.invalidFields(m(pk) { $0[6] = 3 }))
        invalid("truncated-kdf-parameters", .malformedCipherText, password.invalidFields(Array(pw.prefix(12))))
        invalid(
            "opslimit-0", .invalidKdfParameters,
            password.invalidFields(m(pw) { $0.replaceSubrange(7..<11, with: be(0)) }))
        invalid(
            "opslimit-17", .invalidKdfParameters,
            password.invalidFields(m(pw) { $0.replaceSubrange(7..<11, with: be(17)) }))
        invalid(
            "memlimit-7-kib", .invalidKdfParameters,
            password.invalidFields(m(pw) { $0.replaceSubrange(11..<15, with: be(7)) }))
        invalid(
            "memlimit-1048577-kib", .invalidKdfParameters,
            password.invalidFields(m(pw) { $0.replaceSubrange(11..<15, with: be(1_048_577)) }))
        invalid(
            "opslimit-17-and-truncated", .invalidKdfParameters,
            password.invalidFields(Array(m(pw) { $0.replaceSubrange(7..<11, with: be(17)) }.prefix(40))))
        invalid(
            "truncated-keyid", .malformedCipherText,
            passkey.invalidFields(Array(pk.prefix(passkey.keyIdLengthOffset + 3))))
        invalid(
            "keyid-not-utf8", .malformedCipherText,
            passkey.invalidFields(m(pk) { $0[passkey.keyIdLengthOffset + 1] = 0xFF }))
        invalid(
            "truncated-nonce", .malformedCipherText, passkey.invalidFields(Array(pk.prefix(passkey.nonceOffset + 12))))
        invalid("ciphertext-empty", .malformedCipherText, passkey.invalidFields(Array(pk.prefix(passkey.bodyOffset))))
        invalid(
            "ciphertext-15-bytes", .malformedCipherText,
            passkey.invalidFields(Array(pk.prefix(passkey.bodyOffset + 15))))

        // Secrets.
        invalid(
            "wrong-password", .authenticationFailed,
            password.invalidFields(pw, secret: .text("Correct horse battery staple")))
        invalid(
            "wrong-recovery-code", .authenticationFailed,
            code.invalidFields(code.envelope.bytes, secret: .text(recoveryCode(random: random))))
        invalid(
            "wrong-key-material", .authenticationFailed,
            passkey.invalidFields(pk, secret: .keyMaterial(random.bytes(count: 32))))
        invalid(
            "key-material-31-bytes", .invalidKeyMaterial,
            passkey.invalidFields(pk, secret: .keyMaterial(random.bytes(count: 31))))
        invalid(
            "key-material-33-bytes", .invalidKeyMaterial,
            passkey.invalidFields(pk, secret: .keyMaterial(random.bytes(count: 33))))
        invalid("key-material-empty", .invalidKeyMaterial, passkey.invalidFields(pk, secret: .keyMaterial([])))
        invalid("empty-password", .emptySecret, password.invalidFields(pw, secret: .text("")))
        invalid("empty-recovery-code", .emptySecret, code.invalidFields(code.envelope.bytes, secret: .text("")))

        // Tampering: the header is AAD, so any changed byte fails authentication.
        invalid(
            "header-keyid-byte-changed", .authenticationFailed,
            passkey.invalidFields(m(pk) { $0[passkey.keyIdLengthOffset + 1] ^= 0x01 }))
        invalid("header-salt-byte-changed", .authenticationFailed, password.invalidFields(m(pw) { $0[20] ^= 0x80 }))
        invalid(
            "header-opslimit-changed", .authenticationFailed,
            password.invalidFields(m(pw) { $0.replaceSubrange(7..<11, with: be(2)) }))
        invalid("header-method-passkey-to-icloud", .authenticationFailed, passkey.invalidFields(m(pk) { $0[5] = 3 }))
        invalid(
            "nonce-byte-changed", .authenticationFailed,
            passkey.invalidFields(m(pk) { $0[passkey.nonceOffset] ^= 0x01 }))
        invalid(
            "body-byte-changed", .authenticationFailed,
            password.invalidFields(m(pw) { $0[password.bodyOffset] ^= 0x01 }))
        invalid("tag-byte-changed", .authenticationFailed, password.invalidFields(m(pw) { $0[$0.count - 1] ^= 0x01 }))
        invalid("body-byte-removed", .authenticationFailed, password.invalidFields(Array(pw.dropLast())))
        invalid(
            "ed25519-body-byte-changed", .authenticationFailed,
            edCloud.invalidFields(m(edCloud.envelope.bytes) { $0[edCloud.bodyOffset + 40] ^= 0x20 }))

        // Authentic envelopes around a plaintext that is not an acceptable user backup share.
        let signing = try ShareRecord(
            walletId: password.record.walletId, curve: password.record.curve, kind: .signing,
            threshold: password.record.threshold,
            parties: password.record.parties, partyIndex: password.record.partyIndex,
            generation: password.record.generation,
            setId: password.record.setId, secret: password.record.secret, commitments: password.record.commitments)
        let recordBytes = try VectorFixtures.binary(password.record)
        let s = VectorFixtures.secretOffset(password.record)
        invalid(
            "decrypted-record-is-signing-share", .invalidParameters,
            password.invalidFields(try sealing(try VectorFixtures.binary(signing), like: password)))
        invalid(
            "decrypted-record-bad-magic", .malformedRecord,
            password.invalidFields(try sealing(m(recordBytes) { $0[0] = UInt8(ascii: "X") }, like: password)))
        invalid(
            "decrypted-record-share-does-not-match-commitments", .invalidShare,
            password.invalidFields(
                try sealing(
                    m(recordBytes) {
                        $0.replaceSubrange(s..<s + 32, with: VectorFixtures.shiftedSecret(password.record))
                    }, like: password)))
        return cases
    }

    /// An authentic envelope with `sample`'s header and key around any plaintext.
    private static func sealing(_ plaintext: [UInt8], like sample: Sample) throws -> [UInt8] {
        let header = sample.envelope.header
        let sealed = try XChaCha20Poly1305.seal(
            SecureBytes(copying: plaintext), key: sample.key, nonce: sample.nonce, aad: header)
        return header + sealed
    }

    private static func be(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func insert(_ character: Character, into text: String, at offset: Int) -> String {
        var characters = Array(text)
        characters.insert(character, at: min(offset, characters.count))
        return String(characters)
    }

    /// The same text with a non-zero bit under the padding.
    private static func nonCanonical(_ text: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var characters = Array(text)
        let last = characters.lastIndex { $0 != "=" }!
        let value = alphabet.firstIndex(of: characters[last])!
        characters[last] = alphabet[value | 1]
        return String(characters)
    }
}

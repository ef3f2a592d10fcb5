import ShareCrypto
import TestSupport
import Testing

/// The malformed-input classes of `shared/vectors/README.md`, each rejected with its typed error.
@Suite("Malformed inputs")
struct MalformedInputTests {
    // MARK: Scalars

    /// The group orders of docs/formats.md §1, in each curve's scalar byte order.
    static func order(of curve: Curve) -> [UInt8] {
        switch curve {
        case .secp256k1:
            HexBytes.decode("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")!
        case .ed25519:
            // l = 2^252 + 27742317777372353535851937790883648493, little-endian.
            HexBytes.decode("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")!
        }
    }

    /// `bytes + 1` in the curve's byte order (no overflow for the values used here).
    static func plusOne(_ bytes: [UInt8], curve: Curve) -> [UInt8] {
        var out = bytes
        let indices = curve == .secp256k1 ? Array(out.indices.reversed()) : Array(out.indices)
        for i in indices {
            out[i] &+= 1
            if out[i] != 0 { break }
        }
        return out
    }

    @Test("the order itself, above it, and all-0xff are not canonical", arguments: Curve.allCases)
    func nonCanonicalScalars(curve: Curve) throws {
        let order = Self.order(of: curve)
        let oneBelow = Scalar(1, curve: curve).negated
        // Cross-check the constant against the field: (order − 1) + 1 is the order.
        #expect(Self.plusOne(oneBelow.rawRepresentation.revealedBytes(), curve: curve) == order)
        #expect(try Scalar(rawRepresentation: oneBelow.rawRepresentation.revealedBytes(), curve: curve) == oneBelow)

        let cases: [(String, [UInt8])] = [
            ("order", order),
            ("order + 1", Self.plusOne(order, curve: curve)),
            ("all 0xff", [UInt8](repeating: 0xFF, count: 32)),
        ]
        for (name, bytes) in cases {
            #expect(throws: ShareCryptoError(.invalidScalar, ""), "\(curve) scalar = \(name)") {
                try Scalar(rawRepresentation: bytes, curve: curve)
            }
            #expect(throws: ShareCryptoError(.invalidScalar, ""), "\(curve) secret scalar = \(name)") {
                try Scalar(secret: SecureBytes(copying: bytes), curve: curve)
            }
        }
        VectorFile.report("malformed \(curve) scalars", cases: cases.count)
    }

    @Test("scalars of the wrong length", arguments: Curve.allCases)
    func wrongLengthScalars(curve: Curve) {
        let lengths = [0, 1, 31, 33, 64]
        for length in lengths {
            let bytes = [UInt8](repeating: 0x01, count: length)
            #expect(throws: ShareCryptoError(.invalidLength, ""), "\(curve) scalar of \(length) bytes") {
                try Scalar(rawRepresentation: bytes, curve: curve)
            }
            #expect(throws: ShareCryptoError(.invalidLength, ""), "\(curve) secret of \(length) bytes") {
                try Scalar(secret: SecureBytes(copying: bytes), curve: curve)
            }
        }
        VectorFile.report("malformed \(curve) scalar lengths", cases: lengths.count)
    }

    @Test("zero is a scalar but not a secret share", arguments: Curve.allCases)
    func zeroSecret(curve: Curve) throws {
        let zero = [UInt8](repeating: 0, count: 32)
        #expect(try Scalar(rawRepresentation: zero, curve: curve).isZero)
        #expect(throws: ShareCryptoError(.invalidScalar, "")) {
            try Scalar(secret: SecureBytes(copying: zero), curve: curve)
        }
        #expect(throws: ShareCryptoError(.invalidScalar, "")) { try Point(generatorTimes: Scalar(0, curve: curve)) }
        #expect(throws: ShareCryptoError(.invalidScalar, "")) { try Scalar(0, curve: curve).inverted() }
    }

    // MARK: Points

    private static func expectInvalidPoint(_ bytes: [UInt8], curve: Curve, _ name: String) {
        #expect(throws: ShareCryptoError(.invalidPoint, ""), "\(curve) point: \(name)") {
            try Point(rawRepresentation: bytes, curve: curve)
        }
    }

    @Test("ed25519: identity, off-curve, small-order, mixed-order, non-canonical and wrong-length encodings")
    func ed25519Points() throws {
        let constants = try VectorFile.load(
            "libsodium-tests/ed25519_point_constants.extracted.json", as: Ed25519ConstantsFile.self)
        func constant(_ name: String) throws -> [UInt8] {
            try #require(constants.cases.first { $0.name == name }, "no constant \(name)").hex.bytes
        }
        let speccheck = try VectorFile.load("ed25519-speccheck/cases.json", as: [SpeccheckCase].self)
        let generator = Point.generator(on: .ed25519).rawRepresentation

        var identityHighBit = try constant("identity_y1")
        identityHighBit[31] |= 0x80  // x = −0: a non-canonical identity
        let cases: [(String, [UInt8])] = [
            ("identity (y = 1)", try constant("identity_y1")),
            ("identity with the sign bit set", identityHighBit),
            ("all zeros (y = 0, order 4)", try constant("zero_bytes")),
            ("off-curve (y = 2)", try constant("y2")),
            ("small order (speccheck vector 0)", speccheck[0].pub_key.bytes),
            ("mixed order (speccheck vector 3)", speccheck[3].pub_key.bytes),
            ("not in the main subgroup", try constant("not_main_subgroup_p")),
            ("non-canonical y = p + 9", try constant("non_canonical_p")),
            ("non-canonical y ≥ p, off-curve", try constant("non_canonical_invalid_p")),
            ("non-canonical small order (speccheck vector 10)", speccheck[10].pub_key.bytes),
            ("y = p", try constant("P")),
            ("31 bytes", Array(generator.dropLast())),
            ("33 bytes", generator + [0]),
            ("33-byte secp256k1 generator", Point.generator(on: .secp256k1).rawRepresentation),
            ("empty", []),
        ]
        for (name, bytes) in cases { Self.expectInvalidPoint(bytes, curve: .ed25519, name) }
        VectorFile.report("malformed ed25519 points", cases: cases.count)
    }

    @Test("secp256k1: identity, off-curve, uncompressed, hybrid and wrong-length encodings")
    func secp256k1Points() throws {
        let file = try VectorFile.load("wycheproof/derived/secp256k1_sec1_points.json", as: Sec1PointsFile.self)
        let uncompressed = try #require(
            file.cases.first {
                $0.sec1_point.count == 65 && $0.sec1_point.bytes[0] == 0x04 && $0.coincurve_accepts_point
            }
        ).sec1_point.bytes
        let offCurveCompressed = try #require(
            file.cases.first {
                $0.sec1_point.count == 33 && !$0.coincurve_accepts_point && $0.flags.contains("InvalidCompressedPublic")
            }
        ).sec1_point.bytes
        var hybrid = uncompressed
        hybrid[0] = 0x06 | (uncompressed[64] & 1)
        var wrongHybrid = uncompressed
        wrongHybrid[0] = 0x06 | (~uncompressed[64] & 1)
        let generator = Point.generator(on: .secp256k1).rawRepresentation
        var zeroPrefixed = generator
        zeroPrefixed[0] = 0x00
        var uncompressedPrefix = generator
        uncompressedPrefix[0] = 0x04

        let cases: [(String, [UInt8])] = [
            ("SEC1 infinity (one 0x00 byte)", [0x00]),
            ("33 zero bytes (identity-like)", [UInt8](repeating: 0, count: 33)),
            ("0x00 prefix on a valid x", zeroPrefixed),
            ("0x02 with x = 0 (no such point)", [0x02] + [UInt8](repeating: 0, count: 32)),
            ("0x03 with x = 0 (no such point)", [0x03] + [UInt8](repeating: 0, count: 32)),
            ("Wycheproof invalid compressed point", offCurveCompressed),
            (
                "0x02 with x = p (not a field element)",
                [0x02] + HexBytes.decode("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f")!
            ),
            ("0x04 prefix on 33 bytes", uncompressedPrefix),
            ("valid uncompressed (0x04)", uncompressed),
            ("hybrid with the right parity", hybrid),
            ("hybrid with the wrong parity", wrongHybrid),
            ("0x05 prefix", [0x05] + Array(generator.dropFirst())),
            ("32 bytes", Array(generator.dropLast())),
            ("34 bytes", generator + [0]),
            ("32-byte ed25519 generator", Point.generator(on: .ed25519).rawRepresentation),
            ("empty", []),
        ]
        for (name, bytes) in cases { Self.expectInvalidPoint(bytes, curve: .secp256k1, name) }
        VectorFile.report("malformed secp256k1 points", cases: cases.count)
    }

    @Test("an operation whose result would be the identity is refused", arguments: Curve.allCases)
    func identityResults(curve: Curve) throws {
        let g = Point.generator(on: curve)
        let minusG = try g.multiplied(by: Scalar(1, curve: curve).negated)
        #expect(throws: ShareCryptoError(.invalidPoint, "")) { try g + minusG }
        #expect(throws: ShareCryptoError(.invalidPoint, "")) { try Point.sum([]) }
        #expect(throws: ShareCryptoError(.invalidScalar, "")) { try g.multiplied(by: Scalar(0, curve: curve)) }
    }

    // MARK: Symmetric and sealing

    @Test("XChaCha20-Poly1305 ciphertexts shorter than the tag, and wrong key sizes")
    func shortCiphertexts() throws {
        let key = SecureBytes(copying: [UInt8](repeating: 0x42, count: 32))
        let nonce = [UInt8](repeating: 0x24, count: 24)
        var count = 0
        for length in 0..<XChaCha20Poly1305.tagCount {
            count += 1
            #expect(throws: ShareCryptoError(.invalidLength, ""), "\(length)-byte ciphertext") {
                try XChaCha20Poly1305.open([UInt8](repeating: 0, count: length), key: key, nonce: nonce, aad: [UInt8]())
            }
        }
        // A bare tag of zeros is long enough to be checked, and fails authentication.
        count += 1
        #expect(throws: ShareCryptoError(.authenticationFailed, "")) {
            try XChaCha20Poly1305.open([UInt8](repeating: 0, count: 16), key: key, nonce: nonce, aad: [UInt8]())
        }
        for keyLength in [0, 16, 31, 33] {
            count += 1
            let badKey = SecureBytes(copying: [UInt8](repeating: 0x42, count: keyLength))
            #expect(throws: ShareCryptoError(.invalidLength, ""), "\(keyLength)-byte key") {
                try XChaCha20Poly1305.seal(SecureBytes(zeros: 1), key: badKey, nonce: nonce, aad: [UInt8]())
            }
            #expect(throws: ShareCryptoError(.invalidLength, ""), "\(keyLength)-byte key") {
                try XChaCha20Poly1305.open([UInt8](repeating: 0, count: 17), key: badKey, nonce: nonce, aad: [UInt8]())
            }
        }
        VectorFile.report("malformed XChaCha20-Poly1305 inputs", cases: count)
    }

    @Test("sealed boxes: truncated, tampered or for another key")
    func sealedBoxes() throws {
        let random = DeterministicRandom(seed: Array("malformed sealed boxes".utf8))
        let recipient = SealingKeyPair(using: random)
        let other = SealingKeyPair(using: random)
        let message = SecureBytes(copying: Array("a share record".utf8))
        let sealed = try SealedBox.seal(message, to: recipient.publicKey, using: random)
        #expect(try SealedBox.open(sealed, with: recipient) == message)

        var count = 0
        for length in 0..<sealed.count {
            count += 1
            #expect(throws: ShareCryptoError(.unsealFailed, ""), "truncated to \(length) bytes") {
                try SealedBox.open(Array(sealed.prefix(length)), with: recipient)
            }
        }
        for position in sealed.indices {
            count += 1
            var tampered = sealed
            tampered[position] ^= 0x80
            #expect(throws: ShareCryptoError(.unsealFailed, ""), "byte \(position) flipped") {
                try SealedBox.open(tampered, with: recipient)
            }
        }
        count += 2
        #expect(throws: ShareCryptoError(.unsealFailed, "")) { try SealedBox.open(sealed + [0], with: recipient) }
        #expect(throws: ShareCryptoError(.unsealFailed, "")) { try SealedBox.open(sealed, with: other) }
        VectorFile.report("malformed sealed boxes", cases: count)
    }

    @Test("X25519 keys of the wrong size", arguments: [0, 31, 33])
    func wrongSizeX25519Keys(length: Int) {
        let good = [UInt8](repeating: 9, count: 32)
        let bad = [UInt8](repeating: 9, count: length)
        #expect(throws: ShareCryptoError(.invalidKey, "")) {
            try X25519.sharedSecret(secretKey: SecureBytes(copying: bad), publicKey: good)
        }
        #expect(throws: ShareCryptoError(.invalidKey, "")) {
            try X25519.sharedSecret(secretKey: SecureBytes(copying: good), publicKey: bad)
        }
        #expect(throws: ShareCryptoError(.invalidKey, "")) { try SealingKeyPair(secretKey: SecureBytes(copying: bad)) }
        #expect(throws: ShareCryptoError(.invalidKey, "")) { try SealedBox.seal(SecureBytes(zeros: 1), to: bad) }
    }
}

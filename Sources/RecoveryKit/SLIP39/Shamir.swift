import ShareCrypto

/// One point of a byte-wise Shamir polynomial: the index `x` and the values `fₖ(x)` for every byte k.
struct ShamirPoint: Sendable {
    /// The public index.
    let x: UInt8
    /// One polynomial value per byte of the shared secret.
    let y: SecureBytes
}

/// Byte-wise Shamir secret sharing over GF(256) with the digest at index 254 and the secret at 255
/// (SLIP-0039 §Sharing a secret).
enum Shamir {
    /// Index of the digest share.
    static let digestIndex: UInt8 = 254
    /// Index of the shared secret.
    static let secretIndex: UInt8 = 255
    /// Bytes of HMAC-SHA256 kept as the digest.
    static let digestCount = 4
    /// Most shares one split may produce (4-bit indices).
    static let maximumShareCount = 16

    /// SplitSecret(T, N, S): `count` points at indices 0..<count, any `threshold` of which recover `secret`.
    ///
    /// The caller has validated 1 ≤ threshold ≤ count ≤ 16 and a secret of at least 16 bytes.
    static func split(
        threshold: Int, count: Int, secret: SecureBytes, using random: some RandomSource
    ) -> [ShamirPoint] {
        precondition(threshold >= 1 && threshold <= count && count <= maximumShareCount, "invalid split parameters")
        precondition(secret.count > digestCount, "secret too short to carry a digest")
        if threshold == 1 {
            return (0..<count).map { ShamirPoint(x: UInt8($0), y: secret) }
        }
        let randomPart = random.secureBytes(count: secret.count - digestCount)
        let digestShare = SecureBytes.concatenating([digest(of: secret, randomPart: randomPart), randomPart])

        let randomPoints = (0..<threshold - 2).map {
            ShamirPoint(x: UInt8($0), y: random.secureBytes(count: secret.count))
        }
        let basePoints =
            randomPoints + [
                ShamirPoint(x: digestIndex, y: digestShare),
                ShamirPoint(x: secretIndex, y: secret),
            ]
        let derivedPoints = (threshold - 2..<count).map {
            ShamirPoint(x: UInt8($0), y: interpolate(basePoints, at: UInt8($0)))
        }
        return randomPoints + derivedPoints
    }

    /// RecoverSecret(T, points): the secret at index 255, checked against the digest at index 254.
    ///
    /// The caller has checked that there are exactly `threshold` points with distinct indices and
    /// values of one length.
    /// - Throws: ``RecoveryKitError/Code/invalidDigest`` when the digest does not match.
    static func recover(threshold: Int, points: [ShamirPoint], level: String) throws -> SecureBytes {
        precondition(!points.isEmpty, "no points to recover from")
        if threshold == 1 { return points[0].y }
        let secret = interpolate(points, at: secretIndex)
        let digestShare = interpolate(points, at: digestIndex)
        let randomPart = try digestShare.slice(digestCount..<digestShare.count)
        let expected = try digestShare.slice(0..<digestCount)
        let matches = expected.withUnsafeBytes { stored in
            digest(of: secret, randomPart: randomPart).withUnsafeBytes { computed in
                constantTimeEquals(stored, computed)
            }
        }
        guard matches else {
            throw RecoveryKitError(.invalidDigest, "the \(level) recovered from these shares fails its digest check")
        }
        return secret
    }

    /// The first 4 bytes of HMAC-SHA256(key: R, message: S).
    private static func digest(of secret: SecureBytes, randomPart: SecureBytes) -> SecureBytes {
        let tag = secret.withUnsafeBytes { HMACSHA256.authenticate($0, key: randomPart) }
        // The range is within the 32-byte tag, so slicing cannot fail.
        return try! tag.slice(0..<digestCount)
    }

    /// Lagrange interpolation of every byte position at `x` (SLIP-0039 §Polynomial interpolation).
    ///
    /// Indices are public, so the basis coefficients use the tables; the secret values meet them only
    /// in ``GF256/multiply(_:_:)``.
    static func interpolate(_ points: [ShamirPoint], at x: UInt8) -> SecureBytes {
        precondition(Set(points.map(\.x)).count == points.count, "interpolation needs distinct indices")
        let length = points[0].y.count
        precondition(points.allSatisfy { $0.y.count == length }, "interpolation needs values of one length")

        return SecureBytes(count: length) { out in
            out.initializeMemory(as: UInt8.self, repeating: 0)
            for point in points {
                var coefficient: UInt8 = 1
                for other in points where other.x != point.x {
                    let ratio = GF256.multiply(x ^ other.x, GF256.inverse(ofPublic: point.x ^ other.x))
                    coefficient = GF256.multiply(coefficient, ratio)
                }
                point.y.withUnsafeBytes { values in
                    for k in 0..<length {
                        out[k] ^= GF256.multiply(values[k], coefficient)
                    }
                }
            }
        }
    }
}

import ShareCrypto

/// Reads a role state's bytes front to back: public parts as plain bytes, secret parts only as
/// slices of the wiped buffer. The parts several states share (a plan, a dealing) are written by
/// the static functions and read by the methods of the same name, so each has one byte form.
struct StateReader {
    let bytes: SecureBytes
    /// The state's name in errors ("resharing", "device enrolment").
    let name: String
    var offset = 0

    init(_ bytes: SecureBytes, name: String) {
        self.bytes = bytes
        self.name = name
    }

    mutating func secret(_ count: Int) throws(ShareRecoveryError) -> SecureBytes {
        guard offset + count <= bytes.count else {
            throw ShareRecoveryError(.malformedRecord, "the \(name) state is truncated")
        }
        defer { offset += count }
        return try mappingCryptoErrors { try bytes.slice(offset..<offset + count) }
    }

    mutating func read(_ count: Int) throws(ShareRecoveryError) -> [UInt8] { try secret(count).revealedBytes() }

    mutating func byte() throws(ShareRecoveryError) -> UInt8 { try read(1)[0] }

    mutating func uint16() throws(ShareRecoveryError) -> Int {
        let pair = try read(2)
        return Int(pair[0]) << 8 | Int(pair[1])
    }

    func checkAtEnd() throws(ShareRecoveryError) {
        guard offset == bytes.count else {
            throw ShareRecoveryError(.malformedRecord, "the \(name) state has trailing bytes")
        }
    }

    /// A plan: its length (2 bytes, big-endian) and its `SessionWire` JSON as `JSONWriter` writes it.
    static func planBytes(_ plan: ResharingPlan) -> [UInt8] {
        let json = Array(JSONWriter.write(SessionWire.encode(plan)).utf8)
        return [UInt8(json.count >> 8), UInt8(json.count & 0xFF)] + json
    }

    /// Reads a plan from ``planBytes(_:)``; any other spelling of its JSON is refused, so a state
    /// has one byte form.
    mutating func plan() throws(ShareRecoveryError) -> ResharingPlan {
        let json = try read(try uint16())
        let plan: ResharingPlan
        do {
            plan = try SessionWire.decodePlan(try StrictJSON.parse(json))
        } catch let error as ShareRecoveryError {
            throw error
        } catch {
            throw ShareRecoveryError(.malformedRecord, "the \(name) state's plan is not JSON")
        }
        guard Array(JSONWriter.write(SessionWire.encode(plan)).utf8) == json else {
            throw ShareRecoveryError(.malformedRecord, "the \(name) state's plan is not in its written form")
        }
        return plan
    }

    /// A dealing: its dealer index (1 byte), its t' commitments and the sub-share (32) of each of
    /// `parties` in the order given (secret: the buffer is wiped).
    static func dealingBytes(_ dealing: Dealing, subSharesOf parties: [Int]) -> SecureBytes {
        SecureBytes.concatenating(
            [SecureBytes(copying: [UInt8(dealing.dealerIndex)] + dealing.commitments.flatMap(\.rawRepresentation))]
                // The state's `init` guarantees a sub-share for each of `parties`.
                + parties.map { dealing.subShares[$0]!.rawRepresentation })
    }

    /// Reads a dealing from ``dealingBytes(_:subSharesOf:)``.
    mutating func dealing(plan: ResharingPlan, subSharesOf parties: [Int]) throws(ShareRecoveryError) -> Dealing {
        let curve = plan.oldSet.curve
        let dealerIndex = Int(try byte())
        var commitments: [Point] = []
        for _ in 0..<plan.newThreshold {
            let encoded = try read(curve.pointCount)
            commitments.append(try mappingCryptoErrors { try Point(rawRepresentation: encoded, curve: curve) })
        }
        var subShares: [Int: Scalar] = [:]
        for party in parties {
            let secret = try secret(Curve.scalarCount)
            subShares[party] = try mappingCryptoErrors { try Scalar(secure: secret, curve: curve) }
        }
        return Dealing(dealerIndex: dealerIndex, commitments: commitments, subShares: subShares)
    }
}

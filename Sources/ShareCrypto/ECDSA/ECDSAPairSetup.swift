/// What two parties keep after their pair setup (docs/formats.md §12), seen from one of them: the
/// base OTs of both directions and the seed of their pairwise zero-shares.
///
/// The setup is single-owner state. A failed check of a signing session with the peer discards it
/// (``isDiscarded``): its secrets are dropped and every later use throws `ecdsaCheckFailed`, since
/// OT correlations used again after an abort leak the correlation one bit at a time. Its byte form
/// must then be deleted from storage too; a fresh setup replaces it.
package final class ECDSAPairSetup: Sendable {
    struct Material {
        /// Δ, this party's correlation as OT-extension sender (32 bytes), and its 256 keys `k_{l,Δ_l}`.
        let delta: SecureBytes
        let senderKeys: [SecureBytes]
        /// This party's keys as OT-extension receiver: both keys of each of the 256 base OTs.
        let receiverKeys0: [SecureBytes]
        let receiverKeys1: [SecureBytes]
        /// The pair's zero-share seed (32 bytes), the same on both sides.
        let zeroSeed: SecureBytes
    }

    /// This party.
    package let own: ECDSAPartyBinding
    /// The other party.
    package let peer: ECDSAPartyBinding
    private let material: Locked<Material?>

    init(own: ECDSAPartyBinding, peer: ECDSAPartyBinding, material: Material) {
        self.own = own
        self.peer = peer
        self.material = Locked(material)
    }

    /// Whether an abort has discarded this setup.
    package var isDiscarded: Bool { material.withLock { $0 == nil } }

    /// Drops the secrets: no session can use this setup again.
    package func discard() { material.withLock { $0 = nil } }

    /// The secrets, for a session with `peer` under the parties' current shares.
    func use(own current: ECDSAPartyBinding, peer currentPeer: ECDSAPartyBinding) throws -> Material {
        guard current.index == own.index, currentPeer.index == peer.index else {
            throw ShareCryptoError(.invalidParameters, "this pair setup is for parties \(own.index) and \(peer.index)")
        }
        guard current == own, currentPeer == peer else {
            throw ShareCryptoError(
                .pairSetupStale,
                "the pair setup was made for \(own) and \(peer); the shares now are \(current) and \(currentPeer). Make a fresh pair setup."
            )
        }
        guard let material = material.withLock({ $0 }) else {
            throw ShareCryptoError(
                .ecdsaCheckFailed,
                "this pair setup was discarded after an aborted signature; make a fresh pair setup with party \(peer.index)",
                party: peer.index)
        }
        return material
    }

    private static let version: UInt8 = 1
    private static let keysCount = BaseOT.count * 32

    /// The versioned byte form, to be sealed at rest like a share: `version (1) = 1 || own binding (21)
    /// || peer binding (21) || zero seed (32) || Δ (32) || sender keys (256 × 32) || receiver keys for
    /// bit 0 (256 × 32) || for bit 1 (256 × 32)`.
    /// - Throws: `ecdsaCheckFailed` when the setup was discarded.
    package func rawRepresentation() throws -> SecureBytes {
        guard let material = material.withLock({ $0 }) else {
            throw ShareCryptoError(.ecdsaCheckFailed, "a discarded pair setup has no byte form", party: peer.index)
        }
        return SecureBytes.concatenating(
            [SecureBytes(copying: [Self.version] + own.bytes + peer.bytes), material.zeroSeed, material.delta]
                + material.senderKeys + material.receiverKeys0 + material.receiverKeys1)
    }

    /// Reads the byte form.
    /// - Throws: `unsupportedVersion`-style `invalidEncoding` for another version or layout.
    package convenience init(rawRepresentation: SecureBytes) throws {
        let expected = 1 + 2 * ECDSAPartyBinding.byteCount + 64 + 3 * Self.keysCount
        guard rawRepresentation.count == expected else {
            throw ShareCryptoError(
                .invalidEncoding, "an ECDSA pair setup is \(expected) bytes, got \(rawRepresentation.count)")
        }
        let header = try rawRepresentation.slice(0..<(1 + 2 * ECDSAPartyBinding.byteCount)).revealedBytes()
        var wire = ECDSAWire(header, what: "ECDSA pair setup")
        guard try wire.byte() == Self.version else {
            throw ShareCryptoError(.invalidEncoding, "this ECDSA pair setup has an unknown version")
        }
        let own = try ECDSAPartyBinding(reading: &wire)
        let peer = try ECDSAPartyBinding(reading: &wire)
        var offset = header.count
        func next(_ count: Int) throws -> SecureBytes {
            defer { offset += count }
            return try rawRepresentation.slice(offset..<offset + count)
        }
        let zeroSeed = try next(32)
        let delta = try next(32)
        let sender = try (0..<BaseOT.count).map { _ in try next(32) }
        let receiver0 = try (0..<BaseOT.count).map { _ in try next(32) }
        let receiver1 = try (0..<BaseOT.count).map { _ in try next(32) }
        self.init(
            own: own, peer: peer,
            material: Material(
                delta: delta, senderKeys: sender, receiverKeys0: receiver0, receiverKeys1: receiver1, zeroSeed: zeroSeed
            ))
    }
}

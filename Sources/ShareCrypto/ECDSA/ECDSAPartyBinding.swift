/// Who a pair setup was made for: a party index of a share set, and that set's identifier and
/// generation (docs/formats.md §12: a setup is bound to both parties' share sets).
package struct ECDSAPartyBinding: Sendable, Hashable, CustomStringConvertible {
    /// The party index, 1…255.
    package let index: Int
    /// The share set's 16-byte identifier.
    package let setId: [UInt8]
    /// The share set's generation.
    package let generation: UInt32

    package init(index: Int, setId: [UInt8], generation: UInt32) throws {
        guard (1...255).contains(index), setId.count == 16 else {
            throw ShareCryptoError(.invalidParameters, "a party binding needs an index 1…255 and a 16-byte setId")
        }
        self.index = index
        self.setId = setId
        self.generation = generation
    }

    static let byteCount = 1 + 16 + 4

    /// `index (1) || setId (16) || generation (4, big-endian)`.
    var bytes: [UInt8] { [UInt8(index)] + setId + ECDSAWire.uint32(Int(generation)) }

    init(reading wire: inout ECDSAWire) throws {
        let index = Int(try wire.byte())
        let setId = try wire.take(16)
        let generation = UInt32(try wire.uint32())
        try self.init(index: index, setId: setId, generation: generation)
    }

    package var description: String { "party \(index) of set \(Hex.encode(setId)) generation \(generation)" }

    /// The context of the OT direction in which `receiver` is the OT-extension receiver.
    static func directionContext(receiver: ECDSAPartyBinding, sender: ECDSAPartyBinding) -> [UInt8] {
        ECDSAHash.digest("pair/direction", [.bytes(receiver.bytes), .bytes(sender.bytes)])
    }
}

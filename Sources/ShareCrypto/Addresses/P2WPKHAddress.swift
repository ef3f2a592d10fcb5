/// Bitcoin pay-to-witness-public-key-hash addresses (BIP-141, BIP-173; docs/formats.md §12).
public enum P2WPKHAddress {
    /// The Bitcoin network an address is for.
    public enum Network: Sendable {
        /// Mainnet, human-readable part `bc`.
        case mainnet
        /// Testnet, human-readable part `tb`.
        case testnet

        var humanReadablePart: String {
            switch self {
            case .mainnet: "bc"
            case .testnet: "tb"
            }
        }
    }

    /// The bech32 address of witness version 0 over HASH160 of the compressed key.
    /// - Parameters:
    ///   - publicKey: A secp256k1 point.
    ///   - network: Mainnet (`bc1q…`) or testnet (`tb1q…`).
    /// - Returns: The address text, lowercase.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for an ed25519 point;
    ///   ``ShareCryptoError/Code/backendFailure`` when libcrypto has no RIPEMD-160.
    public static func address(of publicKey: Point, network: Network = .mainnet) throws -> String {
        guard publicKey.curve == .secp256k1 else {
            throw ShareCryptoError(.invalidParameters, "P2WPKH addresses are for secp256k1 keys")
        }
        let program = try Hash160.hash(publicKey.rawRepresentation)
        return Bech32.encode(humanReadablePart: network.humanReadablePart, values: [0] + Bech32.fiveBitGroups(program))
    }
}

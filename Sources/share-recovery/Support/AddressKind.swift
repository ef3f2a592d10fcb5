import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `derive --address`: the address forms of a secp256k1 key that ECDSA signatures pay from
/// (docs/formats.md §12).
enum AddressKind: String, CaseIterable, ExpressibleByArgument {
    /// Ethereum: `0x` + 40 hex digits, EIP-55 checksummed.
    case eth
    /// Bitcoin P2WPKH: bech32, witness version 0.
    case p2wpkh

    /// The network of `--network` for `--address`, checked against the wallet; every mismatch is a
    /// usage error (exit 2), like `eject --network` on ed25519.
    static func checkedNetwork(_ network: String?, address: AddressKind?, curve: Curve, taproot: Bool) throws
        -> P2WPKHAddress.Network
    {
        guard let address else {
            if let network {
                throw CLIError.usage("--network \(network) is for --address p2wpkh; give both or neither")
            }
            return .mainnet
        }
        guard curve == .secp256k1 else {
            throw CLIError.usage(
                "--address \(address.rawValue) is for secp256k1 wallets; an ed25519 wallet has no Ethereum or Bitcoin address: leave --address out"
            )
        }
        guard !taproot else {
            throw CLIError.usage(
                "--address \(address.rawValue) is the address of the key at --path; a Taproot output key pays to P2TR, whose scriptPubKey --taproot prints: leave out one of them"
            )
        }
        switch (address, network) {
        case (.eth, let network?):
            throw CLIError.usage(
                "--network \(network) is for --address p2wpkh (bc or tb); an Ethereum address is the same on every chain: leave --network out"
            )
        case (_, nil), (_, "mainnet"): return .mainnet
        case (_, "testnet"): return .testnet
        case (_, let network?): throw CLIError.usage("--network must be mainnet or testnet, not \(network)")
        }
    }

    /// The address text of a secp256k1 key.
    func address(of key: Point, network: P2WPKHAddress.Network) throws -> String {
        try mappingCryptoErrors {
            switch self {
            case .eth: try EthereumAddress.checksummed(key)
            case .p2wpkh: try P2WPKHAddress.address(of: key, network: network)
            }
        }
    }
}

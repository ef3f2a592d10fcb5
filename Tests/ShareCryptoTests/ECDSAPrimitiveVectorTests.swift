import ShareCrypto
import Testing

/// Published examples for the ECDSA tooling primitives: Keccak-256 (the Keccak team's and FIPS 202's
/// known answers), EIP-55's own examples, BIP-173's P2WPKH examples and EIP-155's signed transaction.
@Suite("ECDSA primitives: Keccak-256, addresses, signature encodings")
struct ECDSAPrimitiveVectorTests {
    private static func hex(_ text: String) -> [UInt8] { Hex.decode(text)! }

    @Test(
        "Keccak-256 known answers (Ethereum's empty-input hash, \"abc\")",
        arguments: [
            ("", "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
            ("abc", "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"),
        ])
    func keccak(message: String, digest: String) {
        #expect(Keccak256.hash(Array(message.utf8)) == Self.hex(digest))
    }

    @Test("the sponge over two blocks: NIST's SHA3-256 example of 200 bytes 0xA3 through the same permutation")
    func twoBlocks() {
        let digest = Keccak256.sha3_256([UInt8](repeating: 0xA3, count: 200))
        #expect(digest == Self.hex("79f38adec5c20307a98ef76e8324afbfd46cfd81b22e3973c65fa1bd9de31787"))
        #expect(
            Keccak256.sha3_256([UInt8]())
                == Self.hex("a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"))
    }

    @Test(
        "EIP-55's checksum examples",
        arguments: [
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
            "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
        ])
    func eip55(address: String) {
        let bytes = Self.hex(String(address.dropFirst(2)).lowercased())
        #expect(EthereumAddress.checksummed(address: bytes) == address)
    }

    @Test("the address of secret key 1, and BIP-173's P2WPKH examples for the generator")
    func addressesOfGenerator() throws {
        let generator = Point.generator(on: .secp256k1)
        #expect(try EthereumAddress.checksummed(generator) == "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf")
        #expect(try P2WPKHAddress.address(of: generator) == "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4")
        #expect(
            try P2WPKHAddress.address(of: generator, network: .testnet) == "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx")
        #expect(throws: ShareCryptoError(.invalidParameters, "")) {
            try EthereumAddress.checksummed(Point.generator(on: .ed25519))
        }
    }

    // EIP-155's example: secret key 0x46…46 signs a transfer on chain 1 with v = 37 (recovery id 0).
    private static let eip155Key = [UInt8](repeating: 0x46, count: 32)
    private static let eip155SigningData = hex(
        "ec098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a764000080018080")
    private static let eip155Digest = hex("daf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53")
    private static let eip155R = hex("28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276")
    private static let eip155S = hex("67cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83")

    @Test("EIP-155's signed transfer verifies, recovers its sender and hashes to its signing digest")
    func eip155() throws {
        #expect(Keccak256.hash(Self.eip155SigningData) == Self.eip155Digest)
        let key = try Point(generatorTimes: Scalar(rawRepresentation: Self.eip155Key, curve: .secp256k1))
        #expect(try EthereumAddress.checksummed(key) == "0x9d8A62f656a8d1615C1294fd71e9CFb3E4855A4F")
        let signature = try ECDSASignature(r: Self.eip155R, s: Self.eip155S, recoveryId: 0)
        #expect(signature.isValid(digest: Self.eip155Digest, publicKey: key))
        #expect(try signature.recoverPublicKey(digest: Self.eip155Digest) == key)
        let other = try ECDSASignature(r: Self.eip155R, s: Self.eip155S, recoveryId: 1)
        #expect(try other.recoverPublicKey(digest: Self.eip155Digest) != key)
        var tampered = Self.eip155Digest
        tampered[31] ^= 1
        #expect(!signature.isValid(digest: tampered, publicKey: key))
        #expect(!signature.isValid(digest: Self.eip155Digest, publicKey: Point.generator(on: .secp256k1)))
    }

    @Test("a high s becomes n − s with the recovery id flipped, and still recovers the same key")
    func lowS() throws {
        let n = Self.hex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")
        var high = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(n[index]) - Int(Self.eip155S[index]) - borrow
            high[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        let normalised = try ECDSASignature(r: Self.eip155R, s: high, recoveryId: 1)
        #expect(normalised.s == Self.eip155S)
        #expect(normalised.recoveryId == 0)
        #expect(normalised == (try ECDSASignature(r: Self.eip155R, s: Self.eip155S, recoveryId: 0)))
    }

    @Test("compact, r‖s‖v and DER forms round-trip; non-strict DER and out-of-range values are refused")
    func encodings() throws {
        let signature = try ECDSASignature(r: Self.eip155R, s: Self.eip155S, recoveryId: 0)
        #expect(signature.compact == Self.eip155R + Self.eip155S)
        #expect(try ECDSASignature(compact: signature.compact, recoveryId: 0) == signature)
        #expect(try ECDSASignature(recoverable: signature.recoverable) == signature)
        // Both integers have their top bit clear, so DER writes them as 32 bytes each.
        let der = signature.der
        #expect(der == [0x30, 0x44, 0x02, 0x20] + Self.eip155R + [0x02, 0x20] + Self.eip155S)
        #expect(try ECDSASignature(der: der, recoveryId: 0) == signature)
        let padded = [0x30, 0x45, 0x02, 0x21, 0x00] + Self.eip155R + [0x02, 0x20] + Self.eip155S
        #expect(throws: ShareCryptoError(.invalidEncoding, "")) { try ECDSASignature(der: padded, recoveryId: 0) }
        #expect(throws: ShareCryptoError(.invalidEncoding, "")) { try ECDSASignature(der: der + [0], recoveryId: 0) }
        #expect(throws: ShareCryptoError(.invalidScalar, "")) {
            try ECDSASignature(r: [UInt8](repeating: 0, count: 32), s: Self.eip155S, recoveryId: 0)
        }
        #expect(throws: ShareCryptoError(.invalidScalar, "")) {
            try ECDSASignature(r: [UInt8](repeating: 0xFF, count: 32), s: Self.eip155S, recoveryId: 0)
        }
        #expect(throws: ShareCryptoError(.invalidParameters, "")) {
            try ECDSASignature(r: Self.eip155R, s: Self.eip155S, recoveryId: 2)
        }
        #expect(throws: ShareCryptoError(.invalidLength, "")) { try ECDSASignature(compact: der, recoveryId: 0) }
    }
}

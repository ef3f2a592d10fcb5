import Foundation
import ShareCrypto
import TestSupport
import Testing

/// This target's external vectors under `Vectors/<source>/` (TestSupport reads them).
enum VectorFile: BundledVectors {
    static var bundle: Bundle { .module }
}

/// One entry of python-shamir-mnemonic's `vectors.json`: `[description, mnemonics, master secret hex, xprv]`.
/// An empty master secret means combining must fail.
struct SLIP39Vector: Decodable, Sendable, CustomTestStringConvertible {
    let description: String
    let mnemonics: [String]
    let masterSecretHex: String
    let extendedPrivateKey: String

    init(from decoder: any Decoder) throws {
        var fields = try decoder.unkeyedContainer()
        description = try fields.decode(String.self)
        mnemonics = try fields.decode([String].self)
        masterSecretHex = try fields.decode(String.self)
        extendedPrivateKey = try fields.decode(String.self)
    }

    var isValid: Bool { !masterSecretHex.isEmpty }
    var testDescription: String { description }

    /// All 45 official vectors.
    static func all() throws -> [SLIP39Vector] {
        try VectorFile.load("slip39/vectors.json", as: [SLIP39Vector].self)
    }
}

extension SecureBytes {
    /// UTF-8 bytes of a test string (passphrases, mnemonics) as a secret buffer.
    init(utf8 text: String) { self.init(copying: Array(text.utf8)) }
}

/// Every way to pick `size` elements of `items`, order kept.
func combinations<T>(of items: [T], size: Int) -> [[T]] {
    guard size > 0 else { return [[]] }
    guard items.count >= size else { return [] }
    let head = items[0]
    let tail = Array(items.dropFirst())
    return combinations(of: tail, size: size - 1).map { [head] + $0 } + combinations(of: tail, size: size)
}

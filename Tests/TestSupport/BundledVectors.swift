public import Foundation

/// External vectors copied unmodified from `shared/vectors` into a test target's `Vectors/<source>/`
/// resource folder. A test target conforms one type with its own bundle
/// (`enum VectorFile: BundledVectors { static var bundle: Bundle { .module } }`) and reads through it.
public protocol BundledVectors {
    /// The test target's resource bundle (its `Bundle.module`).
    static var bundle: Bundle { get }
}

/// A vector file that is not where it should be.
public struct MissingVectors: Error, CustomStringConvertible {
    public let description: String
}

extension BundledVectors {
    /// Decodes one JSON vector file.
    /// - Parameters:
    ///   - relativePath: The path below `Vectors/`, e.g. `wycheproof/testvectors_v1/x25519_test.json`.
    ///   - type: The file's own `Decodable` shape.
    /// - Returns: The decoded file.
    public static func load<T: Decodable>(_ relativePath: String, as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: url(relativePath)))
    }

    /// A non-JSON companion file of a source (e.g. a README table the vectors refer to), as UTF-8 text.
    /// - Parameter relativePath: The path below `Vectors/`.
    public static func text(_ relativePath: String) throws -> String {
        try String(decoding: Data(contentsOf: url(relativePath)), as: UTF8.self)
    }

    private static func url(_ relativePath: String) throws -> URL {
        guard let root = bundle.url(forResource: "Vectors", withExtension: nil) else {
            throw MissingVectors(description: "the Vectors resource folder is missing from \(bundle.bundlePath)")
        }
        return root.appendingPathComponent(relativePath)
    }
}

import Foundation
import TestSupport
import Testing

/// The one loader for this target's external vectors under `Vectors/<source>/` (TestSupport reads them).
enum VectorFile: BundledVectors {
    static var bundle: Bundle { .module }

    /// Prints how many cases a test ran and fails the test when it ran none.
    static func report(_ label: String, cases: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        print("\(label): \(cases) cases")
        #expect(cases > 0, "\(label) ran no cases", sourceLocation: sourceLocation)
    }
}

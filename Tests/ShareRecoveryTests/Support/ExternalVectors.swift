import Foundation
import TestSupport

/// External vectors copied into this target's `Vectors/` (see `Vectors/frost/SOURCE.txt`).
enum ExternalVectors: BundledVectors {
    static var bundle: Bundle { .module }
}

import Foundation
import TestSupport

/// External vectors copied into this target's `Vectors/` (see `Tests/ShareRecoveryTests/Vectors/frost/SOURCE.txt`).
enum ExternalVectors: BundledVectors {
    static var bundle: Bundle { .module }
}

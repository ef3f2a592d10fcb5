import ShareCrypto
import Testing

/// The benchmark's bare C calls (RawPrimitives) own their C state like every other C object.
@Suite("Benchmark primitives")
struct RawPrimitivesTests {
    /// Regression: RawPrimitives held a bare secp256k1 context pointer and never destroyed it, one
    /// leaked context per benchmark run (found by the AddressSanitizer run of the suite, whose leak
    /// check also fails this test's process if the context is not freed).
    @Test func secp256k1ContextIsFreedWithTheLastCopy() {
        weak var owner: AnyObject?
        do {
            let raw = RawPrimitives(recordSize: 64)
            owner = raw.secp256k1ContextOwner
            let copy = raw
            #expect(copy.secp256k1GeneratorMultiply())
            #expect(copy.secp256k1PointMultiply())
            #expect(copy.secp256k1Add())
            #expect(owner != nil)
        }
        #expect(owner == nil, "the secp256k1 context outlived every RawPrimitives copy")
    }
}

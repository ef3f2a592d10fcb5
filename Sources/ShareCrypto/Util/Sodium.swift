import CSodium

/// One-time libsodium initialisation, run lazily and thread-safely through a `static let`.
enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    /// Call before any libsodium function. `sodium_init` only fails when the OS has no entropy source,
    /// in which case no secret can be made safely, so we stop rather than continue.
    @inline(__always)
    static func ensureInitialised() {
        guard initialised else { fatalError("libsodium could not be initialised: no entropy source") }
    }
}

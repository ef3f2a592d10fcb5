import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `--path` and `--taproot`: what `derive`, `sign` and `verify` tweak the wallet key for (docs/derivation.md).
struct TweakOptions: ParsableArguments {
    @Option(help: "A BIP-32 path of non-hardened steps below the wallet key, e.g. m/0/1 (docs/derivation.md).")
    var path: String?
    @Flag(
        help: "The BIP-341 Taproot output key (key path, no script tree) of the wallet key, or of the child at --path.")
    var taproot = false

    /// The tweaks; a bad path is a usage error (`invalidParameters` naming the step, exit 2).
    func tweaks() throws -> SigningTweaks {
        do {
            return SigningTweaks(
                path: try path.map { (text) throws(ShareRecoveryError) in try DerivationPath(text) } ?? .root,
                taproot: taproot)
        } catch {
            throw CLIError.usage(error)
        }
    }

    /// The mode and tweaks for a key of `curve`: a mode or tweaks the curve does not take are a
    /// usage error too, like `eject --network` on ed25519, not a failed signature.
    func checked(mode: SigningMode?, curve: Curve) throws -> (mode: SigningMode, tweaks: SigningTweaks) {
        let tweaks = try tweaks()
        let mode = mode ?? .default(for: curve)
        do {
            try mode.check(on: curve)
            try tweaks.check(mode: mode, curve: curve)
        } catch {
            throw CLIError.usage(error)
        }
        return (mode, tweaks)
    }
}

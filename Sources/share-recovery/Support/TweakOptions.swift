import ArgumentParser
import ShareRecovery

/// `--path` and `--taproot`: what `derive`, `sign` and `verify` tweak the wallet key for (docs/derivation.md).
struct TweakOptions: ParsableArguments {
    @Option(help: "A BIP-32 path of non-hardened steps below the wallet key, e.g. m/0/1 (docs/derivation.md).")
    var path: String?
    @Flag(
        help: "The BIP-341 Taproot output key (key path, no script tree) of the wallet key, or of the child at --path.")
    var taproot = false

    /// The tweaks; a bad path is `invalidParameters` naming the step.
    func tweaks() throws -> SigningTweaks {
        SigningTweaks(
            path: try path.map { (text) throws(ShareRecoveryError) in try DerivationPath(text) } ?? .root,
            taproot: taproot)
    }
}

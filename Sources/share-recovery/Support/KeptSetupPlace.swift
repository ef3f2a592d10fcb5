import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// Where the device keeps its ECDSA pair setup with the custodian between runs (docs/ecdsa.md "Kept
/// between runs"): in its store, or in the file `<share file>.pairsetup` beside a share file (mode
/// 0600). Either way the setup is sealed for its share (``KeptPairSetup``), so one left from an
/// earlier share set or generation does not open and is replaced.
enum KeptSetupPlace {
    case store(FileSigningShareStore)
    case file(String)

    /// The setup file beside a share file.
    static func file(besideShare path: String) -> KeptSetupPlace { .file(path + ".pairsetup") }

    /// Whether this share signs ECDSA with the custodian (a secp256k1 share of a 2-of-2 set).
    static func signsECDSA(_ share: ShareRecord) -> Bool {
        share.curve == .secp256k1 && share.parties == 2 && share.threshold == 2
    }

    /// The kept setup of this share, nil when none is kept or the kept one is for another share.
    func load(for share: ShareRecord) async throws -> PairSetup? {
        let sealed: [UInt8]?
        switch self {
        case .store(let store): sealed = try await store.keptPairSetup()
        case .file(let path):
            sealed = FileManager.default.fileExists(atPath: path) ? try Files.read(path) : nil
        }
        return try sealed.flatMap { (bytes) throws(ShareRecoveryError) in try KeptPairSetup.open(bytes, share: share) }
    }

    /// Keeps a setup of this share, replacing the one kept before.
    func keep(_ setup: PairSetup, for share: ShareRecord) async throws {
        let sealed = try KeptPairSetup.seal(setup, share: share)
        switch self {
        case .store(let store): try await store.keepPairSetup(sealed)
        case .file(let path): try Files.write(sealed, to: path, secret: true)
        }
    }

    /// Deletes the kept setup (an abort discarded it, or the server holds none for it).
    func forget() async throws {
        switch self {
        case .store(let store): try await store.forgetPairSetup()
        case .file(let path):
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        }
    }

    /// Makes the share's pair setup with the custodian and keeps it here: what `wallet create
    /// --server`, `device add join` and `store recover` do for a share that signs ECDSA.
    /// - Returns: Whether a setup was made (none for an ed25519 share or another layout).
    @discardableResult
    func make(for share: ShareRecord, client: HTTPWalletClient, clientId: String) async throws -> Bool {
        guard Self.signsECDSA(share) else { return false }
        try await keep(try await client.makePairSetup(share: share, clientId: clientId), for: share)
        return true
    }
}

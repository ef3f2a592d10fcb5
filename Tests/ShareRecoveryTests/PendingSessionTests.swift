import ShareCrypto
import Testing

@testable import ShareRecovery

/// The store's record of a cut-off operation: one byte form, and anything else is `storeCorrupted`.
@Suite("Pending-session record")
struct PendingSessionTests {
    @Test("round trip, in memory and in a file store")
    func roundTrip() async throws {
        for purpose in [PendingSession.Purpose.backup, .recovery] {
            let session = PendingSession(sessionId: "00112233445566778899aabbccddeeff", purpose: purpose)
            #expect(try PendingSession(encoded: session.encoded) == session)
        }
        let directory = StoreTestSupport.makeDirectory("pending")
        defer { StoreTestSupport.removeDirectory(directory) }
        let store = try await StoreTestSupport.open(directory, argon2: .minimum)
        let passcode = StoreTestSupport.passcode("246810")
        try await store.createPasscode(passcode, confirmation: passcode)
        #expect(try await store.pendingSession() == nil)
        let session = PendingSession(sessionId: "abc", purpose: .recovery)
        try await store.recordPendingSession(session)
        #expect(try await store.pendingSession() == session)
        try await store.clearPendingSession()
        try await store.clearPendingSession()
        #expect(try await store.pendingSession() == nil)
        await StoreTestSupport.expectError(.invalidParameters) {
            try await store.recordPendingSession(PendingSession(sessionId: "has space", purpose: .backup))
        }
        await StoreTestSupport.expectError(.invalidParameters) {
            try await store.recordPendingSession(PendingSession(sessionId: "", purpose: .backup))
        }
    }

    @Test("damaged records are storeCorrupted")
    func damaged() {
        let good = PendingSession(sessionId: "abcd", purpose: .backup).encoded
        var cases: [[UInt8]] = [[], Array(good.dropLast()), good + [0x41], Array("SRPX".utf8) + good.dropFirst(4)]
        for (index, value) in [(4, UInt8(2)), (5, 4), (5, 0), (6, 0), (6, 5), (7, 0x20), (8, 0x7F)] as [(Int, UInt8)] {
            var copy = good
            copy[index] = value
            cases.append(copy)
        }
        for bytes in cases {
            #expect(throws: ShareRecoveryError(.storeCorrupted, "")) { try PendingSession(encoded: bytes) }
        }
    }
}

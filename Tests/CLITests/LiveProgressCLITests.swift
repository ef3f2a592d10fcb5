import Foundation
import ShareRecovery
import Testing

/// The live progress line, which the CLI draws only when stderr is a terminal: the recovery runs
/// with its stderr on a pseudo-terminal, as in a user's shell.
@Suite("Live progress line on a terminal")
struct LiveProgressCLITests {
    /// Runs `share-recovery` on a new pseudo-terminal, by util-linux's `script` (in Debian's
    /// essential bsdutils), as a user's shell would: stderr is a terminal, so the CLI draws its live
    /// line. The terminal turns "\n" into "\r\n"; that is undone, so the test sees what the CLI wrote.
    /// - Returns: The exit status and everything written to the terminal.
    static func runOnTerminal(_ arguments: [String], in directory: URL) throws -> (status: Int32, terminal: String) {
        func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let binary = CLIRunner.productsDirectory.appendingPathComponent("share-recovery").path
        let command = ([binary] + arguments).map(quoted).joined(separator: " ") + " </dev/null >/dev/null"
        // -q: no banner; -e: the command's exit status; -c: the command; /dev/null: no typescript file.
        let run = try CLIRunner.run(
            executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"], in: directory)
        return (run.status, run.stdout.replacingOccurrences(of: "\r\n", with: "\n"))
    }

    @Test("on a terminal, each status redraws one line ([n/8] status (s)), which ends when the recovery does")
    func statusesRedrawOneLine() throws {
        let (dir, _) = try CLITests().story(curve: "secp256k1", method: "password", secret: Data("right".utf8))
        let recover = [
            "recover", "--cipher-text", "backup/cipherText", "--secret-file", "secret", "--custodian-shares",
            "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key",
        ]
        let ok = try Self.runOnTerminal(recover + ["--out", "again"], in: dir)
        #expect(ok.status == 0, "\(ok.terminal)")
        // Every redraw returns the cursor and clears the line: one line on screen, updated in place.
        let redraws = ok.terminal.components(separatedBy: "\r\u{1B}[2K").dropFirst()
        #expect(redraws.count == RecoveryStatus.sequence.count, "\(ok.terminal.debugDescription)")
        for (number, (redraw, status)) in zip(redraws, RecoveryStatus.sequence).enumerated() {
            #expect(redraw.hasPrefix("[\(number + 1)/8] \(status) ("), "\(redraw.debugDescription)")
            #expect(redraw.contains(" s)"), "\(redraw.debugDescription)")
        }
        #expect(redraws.last?.hasSuffix(" s)\n") == true, "the last status ends the line")
        #expect(
            !ok.terminal.contains("status: ") && !ok.terminal.contains("{\""), "no plain or JSON lines on a terminal")

        // A failure closes the open line, then says at which step and whether to retry.
        try Data("wrong".utf8).write(to: dir.appendingPathComponent("wrong"))
        let failed = try Self.runOnTerminal(
            [
                "recover", "--cipher-text", "backup/cipherText", "--secret-file", "wrong", "--custodian-shares",
                "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key", "--out", "never",
            ], in: dir)
        #expect(failed.status == 1)
        #expect(
            failed.terminal.contains(" s)\nfailed at step 3/8 (not worth retrying as is); request id "),
            "\(failed.terminal.debugDescription)")
        #expect(failed.terminal.contains("error: authenticationFailed: "))
    }
}

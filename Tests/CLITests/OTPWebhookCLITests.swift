import Foundation
import Testing

/// `serve --otp-webhook`: never unsigned, and a secret file that is not `whsec_` secrets stops the start
/// with the line to fix.
@Suite("CLI OTP webhook")
struct OTPWebhookCLITests {
    @Test("--otp-webhook without --otp-webhook-secret-file, or the other way round, is a usage error")
    func unsigned() throws {
        for options in [
            ["--otp-webhook", "http://127.0.0.1:9/otp"], ["--otp-webhook-secret-file", "otp-webhook.secrets"],
        ] {
            let run = try CLIRunner.run("share-recovery", ["serve", "--port", "0"] + options)
            #expect(run.status != 0 && run.stdout.isEmpty, "\(options): \(run.stderr)")
            #expect(run.stderr.contains("--otp-webhook and --otp-webhook-secret-file go together"), "\(run.stderr)")
        }
    }

    @Test("a secret file with a line that is not a whsec_ secret stops serve before it listens, naming the line")
    func badSecretFile() throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try "whsec_not-base64!\n".write(
            to: directory.appendingPathComponent("otp-webhook.secrets"), atomically: true, encoding: .utf8)
        let run = try CLIRunner.run(
            "share-recovery",
            [
                "serve", "--port", "0", "--database", "server.sqlite", "--otp-webhook", "http://127.0.0.1:9/otp",
                "--otp-webhook-secret-file", "otp-webhook.secrets",
            ], in: directory)
        #expect(run.status != 0 && !run.stdout.contains("listening"), "\(run.stdout)")
        #expect(
            run.stderr.contains("invalidConfiguration") && run.stderr.contains("line 1 of otp-webhook.secrets"),
            "\(run.stderr)")
        #expect(!run.stderr.contains("not-base64"))
    }
}

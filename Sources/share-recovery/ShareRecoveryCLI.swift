import ArgumentParser
import RecoveryKit
import ShareRecovery

#if canImport(Glibc)
import Glibc
#endif

/// Entry point: parsing errors exit 2, failed operations exit 1 with `error: <code>: <reason>`.
@main
struct ShareRecoveryCLI {
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try RootCommand.parseAsRoot()
        } catch {
            let code = RootCommand.exitCode(for: error)
            if code == .success {
                print(RootCommand.fullMessage(for: error))
                exit(0)
            }
            Terminal.error(RootCommand.fullMessage(for: error))
            exit(2)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let error as ShareRecoveryError {
            Terminal.error("error: \(error.code): \(error.reason)")
            exit(1)
        } catch let error as RecoveryKitError {
            Terminal.error("error: \(error.code): \(error.reason)")
            exit(1)
        } catch let error as CLIError {
            Terminal.error("error: \(error.code): \(error.message)")
            exit(error.isUsage ? 2 : 1)
        } catch let error as ValidationError {
            Terminal.error("error: \(error.message)")
            exit(2)
        } catch {
            Terminal.error("error: failed: \(error)")
            exit(1)
        }
    }
}

struct RootCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share-recovery",
        abstract: "MPC wallet share recovery: back up, recover and verify shares (FORMATS.md v1).",
        discussion: "Secrets are read from files only (--secret-file), never from arguments.",
        subcommands: commandList)
}

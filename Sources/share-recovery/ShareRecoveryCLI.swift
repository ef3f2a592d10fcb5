import ArgumentParser
import RecoveryKit
import ShareRecovery
import ShareRecoveryHTTP
import ShareRecoveryServer

#if canImport(Glibc)
import Glibc
#endif

/// Entry point. Exit codes: 0 success (and help, `--version`, completion scripts, all on stdout);
/// 1 a failed operation, `error: <code>: <reason>` on stderr; 2 a usage error; 3 another recovery,
/// backup or method change of the wallet is running (`operationInProgress`): nothing changed, retry.
@main
struct ShareRecoveryCLI {
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try RootCommand.parseAsRoot()
        } catch {
            exitThroughArgumentParser(error)
        }
        // The hint depends on the command as well as on the code (ErrorHints).
        let path = commandPath(of: type(of: command))?.joined(separator: " ") ?? ""
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var command = command
                try command.run()
            }
        } catch let error as ShareRecoveryError {
            fail(path, code: "\(error.code)", error.reason, status: error.code == .operationInProgress ? 3 : 1)
        } catch let error as RecoveryKitError {
            fail(path, code: "\(error.code)", error.reason)
        } catch let error as TransportError {
            fail(path, code: error.code.rawValue, error.reason, retryAfterSeconds: error.retryAfterSeconds)
        } catch let error as ServerStartError {
            fail(path, code: error.code.rawValue, error.reason)
        } catch let error as OTPDeliveryError {
            fail(path, code: error.code.rawValue, error.reason)
        } catch let error as MasterKeyRotationError {
            fail(path, code: error.code.rawValue, error.reason)
        } catch let error as AuditChainError {
            fail(path, code: error.code.rawValue, error.reason)
        } catch let error as CLIError {
            // A command's own hints are about its inputs; a usage error gets the code's hint only.
            fail(error.isUsage ? "" : path, code: error.code, error.message, status: error.isUsage ? 2 : 1)
        } catch {
            exitThroughArgumentParser(error)
        }
    }

    /// `error: <code>: <reason>`, then what to do about it where the command and code have a hint.
    static func fail(
        _ command: String, code: String, _ reason: String, status: Int32 = 1, retryAfterSeconds: Int? = nil
    ) -> Never {
        Terminal.error("error: \(code): \(reason)")
        if let hint = ErrorHints.hint(for: code, command: command, retryAfterSeconds: retryAfterSeconds) {
            Terminal.error("hint: \(hint)")
        }
        exit(status)
    }

    /// The names that lead from the root to a subcommand, e.g. `["device", "list"]`.
    static func commandPath(
        of command: any ParsableCommand.Type, under parent: any ParsableCommand.Type = RootCommand.self
    ) -> [String]? {
        for subcommand in parent.configuration.subcommands {
            if ObjectIdentifier(subcommand) == ObjectIdentifier(command) { return [subcommand._commandName] }
            if let rest = commandPath(of: command, under: subcommand) { return [subcommand._commandName] + rest }
        }
        return nil
    }

    /// Everything that is not one of our errors goes through ArgumentParser's own reading of it:
    /// `help X` and `X --help` arrive here as errors thrown by its help command (and
    /// `--version`, completion requests as clean exits), so treating them as failures would turn
    /// the manual into an error message.
    static func exitThroughArgumentParser(_ error: any Error) -> Never {
        let code = RootCommand.exitCode(for: error)
        let message = RootCommand.fullMessage(for: error)
        if code == .success {
            if !message.isEmpty { Terminal.output(message) }
            exit(0)
        }
        if code == .validationFailure {
            // ArgumentParser's EX_USAGE (64) is 2 here, like every other usage error of this tool.
            Terminal.error(message)
            exit(2)
        }
        if error is ExitCode {
            // A command that chose its exit code has already said why.
            exit(code.rawValue)
        }
        Terminal.error("error: failed: \(error)")
        exit(1)
    }
}

struct RootCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share-recovery",
        abstract: "MPC wallet engine: create a wallet by DKG, sign, back up, recover (format version 1).",
        discussion: helpText(
            "Start with `share-recovery demo`: it creates a wallet by DKG with a reference server, signs, backs it up, loses the device, recovers, signs again under the same key and shows every status.\n\nSecrets (passwords, keys, passcodes, tokens) are read from files only, never from arguments, so they stay out of shell history and process lists. Machine output is JSON on stdout; progress and errors go to stderr. Exit codes: 0 success; 1 a failed operation, with `error: <code>: <reason>` on stderr; 2 a usage error; 3 another recovery, backup or method change of this wallet is running (operationInProgress): nothing was changed, run the command again when it has finished. Every command has its own help: `share-recovery help <command>`.",
            examples: [
                "share-recovery demo",
                "share-recovery help backup",
                "share-recovery keygen --dkg --curve secp256k1 --wallet-id w-1 --out wallet",
                "share-recovery sign --signing-share wallet/share-1.json --signing-share wallet/share-2.json --message-file msg.bin",
            ]),
        version: packageVersion,
        subcommands: commandList)
}

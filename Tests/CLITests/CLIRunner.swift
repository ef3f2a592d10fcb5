import Foundation

/// Runs a built executable of this package and captures its output.
struct CLIRun {
    let status: Int32
    let stdout: String
    let stderr: String
}

enum CLIRunner {
    /// The products directory: where the test runner itself was built.
    static var productsDirectory: URL {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent()
    }

    static func run(_ product: String, _ arguments: [String], in directory: URL? = nil) throws -> CLIRun {
        try run(executable: productsDirectory.appendingPathComponent(product), arguments, in: directory)
    }

    /// Runs any executable; `environment` entries replace the inherited ones of the same name.
    static func run(
        executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]
    )
        throws -> CLIRun
    {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes to the end before waiting, so a full pipe never blocks the child.
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIRun(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

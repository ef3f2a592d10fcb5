import Foundation

/// The `--json` document: the run's kind, when and on what it ran, and every measurement, so a
/// page of results (scripts/benchmarks.sh writes docs/benchmarks.md) needs nothing but this file.
struct BenchReport {
    let quick: Bool
    let started: Date
    let measurements: [Measurement]

    /// The build configuration: a debug build leaves the Swift around the C calls unoptimised while
    /// the floors time the C calls alone, so its ratios say little about a release build's.
    static var build: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    var json: String {
        let machine = Machine.current
        let date = ISO8601DateFormatter().string(from: started)
        let header = [
            #""quick":\#(quick)"#, #""build":"\#(Self.build)""#, #""date":"\#(jsonEscaped(date))""#,
            // Kept at the top level too: older readers of this file took the cores from here.
            #""cores":\#(machine.cores)"#, #""machine":\#(machine.json)"#,
        ]
        return "{" + header.joined(separator: ",") + ",\"measurements\":[\n"
            + measurements.map(\.json).joined(separator: ",\n") + "\n]}\n"
    }
}

/// What the timings depend on: cores, memory, CPU model and system, read where the run happens.
struct Machine {
    let cores: Int
    let memoryBytes: UInt64
    let cpuModel: String
    let system: String

    static var current: Machine {
        let info = ProcessInfo.processInfo
        return Machine(
            cores: info.activeProcessorCount, memoryBytes: info.physicalMemory,
            cpuModel: cpuModelName() ?? "unknown", system: info.operatingSystemVersionString)
    }

    var json: String {
        let fields = [
            #""cores":\#(cores)"#, #""memoryBytes":\#(memoryBytes)"#,
            #""cpuModel":"\#(jsonEscaped(cpuModel))""#, #""system":"\#(jsonEscaped(system))""#,
        ]
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The first `model name` of /proc/cpuinfo (Linux, where the bench runs in CI); nil elsewhere.
    private static func cpuModelName() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}

/// A string as the inside of a JSON string literal: quotes, backslashes and control characters escaped.
func jsonEscaped(_ text: String) -> String {
    var escaped = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": escaped += "\\\""
        case "\\": escaped += "\\\\"
        case "\n": escaped += "\\n"
        case "\t": escaped += "\\t"
        case let control where control.value < 0x20: escaped += String(format: "\\u%04x", control.value)
        default: escaped.unicodeScalars.append(scalar)
        }
    }
    return escaped
}

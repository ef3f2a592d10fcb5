import Foundation
import Histogram

/// One measured quantity: latency distribution in nanoseconds, and optionally the floor it is
/// compared with (derived from primitive costs measured in the same run).
struct Measurement {
    let group: String
    let name: String
    let iterations: Int
    let medianNs: UInt64
    let p99Ns: UInt64
    let meanNs: Double
    var floorNs: Double?
    var target: Double?
    var note: String = ""

    var opsPerSecond: Double { meanNs > 0 ? 1e9 / meanNs : 0 }
    var ratio: Double? { floorNs.map { Double(medianNs) / $0 } }

    var json: String {
        var fields = [
            #""group":"\#(group)""#, #""name":"\#(name)""#, #""iterations":\#(iterations)"#,
            #""medianNs":\#(medianNs)"#, #""p99Ns":\#(p99Ns)"#, #""opsPerSecond":\#(String(format: "%.1f", opsPerSecond))"#,
        ]
        if let floorNs { fields.append(#""floorNs":\#(String(format: "%.0f", floorNs))"#) }
        if let ratio { fields.append(#""ratioToFloor":\#(String(format: "%.3f", ratio))"#) }
        if let target { fields.append(#""target":\#(target)"#) }
        if !note.isEmpty { fields.append(#""note":"\#(note)""#) }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// Times a body with a monotonic clock into an HdrHistogram.
enum Timer {
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    static func measure(
        _ group: String, _ name: String, iterations: Int, warmup: Int? = nil, _ body: () throws -> Void
    ) rethrows -> Measurement {
        for _ in 0..<(warmup ?? max(1, iterations / 10)) { try body() }
        var histogram = Histogram<UInt64>(highestTrackableValue: 600_000_000_000, numberOfSignificantValueDigits: .three)
        var total: UInt64 = 0
        for _ in 0..<iterations {
            let start = now()
            try body()
            let elapsed = now() - start
            total += elapsed
            _ = histogram.record(max(elapsed, 1))
        }
        return Measurement(
            group: group, name: name, iterations: iterations, medianNs: histogram.median,
            p99Ns: histogram.valueAtPercentile(99), meanNs: Double(total) / Double(max(iterations, 1)))
    }
}

/// Formats nanoseconds for the table.
func human(_ nanoseconds: Double) -> String {
    switch nanoseconds {
    case ..<1_000: String(format: "%.0f ns", nanoseconds)
    case ..<1_000_000: String(format: "%.1f µs", nanoseconds / 1_000)
    case ..<1_000_000_000: String(format: "%.2f ms", nanoseconds / 1_000_000)
    default: String(format: "%.2f s", nanoseconds / 1_000_000_000)
    }
}

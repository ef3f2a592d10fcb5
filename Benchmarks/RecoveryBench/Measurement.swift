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
    /// The previous floor definition (before docs/performance.md's algorithms), for comparison.
    var naiveFloorNs: Double?
    /// One k·G of the step's curve, measured in the same run (alternately, for the targeted rows).
    var unitNs: Double?
    /// The most k·G units the step may cost (issue 17's targets).
    var unitsTarget: Double?
    var target: Double?
    var note: String = ""
    /// Operations per second of wall time when many run at once (server load); `nil` for one at a time.
    var throughput: Double?
    /// CPU per operation under load, of the server process and of the load's (this) process.
    var serverCPUNs: Double?
    var loadCPUNs: Double?

    var opsPerSecond: Double { throughput ?? (meanNs > 0 ? 1e9 / meanNs : 0) }
    var ratio: Double? { floorNs.map { Double(medianNs) / $0 } }
    /// The median in units of one k·G of the curve.
    var units: Double? { unitNs.map { Double(medianNs) / $0 } }

    var json: String {
        var fields = [
            #""group":"\#(jsonEscaped(group))""#, #""name":"\#(jsonEscaped(name))""#, #""iterations":\#(iterations)"#,
            #""medianNs":\#(medianNs)"#, #""p99Ns":\#(p99Ns)"#,
            #""opsPerSecond":\#(String(format: "%.1f", opsPerSecond))"#,
        ]
        if let floorNs { fields.append(#""floorNs":\#(String(format: "%.0f", floorNs))"#) }
        if let ratio { fields.append(#""ratioToFloor":\#(String(format: "%.3f", ratio))"#) }
        if let naiveFloorNs { fields.append(#""naiveFloorNs":\#(String(format: "%.0f", naiveFloorNs))"#) }
        if let units { fields.append(#""kGUnits":\#(String(format: "%.2f", units))"#) }
        if let unitNs { fields.append(#""kGNs":\#(String(format: "%.0f", unitNs))"#) }
        if let unitsTarget { fields.append(#""kGUnitsTarget":\#(unitsTarget)"#) }
        if let target { fields.append(#""target":\#(target)"#) }
        if let throughput { fields.append(#""throughputPerSecond":\#(String(format: "%.1f", throughput))"#) }
        if let serverCPUNs { fields.append(#""serverCPUNs":\#(String(format: "%.0f", serverCPUNs))"#) }
        if let loadCPUNs { fields.append(#""loadCPUNs":\#(String(format: "%.0f", loadCPUNs))"#) }
        if !note.isEmpty { fields.append(#""note":"\#(jsonEscaped(note))""#) }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// Times a body with a monotonic clock into an HdrHistogram.
enum Timer {
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// A histogram of nanoseconds: up to 10 minutes per sample, three significant digits.
    static func histogram() -> Histogram<UInt64> {
        Histogram<UInt64>(highestTrackableValue: 600_000_000_000, numberOfSignificantValueDigits: .three)
    }

    static func measure(
        _ group: String, _ name: String, iterations: Int, warmup: Int? = nil, _ body: () async throws -> Void
    ) async rethrows -> Measurement {
        for _ in 0..<(warmup ?? max(1, iterations / 10)) { try await body() }
        var histogram = Self.histogram()
        var total: UInt64 = 0
        for _ in 0..<iterations {
            let start = now()
            try await body()
            let elapsed = now() - start
            total += elapsed
            _ = histogram.record(max(elapsed, 1))
        }
        return Measurement(
            group: group, name: name, iterations: iterations, medianNs: histogram.median,
            p99Ns: histogram.valueAtPercentile(99), meanNs: Double(total) / Double(max(iterations, 1)))
    }

    /// Times `body` and `floor` alternately, one iteration each in turn (the order flipping every time),
    /// so both see the same machine: this VM's speed drifts by up to 40 % within a minute, which made
    /// ratios against floors timed earlier in the run swing by as much. The floor's median becomes the
    /// measurement's floor.
    /// `unit`, when given (one k·G), is timed in the same rotation and becomes the measurement's unit.
    static func measureAgainstFloor(
        _ group: String, _ name: String, iterations: Int, warmup: Int? = nil, _ body: () async throws -> Void,
        floor: () throws -> Void, unit: (() -> Void)? = nil
    ) async rethrows -> Measurement {
        for _ in 0..<(warmup ?? max(1, iterations / 10)) {
            try await body()
            try floor()
            unit?()
        }
        var histograms = (
            body: Self.histogram(),
            floor: Self.histogram(),
            unit: Self.histogram()
        )
        var total: UInt64 = 0
        func timed(_ work: () async throws -> Void) async rethrows -> UInt64 {
            let start = now()
            try await work()
            return max(now() - start, 1)
        }
        for iteration in 0..<iterations {
            let bodyFirst = iteration % 2 == 0
            if !bodyFirst { _ = histograms.floor.record(try await timed(floor)) }
            let elapsed = try await timed(body)
            total += elapsed
            _ = histograms.body.record(elapsed)
            if bodyFirst { _ = histograms.floor.record(try await timed(floor)) }
            // A k·G is a few microseconds: several per turn, so the clock's resolution does not show.
            if let unit { _ = histograms.unit.record(await timed { for _ in 0..<8 { unit() } } / 8) }
        }
        var measurement = Measurement(
            group: group, name: name, iterations: iterations, medianNs: histograms.body.median,
            p99Ns: histograms.body.valueAtPercentile(99), meanNs: Double(total) / Double(max(iterations, 1)))
        measurement.floorNs = Double(histograms.floor.median)
        if unit != nil { measurement.unitNs = Double(histograms.unit.median) }
        return measurement
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

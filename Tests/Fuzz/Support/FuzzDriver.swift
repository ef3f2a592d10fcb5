#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// libFuzzer's entry point for programs that keep their own `main` (libFuzzer ≥ 11). Declaring it
// here, instead of defining `LLVMFuzzerTestOneInput`, means the linker never pulls libFuzzer's own
// `main` out of the archive, so SwiftPM's executable `main` stays the program's entry point.
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

// The C callback cannot capture, so the one input handler lives here; it is set once, before the
// driver starts, and libFuzzer calls it from the main thread only (hence @MainActor).
nonisolated(unsafe) private var inputHandler: (@MainActor ([UInt8]) -> Void)?

/// Runs libFuzzer with this process's arguments, calling `body` once per input, and exits with the
/// driver's status. `body` reports a broken invariant with ``fuzzFailure(_:)``.
public func runFuzzer(_ body: @escaping @MainActor ([UInt8]) -> Void) -> Never {
    inputHandler = body
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
        MainActor.assumeIsolated { inputHandler?(bytes) }
        return 0
    }
    exit(status)
}

/// A broken invariant: libFuzzer records the input as a crash (deadly signal) and stops.
/// The message names the invariant only, never input bytes, which may hold secrets.
public func fuzzFailure(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let text = Array("fuzz invariant broken at \(file):\(line): \(message)\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// `fuzzFailure` unless `condition` holds.
public func fuzzCheck(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() { fuzzFailure(message(), file: file, line: line) }
}

/// The round-trip invariant of a byte layout: `parse` reads `input` and returns the bytes the value
/// it read writes, which must be `input` itself; a refusal must be one `isDocumented` accepts.
public func fuzzRoundTrip(
    _ input: [UInt8], _ what: String, parse: ([UInt8]) throws -> [UInt8], isDocumented: (any Error) -> Bool,
    file: StaticString = #fileID, line: UInt = #line
) {
    let written: [UInt8]
    do { written = try parse(input) } catch {
        fuzzCheck(isDocumented(error), "\(what): undocumented refusal \(error)", file: file, line: line)
        return
    }
    // memcmp, not `==`: under -sanitize=fuzzer an element-wise comparison of a 20–50 KB layout is
    // traced compare by compare.
    let same =
        written.count == input.count
        && (input.isEmpty
            || written.withUnsafeBytes { a in
                input.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) }
            } == 0)
    fuzzCheck(same, "\(what) does not write back the bytes it was read from", file: file, line: line)
}

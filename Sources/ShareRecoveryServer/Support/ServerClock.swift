#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Seconds since the Unix epoch, injectable so tests can expire flows, tokens and sessions.
package struct ServerClock: Sendable {
    private let read: @Sendable () -> Int64

    /// A clock reading `read`.
    package init(_ read: @escaping @Sendable () -> Int64) { self.read = read }

    /// The current time in seconds.
    package var now: Int64 { read() }

    /// The system clock.
    package static let system = ServerClock { Int64(time(nil)) }
}

/// RFC 3339 UTC timestamps (`YYYY-MM-DDTHH:MM:SSZ`) for `expiresAt` fields.
enum RFC3339 {
    static func format(_ seconds: Int64) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        func pad(_ number: Int32, _ width: Int) -> String {
            let text = String(number)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
    }
}

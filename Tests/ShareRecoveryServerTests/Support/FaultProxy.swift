import Foundation
import ShareCrypto
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 between an HTTP/1.1 client and a server that, per request, at random
/// from a seed, does one of:
///
/// - `reset`: resets the client's connection before the request reaches the server (nothing applied);
/// - `dropAnswer`: forwards the request, then resets the client's connection when the server's answer
///   comes (applied, answer lost);
/// - `delayRequest`, `delayAnswer`: holds the request or the answer for up to `maximumDelay`, longer
///   than a client's attempt timeout, so that a retry races the original;
/// - nothing.
///
/// A request is the first bytes the client sends after the previous answer began (clients here send
/// one request at a time per connection, as HTTP/1.1 without pipelining does).
///
/// With `holdingAnswers`, a request whose request line it accepts reaches the server, and the
/// server's answer is held until the client goes away: a test kills the client at that moment
/// (``heldAnswers`` says when), after the server applied the request.
final class FaultProxy: Sendable {
    enum Fault: String, Sendable, CaseIterable {
        case reset, dropAnswer, delayRequest, delayAnswer
    }

    struct Rates: Sendable {
        var reset = 0.05
        var dropAnswer = 0.08
        var delayRequest = 0.03
        var delayAnswer = 0.03
        var maximumDelayMilliseconds = 400
    }

    let port: Int
    let seed: UInt64
    private let upstreamPort: Int
    private let listener: Int32
    private let rates: Rates
    private let holdsAnswer: (@Sendable (String) -> Bool)?
    private let state: Locked<State>

    private struct State {
        var random: SplitMix64
        var counts: [Fault: Int] = [:]
        var requests = 0
        var held = 0
        var enabled = true
        var stopped = false
    }

    /// Starts listening on an ephemeral port of 127.0.0.1.
    /// - Parameter holdingAnswers: Given a request line (`POST /path HTTP/1.1`), whether the answer to
    ///   that request is held from the client.
    init(
        upstreamPort: Int, seed: UInt64, rates: Rates = Rates(),
        holdingAnswers: (@Sendable (String) -> Bool)? = nil
    ) throws {
        self.upstreamPort = upstreamPort
        self.seed = seed
        self.rates = rates
        holdsAnswer = holdingAnswers
        state = Locked(State(random: SplitMix64(seed: seed)))
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw ProxyError("socket failed") }
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 128) == 0 else {
            close(listener)
            throw ProxyError("bind or listen failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Faults on (the default) or off, for steps that are not under test.
    func setEnabled(_ on: Bool) { state.withLock { $0.enabled = on } }

    /// How many of each fault were injected, and over how many requests.
    var report: (requests: Int, counts: [Fault: Int]) { state.withLock { ($0.requests, $0.counts) } }

    /// How many answers `holdingAnswers` has held so far.
    var heldAnswers: Int { state.withLock { $0.held } }

    /// Stops accepting; open connections end as their peers close them.
    func stop() {
        state.withLock { $0.stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if state.withLock({ $0.stopped }) { return }
                continue
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard upstream >= 0, connected == 0 else {
                if upstream >= 0 { close(upstream) }
                close(client)
                continue
            }
            let pair = Pair(client: client, upstream: upstream)
            Thread.detachNewThread { [self] in forwardRequests(pair) }
            Thread.detachNewThread { [self] in forwardAnswers(pair) }
        }
    }

    /// The fault for a new request, if any, and its delay.
    private func roll() -> (Fault?, useconds_t) {
        state.withLock { state in
            state.requests += 1
            guard state.enabled else { return (nil, 0) }
            let draw = Double(state.random.next() >> 11) / Double(1 << 53)
            let delay = useconds_t(state.random.next() % UInt64(rates.maximumDelayMilliseconds + 1)) * 1000
            var edge = 0.0
            for (fault, rate) in [
                (Fault.reset, rates.reset), (.dropAnswer, rates.dropAnswer), (.delayRequest, rates.delayRequest),
                (.delayAnswer, rates.delayAnswer),
            ] {
                edge += rate
                if draw < edge {
                    state.counts[fault, default: 0] += 1
                    return (fault, delay)
                }
            }
            return (nil, 0)
        }
    }

    private func forwardRequests(_ pair: Pair) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = recv(pair.client, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            var fault: Fault?
            var delay: useconds_t = 0
            if pair.beginRequestIfIdle() {
                (fault, delay) = roll()
                pair.setAnswerFault(fault == .dropAnswer || fault == .delayAnswer ? fault : nil, delay: delay)
                if let holdsAnswer, holdsAnswer(Self.requestLine(buffer, count)) { pair.holdAnswer() }
            }
            if fault == .reset {
                pair.abort()
                break
            }
            if fault == .delayRequest { usleep(delay) }
            guard Self.sendAll(pair.upstream, buffer, count) else { break }
        }
        pair.endDirection(halfClosing: pair.upstream)
    }

    private func forwardAnswers(_ pair: Pair) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = recv(pair.upstream, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            let (fault, delay, hold) = pair.takeAnswerFault()
            if hold {
                state.withLock { $0.held += 1 }
                // The answer never reaches the client; the connection ends when the client does.
                while !pair.requestDirectionEnded, !state.withLock({ $0.stopped }) { usleep(5_000) }
                pair.abort()
                break
            }
            if fault == .dropAnswer {
                pair.abort()
                break
            }
            if fault == .delayAnswer { usleep(delay) }
            guard Self.sendAll(pair.client, buffer, count) else { break }
        }
        pair.endDirection(halfClosing: pair.client)
    }

    /// The request line the bytes of a new request start with.
    private static func requestLine(_ buffer: [UInt8], _ count: Int) -> String {
        let head = buffer[0..<min(count, 512)]
        return String(decoding: head.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    private static func sendAll(_ socket: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
        var sent = 0
        while sent < count {
            let n = buffer.withUnsafeBytes { send(socket, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// One client connection and its upstream connection, pumped by two threads.
    private final class Pair: Sendable {
        let client: Int32
        let upstream: Int32
        private let state = Locked(PairState())

        private struct PairState {
            var requestInFlight = false
            var answerFault: Fault?
            var answerDelay: useconds_t = 0
            var holdsAnswer = false
            var aborted = false
            var directionsEnded = 0
        }

        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }

        /// Whether these bytes start a new request (none is waiting for its answer).
        func beginRequestIfIdle() -> Bool {
            state.withLock { state in
                defer { state.requestInFlight = true }
                return !state.requestInFlight
            }
        }

        func setAnswerFault(_ fault: Fault?, delay: useconds_t) {
            state.withLock {
                $0.answerFault = fault
                $0.answerDelay = delay
            }
        }

        /// Holds the answer of the request in flight from the client.
        func holdAnswer() { state.withLock { $0.holdsAnswer = true } }

        /// The answer's fault and whether it is held, once: its first bytes end the request.
        func takeAnswerFault() -> (Fault?, useconds_t, Bool) {
            state.withLock { state in
                defer {
                    state.answerFault = nil
                    state.holdsAnswer = false
                    state.requestInFlight = false
                }
                return (state.answerFault, state.answerDelay, state.holdsAnswer)
            }
        }

        /// Whether the client's side has ended (it closed or was killed).
        var requestDirectionEnded: Bool { state.withLock { $0.directionsEnded > 0 } }

        /// Resets the client's connection: linger 0 makes the final close send RST; shutting the read
        /// sides wakes both threads without sending anything.
        func abort() {
            state.withLock { $0.aborted = true }
            var linger = linger(l_onoff: 1, l_linger: 0)
            setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
            shutdown(client, Int32(SHUT_RD))
            shutdown(upstream, Int32(SHUT_RDWR))
        }

        /// One direction is done: pass its end on (unless resetting), and close both sockets after the second.
        func endDirection(halfClosing socket: Int32) {
            let (aborted, last) = state.withLock { state -> (Bool, Bool) in
                state.directionsEnded += 1
                return (state.aborted, state.directionsEnded == 2)
            }
            if !aborted { shutdown(socket, Int32(SHUT_WR)) }
            if last {
                close(client)
                close(upstream)
            }
        }
    }

    struct ProxyError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

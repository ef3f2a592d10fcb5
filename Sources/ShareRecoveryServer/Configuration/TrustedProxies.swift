#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import HTTPTypes

/// An IPv4 or IPv6 address as its bytes (4 or 16; an IPv4-mapped IPv6 address is its IPv4 address),
/// so that one client has one text, whatever form a header or the socket wrote it in.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), in network order.
    public let bytes: [UInt8]

    /// Parses a plain address, `192.0.2.7` or `2001:db8::7` (no brackets, port or zone).
    /// - Parameter text: The address.
    public init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            let raw = withUnsafeBytes(of: &v6) { Array($0) }
            // ::ffff:a.b.c.d is the IPv4 client a dual-stack socket or proxy reports.
            bytes = raw.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] ? Array(raw.suffix(4)) : raw
        } else {
            return nil
        }
    }

    /// The canonical text (`inet_ntop`): the key the per-address limits count against.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        bytes.withUnsafeBytes { raw in
            _ = inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A network in CIDR notation (`10.0.0.0/8`, `fd00::/8`; a bare address is the one host).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network's first address.
    public let address: IPAddress
    /// How many leading bits every address of the network shares with ``address``.
    public let prefixLength: Int

    /// Parses `address/prefix`, or a bare address (a /32 or /128).
    /// - Parameter cidr: The network.
    /// - Throws: ``ServerStartError`` `invalidTrustedProxy`, naming the mistake: not an address, a
    ///   prefix out of range, bits set after the prefix, or a /0 (which would trust every client).
    public init(cidr: String) throws(ServerStartError) {
        let parts = cidr.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else {
            throw Self.invalid(cidr, "\(parts[0]) is not an IPv4 or IPv6 address")
        }
        // A mapped IPv4 network (::ffff:10.0.0.0/104) is read as the IPv4 network it names.
        let mapped = address.bytes.count == 4 && parts[0].contains(":")
        let bits = address.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard parts[1].allSatisfy(\.isASCIIDigit), let written = Int(parts[1]),
                (0...(mapped ? 128 : bits)).contains(written)
            else {
                throw Self.invalid(cidr, "the prefix length must be 0 to \(mapped ? 128 : bits)")
            }
            length = mapped ? written - 96 : written
            guard length >= 0 else { throw Self.invalid(cidr, "a mapped IPv4 network needs a prefix of 96 or more") }
        }
        guard length > 0 else {
            throw Self.invalid(
                cidr, "a /0 trusts every address, so any client could choose the address it is counted as")
        }
        let network = IPNetwork(address: address, prefixLength: length)
        guard network.masked(address) == address else {
            let intended = IPNetwork(address: network.masked(address), prefixLength: length)
            throw Self.invalid(cidr, "bits are set after the prefix: the network is \(intended)")
        }
        self = network
    }

    private init(address: IPAddress, prefixLength: Int) {
        self.address = address
        self.prefixLength = prefixLength
    }

    private static func invalid(_ cidr: String, _ why: String) -> ServerStartError {
        ServerStartError(.invalidTrustedProxy, "--trusted-proxy \(cidr): \(why)")
    }

    /// `address` with every bit after the prefix cleared (same family as the network).
    private func masked(_ other: IPAddress) -> IPAddress {
        var bytes = other.bytes
        for index in bytes.indices {
            let kept = min(max(prefixLength - index * 8, 0), 8)
            bytes[index] &= kept == 0 ? 0 : ~UInt8(0) << (8 - kept)
        }
        return IPAddress(bytes: bytes)
    }

    /// Whether `other` is in this network (never across families).
    public func contains(_ other: IPAddress) -> Bool {
        other.bytes.count == address.bytes.count && masked(other) == address
    }

    public var description: String { "\(address)/\(prefixLength)" }
}

extension IPAddress {
    fileprivate init(bytes: [UInt8]) { self.bytes = bytes }
}

/// The proxies whose forwarding header the server believes (`serve --trusted-proxy`, docs/server.md,
/// "Behind a proxy"). Only a request whose TCP peer is in one of ``networks`` has its header read, and
/// its client is the rightmost hop that is not itself a trusted proxy: every hop to the right of it
/// was written by a proxy we trust, everything to its left by the client, who may write anything.
public struct TrustedProxies: Sendable, Equatable {
    /// The header the trusted proxies append the client's address to. A proxy sets one of them; the
    /// other then comes from the client as it wrote it, so only the configured one is read.
    public enum Header: String, Sendable, CaseIterable {
        /// `X-Forwarded-For: client, proxy1, proxy2` (HAProxy `option forwardfor`, nginx, most balancers).
        case xForwardedFor = "x-forwarded-for"
        /// RFC 7239 `Forwarded: for=client, for="[2001:db8::1]:4711"`.
        case forwarded
    }

    /// The trusted networks; empty (the default): no header is read, the client is the TCP peer.
    public var networks: [IPNetwork]
    /// The header read from a trusted peer.
    public var header: Header

    /// - Parameters:
    ///   - networks: The trusted proxies' networks.
    ///   - header: The header they append to.
    public init(networks: [IPNetwork] = [], header: Header = .xForwardedFor) {
        self.networks = networks
        self.header = header
    }

    private func isTrusted(_ address: IPAddress) -> Bool { networks.contains { $0.contains(address) } }

    /// The client address the per-address limits count against.
    /// - Parameters:
    ///   - peer: The TCP peer's address as the socket reports it.
    ///   - headers: The request's headers.
    /// - Returns: The peer (canonical) when it is not a trusted proxy or sends no header; else the
    ///   rightmost untrusted hop; the leftmost hop when every hop is trusted; and, when a hop cannot be
    ///   read, the trusted proxy that wrote it (the nearest address known to be true).
    public func clientAddress(peer: String, headers: HTTPFields) -> String {
        guard let peerAddress = IPAddress(peer) else { return peer }
        guard !networks.isEmpty, isTrusted(peerAddress) else { return peerAddress.description }
        var nearest = peerAddress
        for hop in hops(headers).reversed() {
            guard let address = hop else { return nearest.description }
            guard isTrusted(address) else { return address.description }
            nearest = address
        }
        return nearest.description
    }

    /// The header's hops, left (client) to right (nearest proxy); `nil` for one that cannot be read.
    /// Several header lines are one list, in order (RFC 9110 §5.3).
    func hops(_ headers: HTTPFields) -> [IPAddress?] {
        guard let name = HTTPField.Name(header.rawValue) else { return [] }
        let elements = headers[values: name].flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        return elements.map { element in
            let text = element.trimmingWhitespace
            switch header {
            case .xForwardedFor: return Self.node(text)
            case .forwarded: return Self.forwardedFor(text).flatMap(Self.node)
            }
        }
    }

    /// The `for=` value of one RFC 7239 forwarded-element (`for=…;proto=…;by=…`), unquoted.
    static func forwardedFor(_ element: Substring) -> Substring? {
        for pair in element.split(separator: ";") {
            let parts = pair.trimmingWhitespace.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "for" else { continue }
            let value = parts[1]
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { return value.dropFirst().dropLast() }
            return value
        }
        return nil
    }

    /// A node as proxies write it: `192.0.2.7`, `192.0.2.7:4711`, `2001:db8::7`, `[2001:db8::7]` or
    /// `[2001:db8::7]:4711`; `nil` for anything else (`unknown`, an obfuscated `_name`, garbage).
    static func node(_ text: Substring) -> IPAddress? {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else {
                return nil
            }
            return IPAddress(String(text[text.index(after: text.startIndex)..<close]))
        }
        // One colon: IPv4 with a port. More: a bare IPv6 address.
        if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            guard text[text.index(after: colon)...].allSatisfy(\.isASCIIDigit) else { return nil }
            return IPAddress(String(text[..<colon])).flatMap { $0.bytes.count == 4 ? $0 : nil }
        }
        return IPAddress(String(text))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate var trimmingWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}

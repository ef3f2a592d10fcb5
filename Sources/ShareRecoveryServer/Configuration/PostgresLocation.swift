/// A parsed `postgres://user:password@host:port/database?sslmode=…&schema=…` URL.
package struct PostgresLocation: Sendable, Equatable {
    package var host: String
    package var port: Int
    package var username: String
    package var password: String?
    package var database: String
    package var preferTLS: Bool
    package var requireTLS: Bool
    /// Whether the certificate must name ``host`` (the chain is always verified when TLS is used).
    package var verifiesHostname: Bool
    /// PEM certificate authorities to verify the server against instead of the system's.
    package var caFile: String?
    /// A schema to create and use instead of `public`.
    package var schema: String?

    /// Parses a URL.
    /// - Throws: ``ServerStartError/Code/invalidConfiguration`` naming the part that is wrong (never the password).
    package init(url: String) throws(ServerStartError) {
        func fail(_ why: String) -> ServerStartError {
            ServerStartError(
                .invalidConfiguration, "PostgreSQL URL: \(why) (expected postgres://user:password@host:port/database)")
        }
        var rest: Substring
        if url.hasPrefix("postgres://") {
            rest = url.dropFirst("postgres://".count)
        } else if url.hasPrefix("postgresql://") {
            rest = url.dropFirst("postgresql://".count)
        } else {
            throw fail("unknown scheme")
        }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        guard let slash = rest.firstIndex(of: "/") else { throw fail("no database name") }
        let authority = rest[..<slash]
        guard let database = Self.percentDecoded(rest[rest.index(after: slash)...]), !database.isEmpty,
            !database.contains("/")
        else { throw fail("no database name") }
        guard let at = authority.lastIndex(of: "@") else { throw fail("no user name") }
        let credentials = authority[..<at]
        var hostPort = authority[authority.index(after: at)...]
        let userPart: Substring
        if let colon = credentials.firstIndex(of: ":") {
            userPart = credentials[..<colon]
            guard let password = Self.percentDecoded(credentials[credentials.index(after: colon)...]) else {
                throw fail("the password is not percent-encoded correctly")
            }
            self.password = password
        } else {
            userPart = credentials
            password = nil
        }
        guard let username = Self.percentDecoded(userPart), !username.isEmpty else { throw fail("no user name") }
        var port = 5432
        if hostPort.hasPrefix("[") {
            // [IPv6]:port
            guard let close = hostPort.firstIndex(of: "]") else { throw fail("bad IPv6 host") }
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") {
                guard let number = Int(after.dropFirst()), (1...65535).contains(number) else { throw fail("bad port") }
                port = number
            } else if !after.isEmpty {
                throw fail("bad host")
            }
            hostPort = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
        } else if let colon = hostPort.lastIndex(of: ":") {
            guard let number = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(number) else {
                throw fail("bad port")
            }
            port = number
            hostPort = hostPort[..<colon]
        }
        guard !hostPort.isEmpty else { throw fail("no host") }
        host = String(hostPort)
        self.port = port
        self.username = username
        self.database = database
        preferTLS = true
        requireTLS = false
        verifiesHostname = true
        caFile = nil
        schema = nil
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = parts[0]
            let value = parts.count > 1 ? parts[1] : ""
            switch key {
            case "sslmode":
                switch value {
                case "disable": preferTLS = false
                case "prefer", "allow": preferTLS = true
                case "require", "verify-ca", "verify-full": requireTLS = true
                default: throw fail("unknown sslmode \(value)")
                }
            case "schema":
                guard let first = value.first, first == "_" || ("a"..."z").contains(first),
                    value.count <= 63,
                    value.allSatisfy({ $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) })
                else { throw fail("schema must match [a-z_][a-z0-9_]*") }
                schema = String(value)
            default:
                throw fail("unknown parameter \(key)")
            }
        }
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        RequestReading.percentDecoded(String(text))
    }
}

import ShareCrypto
package import ShareRecovery
package import ShareRecoveryHTTP

/// What an audit row records. The names are stable (they are stored, listed and verified): add new
/// kinds, never rename one. docs/server.md, "Audit trail", says when each is appended.
package enum AuditEventKind: String, Sendable, CaseIterable {
    /// An OTP flow was verified and a token of `purpose` minted.
    case tokenIssued
    /// A wrong one-time code; the flow stays open (`remaining` attempts).
    case otpFailed
    /// The wrong code that ended its flow (the fifth).
    case otpExhausted
    /// A cipherText stored for a method the user had none of.
    case methodAdded
    /// A cipherText that replaced the method's previous one (the old one stops working).
    case methodRotated
    /// A method's cipherText deleted.
    case methodDeleted
    /// A cipherText served to a `recover` token.
    case cipherTextRead
    /// A resharing session opened, finished or confirmed for a backup or a recovery, or not.
    case backupStarted, backupCompleted, backupFailed, backupAborted
    case recoveryStarted, recoveryCompleted, recoveryFailed, recoveryAborted
    /// A refresh session (docs/formats.md §3) opened, finished or confirmed, or not: its confirm
    /// replaced the signing set with the next generation's.
    case refreshStarted, refreshCompleted, refreshFailed, refreshAborted
    /// Custodian backup shares stored, served (`count`) or deleted through the integrator's webhooks.
    case custodianShareStored, custodianSharesServed, custodianSharesDeleted
    /// A signing share of the custodian registered through `POST /custodian/wallets`.
    case walletRegistered
    /// A wallet's key created by DKG with the custodian as party 2.
    case walletCreated
    /// The custodian's signature share released (its nonce consumed).
    case signatureShareReleased
    /// The custodian's signing share released for eject (docs/eject.md); the wallet signs no more.
    case walletEjected
    /// A device added to the user's wallet: the custodian's share of its new set stored (docs/devices.md).
    case deviceAdded
    /// A device removed: the custodian's share of its set deleted, so its own share cannot sign.
    case deviceRemoved
    /// An ECDSA pair setup between a device and the custodian made and kept (docs/ecdsa.md).
    case ecdsaPairSetupMade
    /// An ECDSA signature made with the custodian: its round state used and deleted.
    case ecdsaSigned
    /// An ECDSA signature aborted by a failed check (`check`, `culprit`): the device's pair setup is
    /// discarded on both sides.
    case ecdsaAborted
}

/// One event to append: who, what, by which request, and a few public facts about it.
///
/// Nothing secret can enter a row: the details are typed fields holding only public identifiers,
/// names and numbers (no token, code, cipherText, share, key or webhook secret has a field here), and
/// a failure keeps only its stable error code, never its message.
package struct AuditEvent: Sendable, Equatable {
    package let kind: AuditEventKind
    /// The user (also the custodian's client id) the event is about.
    package let account: String
    /// The request's `X-Request-Id`.
    package let requestId: String
    /// Unix seconds.
    package let at: Int64
    package var detail: Detail

    /// The public facts of an event, written as a JSON object with the members in this order.
    package struct Detail: Sendable, Equatable {
        package var flowId: String?
        package var sessionId: String?
        package var purpose: TokenPurpose?
        package var method: BackupMethod?
        package var walletId: String?
        package var setId: String?
        package var generation: UInt32?
        package var mode: SigningMode?
        /// The device a `deviceAdded` or `deviceRemoved` row is about.
        package var deviceId: String?
        package var count: Int?
        package var remaining: Int?
        package var expiresAt: Int64?
        /// Where a session failed: `open`, `finish` or `confirm`.
        package var step: String?
        /// A failure's stable API error code.
        package var reason: APIErrorCode?
        /// The ECDSA check that failed: `round1`, `round2` or `round3`, the round whose messages it
        /// checks (docs/ecdsa.md, "Aborts").
        package var check: String?
        /// The party an ECDSA check names as the sender of the message that failed it, when it can.
        package var culprit: Int?

        package init() {}

        /// The stored JSON text (`{}` when empty).
        package var json: String {
            var members: [(key: String, value: JSONValue)] = []
            func add(_ key: String, _ value: String?) { if let value { members.append((key, .string(value))) } }
            func add(_ key: String, number value: (some BinaryInteger)?) {
                if let value { members.append((key, .number(String(value)))) }
            }
            add("flowId", flowId)
            add("sessionId", sessionId)
            add("purpose", purpose?.rawValue)
            add("method", method?.apiName)
            add("walletId", walletId)
            add("setId", setId)
            add("generation", number: generation)
            add("mode", mode?.rawValue)
            add("deviceId", deviceId)
            add("count", number: count)
            add("remaining", number: remaining)
            add("expiresAt", expiresAt.map(RFC3339.format))
            add("step", step)
            add("reason", reason?.name)
            add("check", check)
            add("culprit", number: culprit)
            return JSONWriter.write(.object(members))
        }
    }

    package init(_ kind: AuditEventKind, account: String, requestId: String, at: Int64, detail: Detail = Detail()) {
        self.kind = kind
        self.account = account
        self.requestId = requestId
        self.at = at
        self.detail = detail
    }
}

/// Who asked, and when: what every event of one request shares.
package struct AuditOrigin: Sendable {
    package let requestId: String
    package let at: Int64

    package init(requestId: String, at: Int64) {
        self.requestId = requestId
        self.at = at
    }

    /// An event of this request.
    package func event(_ kind: AuditEventKind, account: String, _ fill: (inout AuditEvent.Detail) -> Void = { _ in })
        -> AuditEvent
    {
        var detail = AuditEvent.Detail()
        fill(&detail)
        return AuditEvent(kind, account: account, requestId: requestId, at: at, detail: detail)
    }
}

/// `frost/zcash-frost/<curve>/vectors_dkg.json`: three participants of a t = 2 DKG. Participant j deals
/// f_j(z) = signing_key_j + coefficient_j·z with commitments vss_commitments_j; participant i's `signing_shares`
/// holds what it received, keyed by sender: signing_shares[j] = f_j(i).
public struct ZcashDKGFile: Decodable, Sendable {
    public struct Config: Decodable, Sendable {
        public let MAX_PARTICIPANTS: Int
        public let MIN_PARTICIPANTS: Int
        public let group: String
    }
    public struct Participant: Decodable, Sendable {
        public let identifier: Int
        /// f_j(0), the dealt secret.
        public let signing_key: HexBytes
        /// The degree-1 coefficient of f_j.
        public let coefficient: HexBytes
        public let vss_commitments: [HexBytes]
        /// Sender index (a decimal string) → f_sender(identifier).
        public let signing_shares: [String: HexBytes]
        /// `R || μ`, the proof of knowledge of signing_key (docs/formats.md §10 step 1).
        public let proof_of_knowledge: HexBytes
        public let verifying_share: HexBytes
        public let signing_share: HexBytes
    }
    public struct Inputs: Decodable, Sendable {
        public let verifying_key: HexBytes
        public let participants: [Participant]

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { Int(stringValue) }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { self.stringValue = String(intValue) }
        }

        // Participants sit beside `verifying_key` (and `secret` on ed25519) under their decimal identifiers.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            verifying_key = try container.decode(HexBytes.self, forKey: Key(stringValue: "verifying_key"))
            participants = try container.allKeys.filter { $0.intValue != nil }
                .map { try container.decode(Participant.self, forKey: $0) }
                .sorted { $0.identifier < $1.identifier }
        }
    }
    public let config: Config
    public let inputs: Inputs
}

public import ShareCrypto

// SLIP-0039 §Format of the share mnemonic:
// id (15) | ext (1) | e (4) | GI (4) | Gt (4) | g (4) | I (4) | t (4) | padded value | checksum (30 bits)

/// Bits per word.
private let bitsPerWord = 10
/// id, ext, e, GI, Gt, g, I and t: 40 bits, 4 words.
private let headerWordCount = 4
/// Words that are not the padded share value.
private let metadataWordCount = headerWordCount + RS1024.checksumCount
/// A 128-bit value needs 13 words of 10 bits, so no valid share is shorter than 20 words.
private let minimumWordCount = metadataWordCount + (128 + bitsPerWord - 1) / bitsPerWord
/// A share of the longest secret read back (`SLIP39.maximumSecretCount`, 8192 bits): 827 words.
private let maximumWordCount = metadataWordCount + (8 * SLIP39.maximumSecretCount + bitsPerWord - 1) / bitsPerWord

extension SLIP39.Share {
    /// Decodes a mnemonic: words from the SLIP-39 list separated by ASCII whitespace, in any letter case.
    ///
    /// Applies every rule SLIP-39 states for a single share (§Combining the shares, step 1): known words,
    /// length, padding length, checksum, zero padding, group threshold ≤ group count.
    /// - Parameter mnemonic: The mnemonic as UTF-8 text.
    /// - Throws: ``RecoveryKitError`` with code ``RecoveryKitError/Code/invalidWord``,
    ///   ``RecoveryKitError/Code/invalidMnemonicLength``, ``RecoveryKitError/Code/invalidSecretLength``,
    ///   ``RecoveryKitError/Code/invalidChecksum``, ``RecoveryKitError/Code/invalidPadding`` or
    ///   ``RecoveryKitError/Code/invalidGroupThreshold``.
    public init(mnemonic: SecureBytes) throws {
        let words = try mnemonic.withUnsafeBytes { try WordIndices(parsing: $0) }
        try self.init(words: words)
    }

    /// Decodes a mnemonic held in a `String`; see ``init(mnemonic:)-(SecureBytes)``.
    ///
    /// Prefer the `SecureBytes` form where the text is read from a file or stdin: a `String` cannot be wiped.
    /// - Parameter mnemonic: The mnemonic text.
    /// - Throws: The same errors as ``init(mnemonic:)-(SecureBytes)``.
    public init(mnemonic: String) throws {
        var text = mnemonic
        let bytes = text.withUTF8 { source in
            SecureBytes(count: source.count) { $0.copyMemory(from: UnsafeRawBufferPointer(source)) }
        }
        try self.init(mnemonic: bytes)
    }

    /// The mnemonic as UTF-8 text: lowercase words separated by single spaces, no trailing newline.
    public var mnemonic: SecureBytes {
        let words = wordIndices
        let wordBytes = words.map { Wordlist.utf8Words[$0] }
        let length = wordBytes.reduce(0) { $0 + $1.count } + words.count - 1
        return SecureBytes(count: length) { out in
            var offset = 0
            for (position, word) in wordBytes.enumerated() {
                if position > 0 {
                    out[offset] = UInt8(ascii: " ")
                    offset += 1
                }
                for byte in word {
                    out[offset] = byte
                    offset += 1
                }
            }
        }
    }

    /// The mnemonic as a `String`, for the one place that must show it to the user (printing a kit).
    /// The caller owns the copy's lifetime.
    public func revealedMnemonic() -> String {
        String(decoding: mnemonic.revealedBytes(), as: UTF8.self)
    }

    /// The number of words in the mnemonic: 20 for a 16-byte secret, 33 for a 32-byte one.
    public var wordCount: Int { metadataWordCount + valueWordCount(byteCount: value.count) }

    // MARK: Encoding

    /// The 10-bit word values of this share, checksum included.
    var wordIndices: WordIndices {
        let valueWords = valueWordCount(byteCount: value.count)
        let total = metadataWordCount + valueWords
        let storage = SecureBytes(count: 2 * total) { out in
            var checksum = RS1024(extendable: extendable)
            func put(_ position: Int, _ word: Int) {
                out[2 * position] = UInt8(word >> 8)
                out[2 * position + 1] = UInt8(word & 0xFF)
                checksum.append(word)
            }
            let header: UInt64 =
                UInt64(identifier) << 25 | UInt64(extendable ? 1 : 0) << 24 | UInt64(iterationExponent) << 20
                | UInt64(groupIndex) << 16 | UInt64(groupThreshold - 1) << 12 | UInt64(groupCount - 1) << 8
                | UInt64(memberIndex) << 4 | UInt64(memberThreshold - 1)
            for position in 0..<headerWordCount {
                put(position, Int(header >> UInt64(bitsPerWord * (headerWordCount - 1 - position))) & 1023)
            }

            // Left-pad the value with zero bits to a whole number of words, then cut it into words.
            var accumulator: UInt32 = 0
            var bitCount = bitsPerWord * valueWords - 8 * value.count
            var position = headerWordCount
            value.withUnsafeBytes { bytes in
                for byte in bytes {
                    accumulator = accumulator << 8 | UInt32(byte)
                    bitCount += 8
                    if bitCount >= bitsPerWord {
                        bitCount -= bitsPerWord
                        put(position, Int(accumulator >> UInt32(bitCount)))
                        accumulator &= (1 << UInt32(bitCount)) - 1
                        position += 1
                    }
                }
            }

            for (offset, word) in checksum.checkWords().enumerated() { put(position + offset, word) }
        }
        return WordIndices(storage: storage)
    }

    private func valueWordCount(byteCount: Int) -> Int {
        (8 * byteCount + bitsPerWord - 1) / bitsPerWord
    }

    // MARK: Decoding

    private init(words: WordIndices) throws {
        guard words.count >= minimumWordCount else {
            throw RecoveryKitError(
                .invalidMnemonicLength, "a mnemonic of \(words.count) words; a share has at least \(minimumWordCount)")
        }
        // The padding is what a whole number of 16-bit units leaves over; more than 8 bits means
        // the words do not hold such a number (§Combining the shares, step 1).
        let valueWords = words.count - metadataWordCount
        let paddingBits = (bitsPerWord * valueWords) % 16
        guard paddingBits <= 8 else {
            throw RecoveryKitError(
                .invalidSecretLength, "a mnemonic of \(words.count) words does not hold a whole number of 16-bit units")
        }

        var header: UInt64 = 0
        for position in 0..<headerWordCount { header = header << UInt64(bitsPerWord) | UInt64(words[position]) }
        let extendable = (header >> 24) & 1 == 1
        var checksum = RS1024(extendable: extendable)
        for word in words { checksum.append(word) }
        guard checksum.isValid else {
            throw RecoveryKitError(.invalidChecksum, "the mnemonic's checksum does not verify")
        }

        let field = { (shift: UInt64) in Int((header >> shift) & 0xF) }
        let groupThreshold = field(12) + 1
        let groupCount = field(8) + 1
        guard groupThreshold <= groupCount else {
            throw RecoveryKitError(
                .invalidGroupThreshold, "group threshold \(groupThreshold) exceeds group count \(groupCount)")
        }

        let byteCount = (bitsPerWord * valueWords - paddingBits) / 8
        let value = try SecureBytes(count: byteCount) { out in
            var accumulator: UInt32 = 0
            var bitCount = 0
            var output = 0
            for position in headerWordCount..<headerWordCount + valueWords {
                accumulator = accumulator << UInt32(bitsPerWord) | UInt32(words[position])
                bitCount += bitsPerWord
                if position == headerWordCount {
                    // The padding sits at the top of the first value word and must be zero.
                    guard accumulator >> UInt32(bitCount - paddingBits) == 0 else {
                        throw RecoveryKitError(
                            .invalidPadding, "the padding bits in front of the share value are not zero")
                    }
                    bitCount -= paddingBits
                }
                while bitCount >= 8 {
                    bitCount -= 8
                    out[output] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount))
                    accumulator &= (1 << UInt32(bitCount)) - 1
                    output += 1
                }
            }
        }

        self.init(
            identifier: Int(header >> 25), extendable: extendable, iterationExponent: field(20),
            groupIndex: field(16), groupThreshold: groupThreshold, groupCount: groupCount,
            memberIndex: field(4), memberThreshold: field(0) + 1, value: value)
    }
}

/// The 10-bit word values of a mnemonic, kept in a wiped buffer (two big-endian bytes per word).
struct WordIndices: RandomAccessCollection {
    private let storage: SecureBytes

    /// Words already encoded two bytes each.
    init(storage: SecureBytes) { self.storage = storage }

    /// Splits UTF-8 text at ASCII whitespace and looks every word up in the word list.
    ///
    /// Counting comes first: text of more words than the longest share is refused before any word is
    /// looked up or stored, so an oversize input costs one pass up to its 828th word and no more.
    /// - Throws: ``RecoveryKitError/Code/invalidMnemonicLength`` for more than 827 words;
    ///   ``RecoveryKitError/Code/invalidWord`` naming the position (never the word) of the first unknown word.
    init(parsing text: UnsafeRawBufferPointer) throws {
        var ranges: [Range<Int>] = []
        var start: Int?
        for offset in 0...text.count {
            let isSpace = offset == text.count || Self.isWhitespace(text[offset])
            if isSpace, let wordStart = start {
                guard ranges.count < maximumWordCount else {
                    throw RecoveryKitError(
                        .invalidMnemonicLength, "a mnemonic of more than \(maximumWordCount) words; no share is longer")
                }
                ranges.append(wordStart..<offset)
                start = nil
            } else if !isSpace, start == nil {
                start = offset
            }
        }
        let storage = try SecureBytes(count: 2 * ranges.count) { out in
            for (position, range) in ranges.enumerated() {
                guard let index = Wordlist.index(of: UnsafeRawBufferPointer(rebasing: text[range])) else {
                    throw RecoveryKitError(.invalidWord, "word \(position + 1) is not in the SLIP-39 word list")
                }
                out[2 * position] = UInt8(index >> 8)
                out[2 * position + 1] = UInt8(index & 0xFF)
            }
        }
        self.init(storage: storage)
    }

    var startIndex: Int { 0 }

    var endIndex: Int { storage.count / 2 }

    subscript(position: Int) -> Int {
        storage.withUnsafeBytes { Int($0[2 * position]) << 8 | Int($0[2 * position + 1]) }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}

extension Wordlist {
    /// The words as UTF-8 bytes, for lookup and encoding without building `String`s from share data.
    static let utf8Words: [[UInt8]] = words.map { Array($0.utf8) }

    /// The index of `word` (ASCII letters in any case), or `nil` if it is not in the list.
    static func index(of word: UnsafeRawBufferPointer) -> Int? {
        var low = 0
        var high = utf8Words.count
        while low < high {
            let middle = (low + high) / 2
            let candidate = utf8Words[middle]
            var order = 0
            for (a, b) in zip(word, candidate) where order == 0 {
                let lowered = (0x41...0x5A).contains(a) ? a | 0x20 : a
                order = lowered < b ? -1 : (lowered > b ? 1 : 0)
            }
            if order == 0 { order = word.count < candidate.count ? -1 : (word.count > candidate.count ? 1 : 0) }
            if order == 0 { return middle }
            if order < 0 { high = middle } else { low = middle + 1 }
        }
        return nil
    }
}

import Foundation
import RecoveryKit
import ShareCrypto
import Testing

/// A group layout to generate: group threshold over `(memberThreshold, memberCount)` groups.
struct Layout: Sendable, CustomTestStringConvertible {
    let groupThreshold: Int
    let groups: [SLIP39.Group]

    init(_ groupThreshold: Int, _ groups: [(Int, Int)]) {
        self.groupThreshold = groupThreshold
        self.groups = groups.map { SLIP39.Group(memberThreshold: $0.0, memberCount: $0.1) }
    }

    var testDescription: String { "\(groupThreshold) of [\(groups.map(\.description).joined(separator: ", "))]" }

    static let oneOfOne = Layout(1, [(1, 1)])
    static let twoOfThree = Layout(1, [(2, 3)])
    static let twoLevel = Layout(2, [(1, 1), (2, 3), (3, 5)])
    static let all = [oneOfOne, twoOfThree, twoLevel]

    /// Every set of exactly-threshold shares: each choice of `groupThreshold` groups, and in each
    /// chosen group each choice of `memberThreshold` members.
    func thresholdSubsets(of kit: [[SLIP39.Share]]) -> [[SLIP39.Share]] {
        combinations(of: Array(kit.indices), size: groupThreshold).flatMap { chosenGroups in
            chosenGroups.reduce([[SLIP39.Share]]([[]])) { partial, group in
                let memberSets = combinations(of: kit[group], size: groups[group].memberThreshold)
                return partial.flatMap { prefix in memberSets.map { prefix + $0 } }
            }
        }
    }
}

struct RoundTripCase: Sendable, CustomTestStringConvertible {
    let layout: Layout
    let secretCount: Int
    let passphrase: String
    let extendable: Bool

    var testDescription: String {
        "\(layout.testDescription), \(secretCount) bytes, passphrase \(passphrase.isEmpty ? "none" : "set"), "
            + "extendable \(extendable)"
    }

    static let all: [RoundTripCase] = Layout.all.flatMap { layout in
        [16, 32].flatMap { count in
            ["", "correct horse battery staple"].flatMap { passphrase in
                [true, false].map {
                    RoundTripCase(layout: layout, secretCount: count, passphrase: passphrase, extendable: $0)
                }
            }
        }
    }
}

@Suite("SLIP-39 generate and combine")
struct SLIP39RoundTripTests {
    /// Kits are made with the fastest iteration exponent; the official vectors cover the others.
    static func makeKit(
        _ layout: Layout, secret: SecureBytes, passphrase: String = "", extendable: Bool = true, seed: String
    ) throws -> [[SLIP39.Share]] {
        try SLIP39.generateShares(
            masterSecret: secret, groupThreshold: layout.groupThreshold, groups: layout.groups,
            passphrase: SecureBytes(utf8: passphrase), iterationExponent: 0, extendable: extendable,
            using: DeterministicRandom(seed: Array(seed.utf8)))
    }

    static func secret(_ count: Int, seed: String = "master secret") -> SecureBytes {
        DeterministicRandom(seed: Array(seed.utf8)).secureBytes(count: count)
    }

    @Test(arguments: RoundTripCase.all)
    func everyThresholdSubsetRecovers(_ test: RoundTripCase) throws {
        let secret = Self.secret(test.secretCount, seed: test.testDescription)
        let passphrase = SecureBytes(utf8: test.passphrase)
        let kit = try Self.makeKit(
            test.layout, secret: secret, passphrase: test.passphrase, extendable: test.extendable,
            seed: test.testDescription)

        // Shape and metadata.
        #expect(kit.map(\.count) == test.layout.groups.map(\.memberCount))
        let identifier = kit[0][0].identifier
        #expect((0..<(1 << 15)).contains(identifier))
        for (groupIndex, group) in kit.enumerated() {
            for (memberIndex, share) in group.enumerated() {
                #expect(share.identifier == identifier)
                #expect(share.extendable == test.extendable)
                #expect(share.iterationExponent == 0)
                #expect(share.groupIndex == groupIndex)
                #expect(share.groupThreshold == test.layout.groupThreshold)
                #expect(share.groupCount == test.layout.groups.count)
                #expect(share.memberIndex == memberIndex)
                #expect(share.memberThreshold == test.layout.groups[groupIndex].memberThreshold)
                #expect(share.value.count == test.secretCount)
                #expect(share.wordCount == (test.secretCount == 16 ? 20 : 33))

                // The mnemonic decodes back to the same share.
                let decoded = try SLIP39.Share(mnemonic: share.mnemonic)
                #expect(decoded.value == share.value)
                #expect(decoded.description == share.description)
                #expect(decoded.revealedMnemonic() == share.revealedMnemonic())
            }
        }

        // Any subset of exactly threshold shares works, in any order, through shares or mnemonics.
        let subsets = test.layout.thresholdSubsets(of: kit)
        #expect(!subsets.isEmpty)
        for subset in subsets {
            #expect(try SLIP39.combine(subset, passphrase: passphrase) == secret)
        }
        let last = try #require(subsets.last)
        #expect(try SLIP39.combine(last.reversed(), passphrase: passphrase) == secret)
        #expect(try SLIP39.combine(mnemonics: last.map(\.mnemonic), passphrase: passphrase) == secret)

        // SLIP-39 has no passphrase check: a wrong one gives another secret of the same length.
        let wrong = try SLIP39.combine(last, passphrase: SecureBytes(utf8: test.passphrase + "!"))
        #expect(wrong != secret)
        #expect(wrong.count == secret.count)
    }

    @Test("Fewer members than the member threshold: insufficientMembers")
    func tooFewMembers() throws {
        let kit = try Self.makeKit(.twoOfThree, secret: Self.secret(16), seed: "too few members")
        #expect(throws: RecoveryKitError(.insufficientMembers, "")) { try SLIP39.combine([kit[0][1]]) }

        let twoLevel = try Self.makeKit(.twoLevel, secret: Self.secret(32), seed: "too few members, two levels")
        // Two groups, but only 2 of the 3-of-5 group's members.
        #expect(throws: RecoveryKitError(.insufficientMembers, "")) {
            try SLIP39.combine([twoLevel[0][0], twoLevel[2][0], twoLevel[2][3]])
        }
    }

    @Test("Fewer groups than the group threshold: insufficientGroups")
    func tooFewGroups() throws {
        let kit = try Self.makeKit(.twoLevel, secret: Self.secret(16), seed: "too few groups")
        #expect(throws: RecoveryKitError(.insufficientGroups, "")) { try SLIP39.combine([kit[0][0]]) }
        #expect(throws: RecoveryKitError(.insufficientGroups, "")) { try SLIP39.combine([kit[1][0], kit[1][2]]) }
        #expect(throws: RecoveryKitError(.insufficientGroups, "")) { try SLIP39.combine(Array(kit[2])) }
    }

    @Test("More than the threshold is refused, as SLIP-39 asks for exactly the threshold")
    func moreThanThreshold() throws {
        let kit = try Self.makeKit(.twoLevel, secret: Self.secret(16), seed: "more than threshold")
        #expect(throws: RecoveryKitError(.tooManyMembers, "")) { try SLIP39.combine([kit[0][0]] + kit[1]) }
        #expect(throws: RecoveryKitError(.tooManyGroups, "")) {
            try SLIP39.combine([kit[0][0], kit[1][0], kit[1][1], kit[2][0], kit[2][1], kit[2][2]])
        }
    }

    @Test("The same share twice is a duplicate member index; no shares is empty input")
    func duplicatesAndEmpty() throws {
        let kit = try Self.makeKit(.twoOfThree, secret: Self.secret(16), seed: "duplicates")
        #expect(throws: RecoveryKitError(.duplicateMemberIndex, "")) { try SLIP39.combine([kit[0][1], kit[0][1]]) }
        #expect(throws: RecoveryKitError(.emptyInput, "")) { try SLIP39.combine([]) }
        #expect(throws: RecoveryKitError(.emptyInput, "")) { try SLIP39.combine(mnemonics: []) }
    }

    @Test("Shares of two generated kits never combine", arguments: [true, false])
    func differentKitsNeverCombine(extendable: Bool) throws {
        // The same secret and passphrase: with the extendable flag both kits even share one EMS.
        let secret = Self.secret(16)
        let first = try Self.makeKit(.twoOfThree, secret: secret, extendable: extendable, seed: "kit A")
        let second = try Self.makeKit(.twoOfThree, secret: secret, extendable: extendable, seed: "kit B")
        try #require(first[0][0].identifier != second[0][0].identifier)
        #expect(throws: RecoveryKitError(.mismatchedIdentifier, "")) {
            try SLIP39.combine([first[0][0], second[0][1]])
        }

        let firstTwoLevel = try Self.makeKit(.twoLevel, secret: secret, extendable: extendable, seed: "kit C")
        let secondTwoLevel = try Self.makeKit(.twoLevel, secret: secret, extendable: extendable, seed: "kit D")
        try #require(firstTwoLevel[0][0].identifier != secondTwoLevel[0][0].identifier)
        #expect(throws: RecoveryKitError(.mismatchedIdentifier, "")) {
            try SLIP39.combine([firstTwoLevel[0][0], secondTwoLevel[1][0], secondTwoLevel[1][1]])
        }
    }

    @Test("Kits that share an identifier but differ in a common parameter are told apart")
    func mismatchedCommonParameters() throws {
        // One seed gives one identifier, so only the parameter under test differs.
        let short = try Self.makeKit(.twoOfThree, secret: Self.secret(16), seed: "same identifier")
        let long = try Self.makeKit(.twoOfThree, secret: Self.secret(32), seed: "same identifier")
        let notExtendable = try Self.makeKit(
            .twoOfThree, secret: Self.secret(16), extendable: false, seed: "same identifier")
        try #require(short[0][0].identifier == long[0][0].identifier)
        try #require(short[0][0].identifier == notExtendable[0][0].identifier)
        #expect(throws: RecoveryKitError(.mismatchedShareLength, "")) { try SLIP39.combine([short[0][0], long[0][1]]) }
        #expect(throws: RecoveryKitError(.mismatchedExtendable, "")) {
            try SLIP39.combine([short[0][0], notExtendable[0][1]])
        }
    }

    @Test("Extendable kits of one secret recover it under every passphrase; others only under theirs")
    func extendableFlagSalt() throws {
        let secret = Self.secret(16)
        for extendable in [true, false] {
            let first = try Self.makeKit(.oneOfOne, secret: secret, passphrase: "p", extendable: extendable, seed: "E1")
            let second = try Self.makeKit(
                .oneOfOne, secret: secret, passphrase: "p", extendable: extendable, seed: "E2")
            try #require(first[0][0].identifier != second[0][0].identifier)
            // With ext = 1 the encrypted master secret does not depend on the identifier.
            #expect((first[0][0].value == second[0][0].value) == extendable)
            #expect(try SLIP39.combine(first[0], passphrase: SecureBytes(utf8: "p")) == secret)
            #expect(try SLIP39.combine(second[0], passphrase: SecureBytes(utf8: "p")) == secret)
        }
    }

    @Test("Generation is reproducible from the random source")
    func deterministic() throws {
        let first = try Self.makeKit(.twoLevel, secret: Self.secret(32), seed: "reproducible")
        let second = try Self.makeKit(.twoLevel, secret: Self.secret(32), seed: "reproducible")
        #expect(
            first.flatMap { $0.map { $0.revealedMnemonic() } } == second.flatMap { $0.map { $0.revealedMnemonic() } })
    }

    @Test("The default iteration exponent is 1 and the default flag extendable")
    func defaults() throws {
        let secret = Self.secret(16)
        let kit = try SLIP39.generateShares(
            masterSecret: secret, groupThreshold: 1, groups: [SLIP39.Group(memberThreshold: 1, memberCount: 1)],
            using: DeterministicRandom(seed: Array("defaults".utf8)))
        #expect(kit[0][0].iterationExponent == SLIP39.defaultIterationExponent)
        #expect(SLIP39.defaultIterationExponent == 1)
        #expect(kit[0][0].extendable)
        #expect(try SLIP39.combine(kit[0]) == secret)
        // The system source is the default one.
        let system = try SLIP39.generateShares(
            masterSecret: secret, groupThreshold: 1, groups: [SLIP39.Group(memberThreshold: 2, memberCount: 2)],
            iterationExponent: 0)
        #expect(try SLIP39.combine(system[0]) == secret)
    }
}

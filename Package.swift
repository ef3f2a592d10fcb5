// swift-tools-version:6.1
import PackageDescription

// Upcoming features every target is built with (STYLE.md: one loop, bottom of the manifest).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "share-recovery",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "ShareCrypto", targets: ["ShareCrypto"]),
        .library(name: "ShareRecovery", targets: ["ShareRecovery"]),
        .library(name: "RecoveryKit", targets: ["RecoveryKit"]),
        .executable(name: "share-recovery", targets: ["share-recovery"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // System libraries, found by pkg-config, never vendored.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSecp256k1", pkgConfig: "libsecp256k1", providers: [.apt(["libsecp256k1-dev"])]),
        .systemLibrary(name: "CLibcrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),

        // The only module that imports C.
        .target(name: "ShareCrypto", dependencies: ["CSodium", "CSecp256k1", "CLibcrypto"]),
        // Formats (FORMATS.md §2–§9), resharing, selection, orchestration. No NIO.
        .target(name: "ShareRecovery", dependencies: ["ShareCrypto"]),
        // SLIP-39 paper recovery kits.
        .target(name: "RecoveryKit", dependencies: ["ShareCrypto"]),
        .executableTarget(
            name: "share-recovery",
            dependencies: [
                "ShareRecovery", "RecoveryKit", "ShareCrypto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        .testTarget(name: "ShareCryptoTests", dependencies: ["ShareCrypto"], resources: [.copy("Vectors")]),
        .testTarget(
            name: "ShareRecoveryTests",
            dependencies: ["ShareRecovery", "ShareCrypto"],
            resources: [.copy("Vectors")]
        ),
        .testTarget(name: "RecoveryKitTests", dependencies: ["RecoveryKit", "ShareCrypto"], resources: [.copy("Vectors")]),
        .testTarget(name: "CLITests", dependencies: ["ShareRecovery", "ShareCrypto"]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}

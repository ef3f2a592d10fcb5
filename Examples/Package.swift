// swift-tools-version:6.2
import Foundation
import PackageDescription

// Small programs that link share-recovery the way a wallet service does: by depending on the
// package (here by path) and importing only its public library products.

// The README's "Use it as a library" snippet, which scripts/examples.sh writes to
// Sources/readme-snippet/main.swift before it builds this package (CI), so a README whose snippet no
// longer compiles fails. Never committed; declared only once written, so `swift run` works without it.
let readmeSnippet = Context.packageDirectory + "/Sources/readme-snippet/main.swift"
let readmeSnippetTargets: [Target] =
    FileManager.default.fileExists(atPath: readmeSnippet)
    ? [
        .executableTarget(
            name: "readme-snippet",
            dependencies: [
                .product(name: "ShareRecovery", package: "share-recovery"),
                .product(name: "ShareCrypto", package: "share-recovery"),
            ])
    ] : []

let package = Package(
    name: "share-recovery-examples",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "share-recovery", path: "..")
    ],
    targets: [
        // Terminal progress and error printing shared by the programs; no share-recovery logic.
        .target(name: "ExampleSupport", dependencies: [.product(name: "ShareRecovery", package: "share-recovery")]),
        .executableTarget(
            name: "password-recovery",
            dependencies: [
                "ExampleSupport",
                .product(name: "ShareRecovery", package: "share-recovery"),
                .product(name: "ShareCrypto", package: "share-recovery"),
            ]),
        .executableTarget(
            name: "server-recovery",
            dependencies: [
                "ExampleSupport",
                .product(name: "ShareRecovery", package: "share-recovery"),
                .product(name: "ShareCrypto", package: "share-recovery"),
                .product(name: "ShareRecoveryHTTP", package: "share-recovery"),
            ]),
        .executableTarget(
            name: "eip1559-transfer",
            dependencies: [
                "ExampleSupport",
                .product(name: "ShareRecovery", package: "share-recovery"),
                .product(name: "ShareCrypto", package: "share-recovery"),
            ]),
    ] + readmeSnippetTargets,
    swiftLanguageModes: [.v6]
)

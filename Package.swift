// swift-tools-version:6.2
import PackageDescription

// Upcoming features every target is built with (one loop, at the bottom of the manifest).
// CI (scripts/test.sh) sets SHARE_RECOVERY_WERROR=1: warnings in our own targets are errors there,
// while dependencies keep their own warning settings.
let warningsAreErrors = Context.environment["SHARE_RECOVERY_WERROR"] == "1"
// scripts/sanitizers.sh sets SHARE_RECOVERY_SANITIZE=address or thread: our own targets are compiled
// and linked with that sanitizer in the plain scratch path, next to the dependencies the plain build
// already compiled, so a sanitizer pass recompiles our code only (docs/sanitizers.md says what that
// leaves out). `swift build --sanitize` would recompile every dependency, BoringSSL included.
let sanitizer = Context.environment["SHARE_RECOVERY_SANITIZE"].flatMap {
    ["address", "thread"].contains($0) ? $0 : nil
}
let strictSettings: [SwiftSetting] =
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ] + (warningsAreErrors ? [.treatAllWarnings(as: .error)] : [])
    + (sanitizer.map { [.unsafeFlags(["-sanitize=\($0)"])] } ?? [])

let package = Package(
    name: "share-recovery",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ShareCrypto", targets: ["ShareCrypto"]),
        .library(name: "ShareRecovery", targets: ["ShareRecovery"]),
        .library(name: "RecoveryKit", targets: ["RecoveryKit"]),
        .library(name: "ShareRecoveryHTTP", targets: ["ShareRecoveryHTTP"]),
        .library(name: "ShareRecoveryServer", targets: ["ShareRecoveryServer"]),
        .executable(name: "share-recovery", targets: ["share-recovery"]),
        .executable(name: "recovery-bench", targets: ["recovery-bench"]),
    ],
    // Opt-in build features (`swift build --traits OTLP`); the default build enables none of them.
    traits: [
        .trait(
            name: "OTLP",
            description:
                "serve exports its trace spans with swift-otel's OTLP/HTTP exporter, configured by the OTEL_* variables"
        )
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // The server's /metrics: the metrics API, and its Prometheus text exposition.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Trace context (docs/server.md: Tracing): the tracing API, W3C `traceparent` parsing, and the OTLP
        // exporter, which only the `OTLP` trait builds (its OTLP/HTTP exporter alone: no gRPC).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-w3c-trace-context", from: "1.0.0"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // `swift package generate-documentation` (scripts/docs.sh); a plugin, linked into no target.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // System libraries, found by pkg-config, never vendored.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSecp256k1", pkgConfig: "libsecp256k1", providers: [.apt(["libsecp256k1-dev"])]),
        .systemLibrary(name: "CLibcrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // PKCS#11 headers, for the server's master key held by a token (docs/server.md, "Master key on a
        // PKCS#11 token"); the module is loaded at run time. The one C the server touches.
        .systemLibrary(name: "CPKCS11", pkgConfig: "p11-kit-1", providers: [.apt(["libp11-kit-dev"])]),

        // The only module that imports C.
        .target(name: "ShareCrypto", dependencies: ["CSodium", "CSecp256k1", "CLibcrypto"]),
        // Formats (docs/formats.md §2–§9), resharing, selection, orchestration. No NIO.
        .target(name: "ShareRecovery", dependencies: ["ShareCrypto"]),
        // The published test vectors (docs/formats.md §9): generation and verification, for the CLI's
        // `vectors` command and the tests; not part of the library a wallet service links.
        .target(name: "ShareRecoveryVectors", dependencies: ["ShareRecovery", "ShareCrypto"]),
        // SLIP-39 paper recovery kits.
        .target(name: "RecoveryKit", dependencies: ["ShareCrypto", "ShareRecovery"]),
        // Network sources and the HTTP custodian client (AsyncHTTPClient): NIO stays out of ShareRecovery.
        .target(
            name: "ShareRecoveryHTTP",
            dependencies: [
                "ShareRecovery", "ShareCrypto",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
            ]
        ),
        // The reference server: integrator API, custodian webhooks and recovery endpoints.
        .target(
            name: "ShareRecoveryServer",
            dependencies: [
                "ShareRecovery", "ShareCrypto", "ShareRecoveryHTTP", "CPKCS11",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
                // `swift build --traits OTLP`: `serve` exports spans over OTLP/HTTP (docs/server.md: Tracing).
                .product(name: "OTel", package: "swift-otel", condition: .when(traits: ["OTLP"])),
            ]
        ),
        .executableTarget(
            name: "share-recovery",
            dependencies: [
                "ShareRecovery", "RecoveryKit", "ShareCrypto", "ShareRecoveryHTTP", "ShareRecoveryServer",
                "ShareRecoveryVectors",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The standalone timing executable (docs/benchmarks.md).
        .executableTarget(
            name: "recovery-bench",
            dependencies: [
                "ShareRecovery", "ShareCrypto", "ShareRecoveryHTTP", "ShareRecoveryServer",
                // Not linked: the server the load runs against is this binary, started as a child
                // process (Benchmarks/RecoveryBench/ServerProcess.swift); the dependency builds it.
                "share-recovery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/RecoveryBench"
        ),
        // A child process for the crash tests: stores generations until it is killed.
        .executableTarget(
            name: "share-store-harness", dependencies: ["ShareRecovery", "ShareCrypto"],
            path: "Tests/Harness/ShareStoreHarness"),

        // Helpers every test target may share (vector files and their formats, an engine world in
        // process, a status log, a seeded generator); linked into tests only.
        .target(name: "TestSupport", dependencies: ["ShareCrypto", "ShareRecovery"], path: "Tests/TestSupport"),
        .testTarget(
            name: "ShareCryptoTests", dependencies: ["ShareCrypto", "TestSupport"], resources: [.copy("Vectors")]),
        .testTarget(
            name: "ShareRecoveryTests",
            dependencies: [
                "ShareRecovery", "ShareCrypto", "ShareRecoveryVectors", "TestSupport", "share-store-harness",
            ],
            resources: [.copy("Vectors")]
        ),
        .testTarget(
            name: "RecoveryKitTests", dependencies: ["RecoveryKit", "ShareCrypto", "ShareRecovery", "TestSupport"],
            resources: [.copy("Vectors")]),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "ShareRecovery", "ShareCrypto", "TestSupport", "share-recovery", "recovery-bench",
                // The audit tests write and damage a server database directly.
                "ShareRecoveryServer", .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "ShareRecoveryHTTPTests",
            dependencies: [
                "ShareRecoveryHTTP", "ShareRecovery", "ShareCrypto", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "ShareRecoveryServerTests",
            dependencies: [
                "ShareRecoveryServer", "ShareRecoveryHTTP", "ShareRecovery", "ShareCrypto", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            resources: [.copy("Resources")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// MARK: Fuzz targets (docs/fuzzing.md) — BEGIN
// Declared only with SHARE_RECOVERY_FUZZ=1, so normal builds and `swift test` never see them.
// scripts/fuzz.sh builds them with `-sanitize=fuzzer,address`; each `main` hands control to libFuzzer.
if Context.environment["SHARE_RECOVERY_FUZZ"] == "1" {
    let fuzzTargets: [(name: String, path: String, dependencies: [Target.Dependency])] = [
        ("fuzz-cipher-text", "CipherText", ["ShareRecovery", "ShareCrypto"]),
        ("fuzz-share-record", "ShareRecord", ["ShareRecovery", "ShareCrypto"]),
        ("fuzz-custodian-share", "CustodianShare", ["ShareRecovery", "ShareCrypto"]),
        ("fuzz-slip39", "SLIP39Mnemonic", ["RecoveryKit", "ShareCrypto"]),
        ("fuzz-protocol-messages", "ProtocolMessages", ["ShareRecovery", "ShareCrypto"]),
        ("fuzz-ecdsa-setup-round1", "ECDSASetupRound1", ["ShareCrypto"]),
        ("fuzz-ecdsa-setup-round2", "ECDSASetupRound2", ["ShareCrypto"]),
        ("fuzz-ecdsa-signing-round1", "ECDSASigningRound1", ["ShareCrypto"]),
        ("fuzz-ecdsa-signing-round2", "ECDSASigningRound2", ["ShareCrypto"]),
        ("fuzz-ecdsa-signing-round3", "ECDSASigningRound3", ["ShareCrypto"]),
        ("fuzz-ecdsa-pair-setup", "ECDSAPairSetup", ["ShareRecovery", "ShareCrypto"]),
        ("fuzz-ecdsa-round-state", "ECDSARoundState", ["ShareRecovery", "ShareCrypto"]),
        ("fuzz-ecdsa-signature", "ECDSASignature", ["ShareCrypto"]),
        (
            "fuzz-server-requests", "ServerRequests",
            [
                "ShareRecoveryServer", "ShareRecovery", "ShareCrypto",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
    ]
    package.targets.append(.target(name: "FuzzSupport", path: "Tests/Fuzz/Support"))
    for fuzz in fuzzTargets {
        package.targets.append(
            .executableTarget(
                name: fuzz.name, dependencies: ["FuzzSupport"] + fuzz.dependencies, path: "Tests/Fuzz/" + fuzz.path))
        package.products.append(.executable(name: fuzz.name, targets: [fuzz.name]))
    }
}
// MARK: Fuzz targets — END

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
    if let sanitizer {
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=\(sanitizer)"])]
    }
}

// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Coffer",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CofferStorage", targets: ["CofferStorage"]),
        .library(name: "CofferStorageTesting", targets: ["CofferStorageTesting"]),
        .library(name: "CofferAuthenticatorTesting", targets: ["CofferAuthenticatorTesting"]),
        .library(name: "CofferAuthenticator", targets: ["CofferAuthenticator"]),
        .library(name: "CofferMFACommons", targets: ["CofferMFACommons"]),
        .library(name: "CofferMFATransfer", targets: ["CofferMFATransfer"]),
        .library(name: "CofferOath", targets: ["CofferOath"]),
        .library(name: "CofferPush", targets: ["CofferPush"]),
        .library(name: "CofferOrchestrate", targets: ["CofferOrchestrate"]),
        .library(name: "CofferOidc", targets: ["CofferOidc"]),
        .library(name: "CofferPostgres", targets: ["CofferPostgres"]),
        .library(name: "CofferPostgresAuthenticator", targets: ["CofferPostgresAuthenticator"]),
        .library(name: "CofferAuthMigration", targets: ["CofferAuthMigration"]),
        .executable(name: "coffer", targets: ["coffer"]),
        .executable(name: "coffer-session", targets: ["coffer-session"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
    ],
    targets: [
        .target(
            name: "CLibSecret",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        .target(
            name: "CQRCode",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        .target(name: "CProcessHardening"),
        .target(
            name: "CTPM",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        .target(name: "CKernelKeyring"),
        .target(
            name: "CofferStorage",
            dependencies: [
                "CLibSecret",
                "CTPM",
                "CKernelKeyring",
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The engine both authenticator generations share (OATH codes, base32, URI reading,
        // field sealing): no product, `package` access, never API of its own.
        .target(
            name: "CofferMFAEngine",
            dependencies: [
                "CofferStorage",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "CofferMFACommons",
            dependencies: [
                "CofferMFAEngine",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Other authenticators' exports, the Aegis codec, the exporters and QR codes: read into
        // and written from generation-neutral entries, which each generation maps onto its models.
        .target(
            name: "CofferMFATransfer",
            dependencies: [
                "CofferStorage",
                "CofferMFAEngine",
                "CQRCode",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "CofferOath",
            dependencies: [
                "CofferMFACommons",
                "CofferMFATransfer",
                "CofferMFAEngine",
                "CofferStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "CofferPush",
            dependencies: [
                "CofferMFACommons",
                "CofferMFAEngine",
                "CofferStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "CofferAuthenticator",
            dependencies: [
                "CofferStorage",
                "CofferMFAEngine",
                "CofferMFATransfer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Ping's Orchestrate pieces the Oidc module needs: HttpClient and Request on URLSession.
        .target(
            name: "CofferOrchestrate",
            dependencies: ["CofferMFACommons", "CofferStorage"],
            // FoundationNetworking is libcurl underneath: a build that links the Swift runtime
            // statically (scripts/install, the benchmarks) must name it (libcurl4-openssl-dev).
            linkerSettings: [.linkedLibrary("curl", .when(platforms: [.linux]))]
        ),
        // Ping's Oidc module: OidcClientConfig, OidcClient, OidcUser, agents, on Coffer's Token storage.
        .target(
            name: "CofferOidc",
            dependencies: [
                "CofferOrchestrate", "CofferMFACommons", "CofferStorage",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        // PostgreSQL's core: the pool, the key ring, the schema and PostgresStorage. A server that
        // keeps only tokens builds no authenticator.
        .target(
            name: "CofferPostgres",
            dependencies: [
                "CofferStorage",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Both authenticator generations on PostgreSQL's core.
        .target(
            name: "CofferPostgresAuthenticator",
            dependencies: [
                "CofferPostgres",
                "CofferStorage",
                "CofferMFAEngine",
                "CofferMFACommons",
                "CofferAuthenticator",
                "CofferOath",
                "CofferPush",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "CofferAuthMigration",
            dependencies: ["CofferAuthenticator", "CofferMFACommons", "CofferOath", "CofferPush"]
        ),
        // What a user testing their own `Storage` needs, and nothing more.
        .target(
            name: "CofferStorageTesting",
            dependencies: ["CofferStorage"]
        ),
        // The authenticator kits: a StorageClient, an OathStorage, a PushStorage of your own.
        .target(
            name: "CofferAuthenticatorTesting",
            dependencies: ["CofferStorageTesting", "CofferAuthenticator", "CofferOath", "CofferPush"]
        ),
        // The checks the fuzzers apply (Fuzz/ builds the same file into its targets); the suite
        // replays every saved crasher through it.
        .target(
            name: "CofferFuzzHarness",
            dependencies: ["CofferStorage", "CofferAuthenticator", "CofferMFATransfer"],
            path: "Fuzz/Sources/FuzzHarness"
        ),
        // The coffer tool: its commands and what they share (no product, `package` access). The
        // OpenID Connect commands are declared here and done by `coffer-session`, so that
        // `coffer` links no FoundationNetworking (libcurl and the 30 libraries it loads).
        .target(
            name: "CofferTool",
            dependencies: [
                "CProcessHardening",
                "CofferStorage",
                "CofferMFAEngine",
                "CofferAuthenticator",
                "CofferMFATransfer",
                "CofferPostgres",
                "CofferPostgresAuthenticator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "coffer",
            dependencies: ["CofferTool"]
        ),
        // What `coffer login`, `token`, `logout`, `sessions` and `doctor`'s session check run:
        // the same commands, with the work that needs CofferOidc. Installed beside coffer
        // (libexec/coffer/coffer-session), which replaces itself with it for those commands.
        .executableTarget(
            name: "coffer-session",
            dependencies: [
                "CofferTool",
                "CofferOidc",
                "CofferStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "coffer-stress",
            dependencies: ["CofferStorage", "CofferAuthenticator", "CofferOath", "CofferPush", "CofferOrchestrate", "CofferPostgres", "CofferPostgresAuthenticator"],
            path: "Tests/Helpers/StorageStress"
        ),
        .target(
            name: "TestSupport",
            dependencies: ["CofferStorage", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "CofferStorageTests",
            dependencies: ["CofferStorage", "CofferStorageTesting", "TestSupport"]
        ),
        .testTarget(
            name: "CofferAuthenticatorTests",
            dependencies: [
                "CofferAuthenticator", "CofferMFAEngine", "CofferStorage", "CofferStorageTesting", "CofferAuthenticatorTesting", "CofferFuzzHarness", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The tool, run as a process: every command, its output, statuses, prompts and files.
        .testTarget(
            name: "CofferToolTests",
            dependencies: [
                "CofferAuthenticator", "CofferStorage", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The format readers, the Aegis codec and the exporters, beside their fixtures.
        .testTarget(
            name: "CofferMFATransferTests",
            dependencies: ["CofferMFATransfer", "CofferAuthenticator", "CofferStorage", "TestSupport"],
            exclude: ["Fixtures"]
        ),
        // The engine and the commons beside their own vectors and rules.
        .testTarget(
            name: "CofferMFAEngineTests",
            dependencies: ["CofferMFAEngine", "CofferStorage", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "CofferMFACommonsTests",
            dependencies: ["CofferMFACommons"]
        ),
        .testTarget(
            name: "CofferOathTests",
            dependencies: [
                "CofferMFAEngine",
                "CofferOath", "CofferPush", "CofferMFACommons", "CofferMFATransfer", "CofferAuthenticator", "CofferStorage", "CofferStorageTesting", "CofferAuthenticatorTesting", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CofferOidcTests",
            dependencies: [
                "CofferOidc", "CofferOrchestrate", "CofferMFACommons", "CofferStorage", "CofferPostgres", "TestSupport",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "CofferAuthMigrationTests",
            dependencies: ["CofferAuthMigration", "CofferAuthenticator", "CofferOath", "CofferPush", "CofferMFACommons", "CofferStorage", "TestSupport"]
        ),
        .testTarget(
            name: "CofferPushTests",
            dependencies: ["CofferPush", "CofferMFACommons", "CofferMFAEngine", "CofferStorage", "CofferStorageTesting", "CofferAuthenticatorTesting", "TestSupport"]
        ),
        .testTarget(
            name: "CofferPostgresTests",
            dependencies: [
                "CofferPostgres", "CofferPostgresAuthenticator", "CofferAuthenticator", "CofferAuthMigration", "CofferOath", "CofferPush", "CofferStorage",
                "CofferStorageTesting", "CofferAuthenticatorTesting", "TestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "CofferBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Coffer", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "CofferBench",
            dependencies: [
                .product(name: "CofferStorage", package: "Coffer"),
                .product(name: "CofferAuthenticator", package: "Coffer"),
                .product(name: "CofferPostgres", package: "Coffer"),
                .product(name: "CofferPostgresAuthenticator", package: "Coffer"),
                .product(name: "CofferOath", package: "Coffer"),
                .product(name: "CofferPush", package: "Coffer"),
                .product(name: "CofferOidc", package: "Coffer"),
                .product(name: "CofferOrchestrate", package: "Coffer"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

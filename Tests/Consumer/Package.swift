// swift-tools-version:6.0
// An app that depends on Coffer the way the README says, by version, and whose own modules are
// named Storage and Authenticator, as an app's often are. scripts/check-consumer copies this
// package, points it at a clone of Coffer tagged with its version, builds it and runs it.
import PackageDescription

let coffer = "COFFER_URL"  // replaced by scripts/check-consumer
let version: Version = "COFFER_VERSION"

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: coffer, from: version),
    ],
    targets: [
        .target(name: "Storage", dependencies: [.product(name: "CofferStorage", package: "coffer")]),
        .target(name: "Authenticator", dependencies: [.product(name: "CofferAuthenticator", package: "coffer")]),
        .executableTarget(name: "App", dependencies: [
            "Storage", "Authenticator",
            .product(name: "CofferPostgres", package: "coffer"),
            .product(name: "CofferStorageTesting", package: "coffer"),
        ]),
    ]
)

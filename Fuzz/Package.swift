// swift-tools-version: 6.1
// libFuzzer targets for Coffer's parsers of untrusted input (issue 6, R4). Build and run them
// with scripts/fuzz TARGET SECONDS; each target's inputs that ever crashed live in
// Fuzz/Crashers/TARGET and are replayed by the normal test suite (FuzzRegressionTests).
import PackageDescription

// Each target only defines the entry point SwiftPM links (<Target>_main), which hands over to
// libFuzzer through FuzzDriver.
let fuzzTarget: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "CofferFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Coffer", path: ".."),
    ],
    targets: [
        .target(
            name: "FuzzDriver",
            dependencies: ["FuzzHarness"]),
        // The checks each target applies; the main package builds the same file (CofferFuzzHarness)
        // to replay saved crashers in its suite.
        .target(
            name: "FuzzHarness",
            dependencies: [.product(name: "CofferAuthenticator", package: "Coffer"), .product(name: "CofferStorage", package: "Coffer")]),
        .executableTarget(
            name: "FuzzURI",
            dependencies: ["FuzzDriver", "FuzzHarness"],
            swiftSettings: fuzzTarget),
        .executableTarget(
            name: "FuzzEnvelope",
            dependencies: ["FuzzDriver", "FuzzHarness"],
            swiftSettings: fuzzTarget),
        .executableTarget(
            name: "FuzzImport",
            dependencies: ["FuzzDriver", "FuzzHarness"],
            swiftSettings: fuzzTarget),
        .executableTarget(
            name: "FuzzAegis",
            dependencies: ["FuzzDriver", "FuzzHarness"],
            swiftSettings: fuzzTarget),
    ],
    swiftLanguageModes: [.v6]
)

import Foundation

/// Real exports of other authenticator apps (made with each app, secrets of test accounts), kept
/// in `Tests/CofferMFATransferTests/Fixtures/Imports`: the readers' tests and both generations'
/// import tests read the same files.
public enum ImportFixtures {
    /// The folder that holds them.
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CofferMFATransferTests/Fixtures/Imports")

    /// The bytes of the fixture `name` (`"andotp.json"`).
    public static func data(_ name: String) throws -> Data {
        try Data(contentsOf: folder.appendingPathComponent(name))
    }
}

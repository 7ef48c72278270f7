@testable import CofferStorage
import Foundation
import TestSupport
import Testing

/// An item read from the keyring, printed, debug-printed or dumped, never shows its secret.
@Suite("SecretService.Item")
struct SecretServiceItemTests {
    @Test("description, debugDescription and dump show the label and hide the secret")
    func redaction() {
        let item = SecretService.Item(attributes: ["service": "com.example"], label: "Example key", isLocked: false,
                                      secret: Data("KEYRING-SECRET".utf8))
        for text in renderings(of: item) {
            #expect(!text.contains("KEYRING-SECRET") && !text.contains("bytes"), "\(text)")  // Data dumps its bytes
            #expect(text.contains("Example key") && text.contains("<redacted>"), "\(text)")
        }
    }
}

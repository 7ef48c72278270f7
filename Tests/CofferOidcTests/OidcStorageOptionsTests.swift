import CofferOidc
import CofferStorage
import Foundation
import TestSupport
import Testing

/// The spec's `module(Oidc) { storage { fileName = …; keyAlias = …; strongBoxPreferred = …;
/// cacheStrategy = … } }` on OidcClientConfig.
@Suite("OidcClientConfig: the spec's storage options")
struct OidcStorageOptionsTests {
    @Test("the article's example: storage { } makes an EncryptedFileStorage: com.pingidentity.sdk.v1.tokens by default, the options as given")
    func androidOptions() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let config = OidcClientConfig()
        config.storage { file in
            file.directory = temporary.url
        }
        let byDefault = try #require(config.storage as? EncryptedFileStorage<Token>)
        #expect(byDefault.fileURL.lastPathComponent == "com.pingidentity.sdk.v1.tokens")

        let folder = temporary.url
        config.storage { file in
            file.fileName = "myOidcTokens"
            file.keyAlias = "com.example.v1.KEYS"
            file.directory = folder
            file.cacheStrategy = .cacheOnFailure
        }
        let chosen = try #require(config.storage as? EncryptedFileStorage<Token>)
        #expect(chosen.fileURL.lastPathComponent == "myOidcTokens")
        #expect(chosen.encryptor.keyAlias == "com.example.v1.KEYS")
        #expect(chosen.cacheStrategy == .cacheOnFailure)
        try await config.storage.save(item: Token(accessToken: "a-token-value", expiresIn: 60))
        #expect(!(try Data(contentsOf: chosen.fileURL)).contains(Data("a-token-value".utf8)))
    }
}

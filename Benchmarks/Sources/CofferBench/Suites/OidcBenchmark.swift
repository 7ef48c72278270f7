import CofferOidc
import CofferOrchestrate
import CofferStorage
import Foundation

/// P12: what `OidcClient.token()` adds to the storage's own `get()` when the stored token is
/// valid (the path every API call of an app takes): the session's flight, the discovery check and
/// the expiry test. No network: the discovery document is given, as one read before would leave it.
struct OidcBenchmark {
    var directory: URL
    var plan: SamplePlan
    var cachedPlan: SamplePlan

    func run(into report: Report) async throws {
        let keyStore = FileKeyStore(directory: directory.appendingPathComponent("keys"))
        let discovery = Data("""
            {"issuer": "https://id.example", "authorization_endpoint": "https://id.example/authorize",
             "token_endpoint": "https://id.example/token", "userinfo_endpoint": "https://id.example/userinfo"}
            """.utf8)
        for (strategy, samples) in [(CacheStrategy.cache, cachedPlan), (CacheStrategy.noCache, plan)] {
            let storage = EncryptedFileStorage<Token>(fileName: "session-\(strategy)", directory: directory, keyStore: keyStore, cacheStrategy: strategy)
            try await storage.save(item: Token(accessToken: "access", tokenType: "Bearer", scope: "openid", expiresIn: 3600, refreshToken: "refresh", idToken: nil))
            let config = OidcClientConfig()
            config.clientId = "bench"
            config.storage = storage
            config.httpClient = HttpClient()
            config.openId = try JSONDecoder().decode(OpenIdConfiguration.self, from: discovery)
            let client = OidcClient(config: config)
            // The reference reads the storage as the client holds it and as a Ping app reads
            // `config.storage`: through `StorageDelegate<Token>`, whose open `get()` runs generic
            // code (what every `get()` ran before P4's specialised path existed).
            let held = HeldStorage(storage)
            let timings = try await measureAlternating(samples, subject: { _ in
                guard case .success = await client.token() else { throw BenchFailure("token() failed") }
            }, reference: { _ in
                guard try await held.storage.get() != nil else { throw BenchFailure("the stored token vanished") }
            })
            report.add(Row(id: "P12", measurement: "OidcClient.token(), valid token (\(strategy))", coffer: timings.subject,
                           referenceName: "get() through StorageDelegate<Token>", reference: timings.reference, target: .ratioAtMost(1.2)))
            if strategy == .cache {
                // Beside the storage called on its own final type, whose get() the compiler inlines
                // into this loop: what an async call to token() costs on top of that.
                let inlined = try await measureAlternating(samples, subject: { _ in
                    guard case .success = await client.token() else { throw BenchFailure("token() failed") }
                }, reference: { _ in
                    guard try await storage.get() != nil else { throw BenchFailure("the stored token vanished") }
                })
                report.add(Row(id: "P12", measurement: "OidcClient.token(), valid token (\(strategy))", coffer: inlined.subject,
                               referenceName: "get() on EncryptedFileStorage<Token>", reference: inlined.reference,
                               note: "an async call into the client beside an inlined read; no target"))
            }
        }
    }
}

/// A storage as a client holds it: a `StorageDelegate<Token>` in a mutable property, so the
/// compiler cannot know its final class and calls the open `get()`.
final class HeldStorage: @unchecked Sendable {
    // @unchecked Sendable: set once here and only read while the benchmark runs.
    var storage: StorageDelegate<Token>

    init(_ storage: StorageDelegate<Token>) { self.storage = storage }
}

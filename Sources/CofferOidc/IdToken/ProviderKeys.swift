import CofferOrchestrate
import Foundation
import JWTKit
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A provider's signing keys (its JWKS), fetched from `jwks_uri` when first needed and again
/// when a token names a key not seen yet (the provider rotated its keys) — at most once a
/// minute, so forged tokens naming random keys cannot make Coffer hammer the provider.
final class ProviderKeys: Sendable {
    private struct Fetched: Sendable {
        let keys: JWTKeyCollection
        let identifiers: Set<String>
        let algorithms: [String: String]
        let at: ContinuousClock.Instant
    }

    private let fetched = Mutex<Fetched?>(nil)
    /// The largest key set read.
    static let sizeLimit = 1_048_576

    /// The keys, with `kid` among them when the provider has it.
    func keys(for kid: String?, config: OidcClientConfig) async throws(IdTokenError) -> (JWTKeyCollection, algorithm: String?) {
        if let current = fetched.withLock({ $0 }) {
            let known = kid.map { current.identifiers.contains($0) } ?? true
            if known || ContinuousClock.now - current.at < .seconds(60) {
                return (current.keys, kid.flatMap { current.algorithms[$0] })
            }
        }
        let fresh = try await fetch(config)
        fetched.withLock { $0 = fresh }
        return (fresh.keys, kid.flatMap { fresh.algorithms[$0] })
    }

    /// Keys given rather than fetched (a test's, or a provider's pinned set).
    init(keySet: JWKS) async throws(IdTokenError) {
        let loaded = try await Self.load(keySet)
        fetched.withLock { $0 = loaded }
    }

    /// Keys fetched when first needed.
    init() {}

    private static func load(_ keySet: JWKS) async throws(IdTokenError) -> Fetched {
        var set = keySet
        // Keys without an id (a provider with one key) get one here; the first is the default.
        for index in set.keys.indices where set.keys[index].keyIdentifier == nil {
            set.keys[index].keyIdentifier = JWKIdentifier(string: "coffer-unnamed-\(index)")
        }
        let keys = JWTKeyCollection()
        var identifiers = Set<String>(), algorithms: [String: String] = [:]
        for key in set.keys {
            do {
                try await keys.add(jwk: key)
            } catch {
                continue
            }
            if let id = key.keyIdentifier?.string {
                identifiers.insert(id)
                algorithms[id] = key.algorithm?.rawValue
            }
        }
        guard !identifiers.isEmpty else { throw .keys("the key set holds no public key") }
        return Fetched(keys: keys, identifiers: identifiers, algorithms: algorithms, at: .now)
    }

    /// The signing keys of a JWKS document, key by key (RFC 7517 §5): a key of a kind Coffer
    /// cannot use, or one published for encryption, is left out, not a reason to refuse the set.
    static func keySet(from data: Data) throws(IdTokenError) -> JWKS {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let entries = object["keys"] as? [Any] else { throw .keys("the key set is not a JWKS") }
        return JWKS(keys: entries.compactMap { entry -> JWK? in
            guard let fields = entry as? [String: Any], (fields["use"] as? String ?? "sig") == "sig",
                  let json = try? JSONSerialization.data(withJSONObject: fields) else { return nil }
            return try? JSONDecoder().decode(JWK.self, from: json)
        })
    }

    private func fetch(_ config: OidcClientConfig) async throws(IdTokenError) -> Fetched {
        do {
            let url = try config.endpoint(\.jwksUri, named: "jwks_uri")
            guard let httpClient = config.httpClient else { throw OidcError.networkError(message: "HTTP client not found") }
            let request = Request()
            request.url(url)
            let (data, response) = try await httpClient.sendRequest(request: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else { throw IdTokenError.keys("the provider answered \(status)") }
            guard data.count <= Self.sizeLimit else { throw IdTokenError.keys("the key set is larger than 1 MiB") }
            return try await Self.load(try Self.keySet(from: data))
        } catch let error as IdTokenError {
            throw error
        } catch let error as OidcError {
            throw .keys(error.errorMessage)
        } catch {
            throw .keys("the key set cannot be read")
        }
    }
}

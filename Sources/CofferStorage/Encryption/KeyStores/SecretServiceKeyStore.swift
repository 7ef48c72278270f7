import Foundation

/// A key store that keeps each alias's keys as one item in the OS keyring (Secret Service).
///
/// The item has the attributes `service` (default `org.coffer.keys`) and `alias`, and holds the
/// alias's ``KeyRing``. Creating and rotating keys hold the keyring's lock (``KeyringLock``,
/// named `keys`), so every process of the user that reaches this keyring, whatever its
/// environment, agrees on one key per alias.
public struct SecretServiceKeyStore: KeyRingStore {
    /// The `service` attribute of the key items.
    public let service: String
    /// The keyring connection.
    public let secretService: SecretService

    /// Creates a key store.
    ///
    /// - Parameters:
    ///   - service: The `service` attribute of the key items. Defaults to `org.coffer.keys`.
    ///   - timeout: How long one keyring call may take.
    public init(service: String = "org.coffer.keys", timeout: Duration = SecretService.defaultTimeout) {
        self.service = service
        self.secretService = SecretService(timeout: timeout)
    }

    public func primaryKey(for alias: String) async throws -> VersionedKey? {
        try await ring(alias)?.primary
    }

    public func key(for alias: String, id: UInt32) async throws -> VersionedKey? {
        try await ring(alias)?.key(id: id)
    }

    @discardableResult
    public func createKey(for alias: String) async throws -> VersionedKey {
        try await modify(alias, KeyRing.creatingKey(in:))
    }

    @discardableResult
    public func rotateKey(for alias: String) async throws -> VersionedKey {
        try await modify(alias, KeyRing.rotatingKey(in:))
    }

    public func keyRing(for alias: String) async throws -> KeyRing? {
        try await ring(alias)
    }

    public func insertKeyRing(_ ring: KeyRing, for alias: String) async throws {
        let location = location(alias)
        _ = try await modify(alias) { existing in
            guard existing == nil else { throw KeyStoreError.alreadyExists(alias: alias, location: location) }
            return (ring, ring.primary)
        }
    }

    public func deleteKeys(for alias: String) async throws {
        try Self.check(alias)
        try await secretService.clear(attributes(alias))
    }

    // MARK: - Private

    private func attributes(_ alias: String) -> [String: String] { ["service": service, "alias": alias] }

    private func location(_ alias: String) -> String { "keyring item (service \(service), alias \(alias))" }

    private static func check(_ alias: String) throws(KeyStoreError) {
        if alias.isEmpty { throw .invalidAlias(alias, reason: "it is empty") }
    }

    private func ring(_ alias: String) async throws -> KeyRing? {
        try Self.check(alias)
        let items = try await secretService.search(attributes(alias), loadLabels: false)
        return try decode(items, alias: alias)
    }

    private func decode(_ items: [SecretService.Item], alias: String) throws -> KeyRing? {
        guard let item = items.first else { return nil }
        guard items.count == 1 else { throw KeychainError.ambiguous(attributes: attributes(alias), count: items.count) }
        guard !item.isLocked else { throw KeychainError.locked }
        guard let secret = item.secret else {
            throw KeyStoreError.corrupted(alias: alias, location: location(alias), reason: "the item has no secret")
        }
        do {
            return try KeyRing(serialized: secret)
        } catch {
            throw KeyStoreError.corrupted(alias: alias, location: location(alias), reason: error.reason)
        }
    }

    /// Reads the ring, lets `change` decide, and stores the new ring, all on one keyring thread
    /// under the cross-process lock.
    private func modify(
        _ alias: String, _ change: @escaping @Sendable (KeyRing?) throws -> (KeyRing?, VersionedKey)
    ) async throws -> VersionedKey {
        try Self.check(alias)
        let attributes = attributes(alias)
        let label = "Coffer encryption keys: \(alias)"
        // Waiting for the lock blocks no thread; once held, it is released when the keyring calls
        // have returned (even if this caller was answered `.timedOut` before).
        let held = try await KeyringLock.named("keys", timeout: secretService.timeout).exclusive()
        let outcome: Result<VersionedKey, any Error> = try await secretService.perform { calls throws(SecretCallError) in
            defer { held.release() }
            do {
                let ring = try self.decode(try calls.search(attributes, loadLabels: false), alias: alias)
                let (newRing, key) = try change(ring)
                if let newRing {
                    try calls.store(newRing.serialized(), attributes: attributes, label: label, contentType: "application/json")
                }
                return .success(key)
            } catch let error as SecretCallError {
                throw error
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

}

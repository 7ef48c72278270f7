import Foundation
import CofferStorage

/// Seals single fields of a record (a secret, a challenge) with the client's encryptor, each
/// bound to where it belongs (`mechanism/<uuid>/secret`, …), so a sealed value copied to another
/// row or column fails to open instead of yielding another record's secret.
///
/// Async for servers (``sealing(_:)``, ``opening(_:)``); the synchronous forms, for the
/// ``StorageClient`` protocol, make one trip to the async encryptor for a whole batch.
package struct FieldSealer: Sendable {
    package let encryptor: any Encryptor

    package init(encryptor: any Encryptor) {
        self.encryptor = encryptor
    }

    package func seal(_ text: String, for field: String) throws -> Data {
        try seal([(text, field)])[0]
    }

    package func open(_ sealed: Data, for field: String) throws -> String {
        try open([(sealed, field)])[0].get()
    }

    /// Seals many fields with one trip to the (async) encryptor: the trip is a task of its own,
    /// which costs more than sealing a field.
    package func seal(_ fields: [(text: String, field: String)]) throws -> [Data] {
        try SyncBridge.run { [self] in try await sealing(fields) }
    }

    /// Opens many fields with one trip to the encryptor, or none when it holds every key they
    /// need already. Each field succeeds or fails on its own, so one damaged field does not hide
    /// the others.
    package func open(_ fields: [(sealed: Data, field: String)]) -> [Result<String, any Error>] {
        if let opened = openedUnderKnownKeys(fields) { return opened }
        return SyncBridge.run { [self] in await opening(fields) }
    }

    /// Seals each field's text, bound to its field name.
    package func sealing(_ fields: [(text: String, field: String)]) async throws -> [Data] {
        var sealed: [Data] = []
        sealed.reserveCapacity(fields.count)
        for field in fields {
            sealed.append(try await encryptor.encrypt(data: try IdentityBinding.wrap(Data(field.text.utf8), identity: field.field)))
        }
        return sealed
    }

    /// Opens each field; each succeeds or fails on its own. A field under a key the encryptor
    /// holds already is opened without an async call (ten thousand of them in a listing).
    package func opening(_ fields: [(sealed: Data, field: String)]) async -> [Result<String, any Error>] {
        let known = encryptor as? any KnownKeyOpening
        var results: [Result<String, any Error>] = []
        results.reserveCapacity(fields.count)
        for field in fields {
            if let known, let opened = Self.opened(field, underKnownKeyOf: known) {
                results.append(opened)
                continue
            }
            do {
                let bound: Data
                do { bound = try await encryptor.decrypt(data: field.sealed) } catch { throw StorageError.decryptionFailed(location: field.field, cause: error) }
                results.append(.success(try Self.text(bound, field: field.field)))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// The fields opened without suspending, as ``opening(_:)`` opens them; `nil` when a key one
    /// of them needs has not been fetched yet (or the encryptor cannot say).
    private func openedUnderKnownKeys(_ fields: [(sealed: Data, field: String)]) -> [Result<String, any Error>]? {
        guard let known = encryptor as? any KnownKeyOpening else { return nil }
        var results: [Result<String, any Error>] = []
        results.reserveCapacity(fields.count)
        for field in fields {
            guard let opened = Self.opened(field, underKnownKeyOf: known) else { return nil }
            results.append(opened)
        }
        return results
    }

    /// One field opened (or failing) as ``opening(_:)`` opens it, under a key `known` holds
    /// already; `nil` when its key has not been fetched yet.
    private static func opened(_ field: (sealed: Data, field: String), underKnownKeyOf known: any KnownKeyOpening) -> Result<String, any Error>? {
        let bound: Data
        do {
            guard let opened = try known.decryptUnderKnownKey(data: field.sealed) else { return nil }
            bound = opened
        } catch {
            return .failure(StorageError.decryptionFailed(location: field.field, cause: error))
        }
        return Result { try text(bound, field: field.field) }
    }

    /// An opened field's text, checked against the field it must belong to.
    private static func text(_ bound: Data, field: String) throws -> String {
        let plain = try IdentityBinding.unwrap(bound, identity: field, location: field)
        guard let text = String(data: plain, encoding: .utf8) else {
            throw StorageError.corrupted(location: field, reason: "the opened field is not UTF-8 text")
        }
        return text
    }
}

/// Fields opened together, by field name.
package struct OpenedFields {
    private var results: [String: Result<String, any Error>] = [:]

    package init(_ sealer: FieldSealer, _ fields: [(sealed: Data, field: String)]) {
        self.init(fields, sealer.open(fields))
    }

    /// The fields and what opening each gave, in the same order.
    package init(_ fields: [(sealed: Data, field: String)], _ opened: [Result<String, any Error>]) {
        for (field, result) in zip(fields, opened) { results[field.field] = result }
    }

    /// The field's text, or the error that opening it gave.
    package func text(_ field: String) throws -> String {
        guard let result = results[field] else {
            throw StorageError.corrupted(location: field, reason: "the field was not read")
        }
        return try result.get()
    }
}

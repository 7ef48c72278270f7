import Foundation
import CofferStorage

/// Seals single fields of a record (a secret, a challenge) with the client's encryptor, each
/// bound to where it belongs (`mechanism/<uuid>/secret`, …), so a sealed value copied to another
/// row or column fails to open instead of yielding another record's secret.
struct FieldSealer: Sendable {
    let encryptor: any Encryptor

    func seal(_ text: String, for field: String) throws -> Data {
        try seal([(text, field)])[0]
    }

    func open(_ sealed: Data, for field: String) throws -> String {
        try open([(sealed, field)])[0].get()
    }

    /// Seals many fields with one trip to the (async) encryptor: the trip is a thread switch,
    /// which costs more than sealing a field.
    func seal(_ fields: [(text: String, field: String)]) throws -> [Data] {
        let encryptor = self.encryptor
        let bound = try fields.map { try IdentityBinding.wrap(Data($0.text.utf8), identity: $0.field) }
        return try SyncBridge.run {
            var sealed: [Data] = []
            sealed.reserveCapacity(bound.count)
            for data in bound { sealed.append(try await encryptor.encrypt(data: data)) }
            return sealed
        }
    }

    /// Opens many fields with one trip to the encryptor. Each field succeeds or fails on its
    /// own, so one damaged field does not hide the others.
    func open(_ fields: [(sealed: Data, field: String)]) -> [Result<String, any Error>] {
        let encryptor = self.encryptor
        let sealed = fields.map(\.sealed)
        let decrypted: [Result<Data, any Error>]
        do {
            decrypted = try SyncBridge.run {
                var results: [Result<Data, any Error>] = []
                results.reserveCapacity(sealed.count)
                for data in sealed {
                    do { results.append(.success(try await encryptor.decrypt(data: data))) } catch { results.append(.failure(error)) }
                }
                return results
            }
        } catch {
            return fields.map { _ in .failure(error) }
        }
        return zip(fields, decrypted).map { field, result in
            Result {
                let bound: Data
                do { bound = try result.get() } catch { throw StorageError.decryptionFailed(location: field.field, cause: error) }
                let plain = try IdentityBinding.unwrap(bound, identity: field.field, location: field.field)
                guard let text = String(data: plain, encoding: .utf8) else {
                    throw StorageError.corrupted(location: field.field, reason: "the opened field is not UTF-8 text")
                }
                return text
            }
        }
    }
}

/// Fields opened together, by field name.
struct OpenedFields {
    private var results: [String: Result<String, any Error>] = [:]

    init(_ sealer: FieldSealer, _ fields: [(sealed: Data, field: String)]) {
        for (field, result) in zip(fields, sealer.open(fields)) { results[field.field] = result }
    }

    /// The field's text, or the error that opening it gave.
    func text(_ field: String) throws -> String {
        guard let result = results[field] else {
            throw StorageError.corrupted(location: field, reason: "the field was not read")
        }
        return try result.get()
    }
}

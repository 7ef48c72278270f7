import Foundation

/// How a backend turns a value into the bytes it stores, and back: JSON, then (when sealed)
/// bound to the item's identity and encrypted.
enum ItemSealing: Sendable {
    /// Plain JSON.
    case plain
    /// JSON bound to the item's identity (``IdentityBinding``) and sealed by the encryptor.
    case sealed(any Encryptor)

    /// `.plain` for ``NoEncryptor`` (which would add nothing), `.sealed` for any other encryptor.
    init(_ encryptor: any Encryptor) {
        self = encryptor is NoEncryptor ? .plain : .sealed(encryptor)
    }

    /// The bytes to store for `value`.
    func seal<T: Encodable>(_ value: T, identity: String) async throws -> Data {
        let json = try ValueCoding.encode(value)
        guard case .sealed(let encryptor) = self else { return json }
        return try await encryptor.encrypt(data: IdentityBinding.wrap(json, identity: identity))
    }

    /// The value stored in `data`, checked against `identity`. `location` names the item in
    /// errors.
    func open<T: Decodable>(_ data: Data, as type: T.Type, identity: String, location: String) async throws -> T {
        var json = data
        if case .sealed(let encryptor) = self {
            do {
                json = try await encryptor.decrypt(data: data)
            } catch {
                throw StorageError.decryptionFailed(location: location, cause: error)
            }
            json = try IdentityBinding.unwrap(json, identity: identity, location: location)
        }
        return try ValueCoding.decode(T.self, from: json, location: location)
    }
}

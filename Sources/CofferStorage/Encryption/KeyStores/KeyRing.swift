import Crypto
import Foundation

/// All the keys of one alias: the value a key store keeps per alias.
///
/// Key stores that persist keys (``FileKeyStore``, and key stores you write) can store a key ring
/// with ``serialized()`` and read it back with ``init(serialized:)``.
public struct KeyRing: Sendable {
    /// The id of the key that seals new data.
    public private(set) var primaryID: UInt32
    /// Every key of the alias, by id.
    public private(set) var keys: [UInt32: SymmetricKey]

    /// A key ring with one fresh random key, id 1.
    public static func fresh() -> KeyRing {
        KeyRing(primaryID: 1, keys: [1: SymmetricKey(size: .bits256)])
    }

    private init(primaryID: UInt32, keys: [UInt32: SymmetricKey]) {
        self.primaryID = primaryID
        self.keys = keys
    }

    /// The primary key.
    public var primary: VersionedKey {
        VersionedKey(id: primaryID, key: keys[primaryID]!)
    }

    /// The key with id `id`, if the ring has it.
    public func key(id: UInt32) -> VersionedKey? {
        keys[id].map { VersionedKey(id: id, key: $0) }
    }

    /// Adds a fresh random key with the next id and makes it primary.
    public mutating func rotate() -> VersionedKey {
        let next = (keys.keys.max() ?? 0) + 1
        keys[next] = SymmetricKey(size: .bits256)
        primaryID = next
        return primary
    }

    // MARK: Create and rotate, for key stores

    /// What ``KeyStore/createKey(for:)`` does to an alias's ring: keep an existing ring (nothing
    /// to write) or make a fresh one. Returns the ring to write, if any, and the primary key.
    public static func creatingKey(in ring: KeyRing?) -> (ringToWrite: KeyRing?, key: VersionedKey) {
        if let ring { return (nil, ring.primary) }
        let fresh = KeyRing.fresh()
        return (fresh, fresh.primary)
    }

    /// What ``KeyStore/rotateKey(for:)`` does to an alias's ring: rotate it, or make a fresh one.
    /// Returns the ring to write and the new primary key.
    public static func rotatingKey(in ring: KeyRing?) -> (ringToWrite: KeyRing?, key: VersionedKey) {
        guard var ring else { return creatingKey(in: nil) }
        let key = ring.rotate()
        return (ring, key)
    }

    // MARK: Serialisation

    private struct Stored: Codable {
        var format: Int
        var primary: UInt32
        var keys: [StoredKey]
    }

    private struct StoredKey: Codable {
        var id: UInt32
        var material: Data
    }

    /// Reads a key ring written by ``serialized()``.
    ///
    /// - Throws: A description of what is wrong, when the bytes are not a valid key ring.
    public init(serialized data: Data) throws(KeyRingFormatError) {
        let stored: Stored
        do {
            stored = try JSONDecoder().decode(Stored.self, from: data)
        } catch {
            throw KeyRingFormatError(reason: "not a Coffer key ring (JSON does not match the format)")
        }
        guard stored.format == 1 else {
            throw KeyRingFormatError(reason: "key ring format \(stored.format) is not known to this version of Coffer")
        }
        var keys: [UInt32: SymmetricKey] = [:]
        for entry in stored.keys {
            guard entry.material.count == 32 else {
                throw KeyRingFormatError(reason: "key \(entry.id) is \(entry.material.count) bytes, expected 32")
            }
            guard keys[entry.id] == nil else {
                throw KeyRingFormatError(reason: "key id \(entry.id) appears twice")
            }
            keys[entry.id] = SymmetricKey(data: entry.material)
        }
        guard keys[stored.primary] != nil else {
            throw KeyRingFormatError(reason: "the primary key \(stored.primary) is missing")
        }
        self.init(primaryID: stored.primary, keys: keys)
    }

    /// The key ring as JSON bytes. They contain key material: store them only somewhere protected.
    public func serialized() -> Data {
        let entries = keys.keys.sorted().map { id in
            StoredKey(id: id, material: keys[id]!.withUnsafeBytes { Data($0) })
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain integers and Data cannot fail.
        return try! encoder.encode(Stored(format: 1, primary: primaryID, keys: entries))
    }
}

/// Why bytes could not be read as a ``KeyRing``.
public struct KeyRingFormatError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the bytes.
    public let reason: String
    /// The ``reason``.
    public var description: String { reason }
}

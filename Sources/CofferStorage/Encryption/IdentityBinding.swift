import Foundation

/// Ties a plaintext to the name it is stored under, before it is encrypted.
///
/// A keyed backend wraps the serialised value with its identity (a file name, a keyring account),
/// seals the result, and after opening checks that the identity is the one it is reading. A sealed
/// file copied over another item's file therefore fails with
/// ``StorageError/identityMismatch(location:expected:found:)`` instead of returning another
/// item's data, even though both were sealed with the same key.
///
/// Layout: ASCII `CFB` + version byte `1`, identity length (big-endian UInt16), identity (UTF-8),
/// payload.
public enum IdentityBinding {
    static let magic: [UInt8] = Array("CFB".utf8) + [1]

    /// Wraps `payload` with `identity`.
    public static func wrap(_ payload: Data, identity: String) throws(StorageError) -> Data {
        var name = identity
        let length = name.utf8.count
        guard length <= Int(UInt16.max) else {
            throw .invalidName(String(identity.prefix(64)) + "…", reason: "it is longer than 65535 bytes")
        }
        var data = Data(capacity: magic.count + 2 + length + payload.count)
        data.append(contentsOf: magic)
        data.append(UInt8(length >> 8))
        data.append(UInt8(length & 0xFF))
        name.withUTF8 { data.append($0) }
        data.append(payload)
        return data
    }

    /// The identity `data` was wrapped with.
    public static func identity(of data: Data, location: String) throws(StorageError) -> String {
        let data = Data(data)
        let headerSize = magic.count + 2
        guard data.count >= headerSize, Array(data.prefix(magic.count)) == magic else {
            throw .corrupted(location: location, reason: "the decrypted data carries no identity binding")
        }
        let length = Int(data[magic.count]) << 8 | Int(data[magic.count + 1])
        guard data.count >= headerSize + length else {
            throw .corrupted(location: location, reason: "the identity binding is truncated")
        }
        return String(decoding: data[headerSize..<(headerSize + length)], as: UTF8.self)
    }

    /// Returns the payload of `data` after checking that it was wrapped with `identity`.
    ///
    /// - Parameters:
    ///   - data: What ``wrap(_:identity:)`` returned, as read back.
    ///   - identity: Where the data must belong; anything else is
    ///     ``StorageError/identityMismatch(location:expected:found:)``.
    ///   - location: Where the data came from, for error messages.
    public static func unwrap(_ data: Data, identity: String, location: String) throws(StorageError) -> Data {
        let headerSize = magic.count + 2
        let start = data.startIndex
        guard data.count >= headerSize, data.prefix(magic.count).elementsEqual(magic) else {
            throw .corrupted(location: location, reason: "the decrypted data carries no identity binding")
        }
        let length = Int(data[start + magic.count]) << 8 | Int(data[start + magic.count + 1])
        guard data.count >= headerSize + length else {
            throw .corrupted(location: location, reason: "the identity binding is truncated")
        }
        // Byte for byte: Swift's String equality treats canonically equivalent text as equal, so
        // `café` (NFD) would pass for `café` (NFC), another name, and another file. The name
        // found is made into text only when it differs (a listing opens thousands of fields).
        var expected = identity
        let same = expected.withUTF8 { name in
            name.count == length && data.withUnsafeBytes { raw in
                length == 0 || memcmp(raw.baseAddress! + headerSize, name.baseAddress!, length) == 0
            }
        }
        guard same else {
            throw .identityMismatch(location: location, expected: identity, found: try Self.identity(of: data, location: location))
        }
        return data[(start + headerSize + length)...]
    }
}

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
        // Byte for byte: Swift's String equality treats canonically equivalent text as equal, so
        // `café` (NFD) would pass for `café` (NFC), another name, and another file. The name
        // found is made into text only when it differs. The header is read in one look at the
        // bytes (a listing unwraps thousands of fields; Data's generic prefix and per-byte
        // subscripts cost ten times this).
        var expected = identity
        let found = expected.withUTF8 { name in
            data.withUnsafeBytes { raw in Self.payloadOffset(in: raw, name: UnsafeRawBufferPointer(name)) }
        }
        switch found {
        case .noBinding: throw .corrupted(location: location, reason: "the decrypted data carries no identity binding")
        case .truncated: throw .corrupted(location: location, reason: "the identity binding is truncated")
        case .otherName:
            throw .identityMismatch(location: location, expected: identity, found: try Self.identity(of: data, location: location))
        case .payload(let offset): return data[(data.startIndex + offset)...]
        }
    }

    /// What the header of `raw` says: where the payload starts when it is bound to `name`.
    private static func payloadOffset(in raw: UnsafeRawBufferPointer, name: UnsafeRawBufferPointer) -> Header {
        let headerSize = magic.count + 2
        guard raw.count >= headerSize, magic.indices.allSatisfy({ raw[$0] == magic[$0] }) else { return .noBinding }
        let length = Int(raw[magic.count]) << 8 | Int(raw[magic.count + 1])
        guard raw.count >= headerSize + length else { return .truncated }
        guard name.count == length, length == 0 || memcmp(raw.baseAddress! + headerSize, name.baseAddress!, length) == 0 else {
            return .otherName
        }
        return .payload(headerSize + length)
    }

    /// The header of a wrapped value, as ``unwrap(_:identity:location:)`` judges it.
    private enum Header {
        case noBinding, truncated, otherName
        case payload(Int)
    }
}

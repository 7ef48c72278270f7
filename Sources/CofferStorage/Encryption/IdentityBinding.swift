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
        // Written in place, in one allocation: appending part by part cost more than sealing.
        var data = Data(count: magic.count + 2 + length + payload.count)
        data.withUnsafeMutableBytes { bytes in
            var offset = bytes.copyBytes(from: magic, at: 0)
            bytes[offset] = UInt8(length >> 8)
            bytes[offset + 1] = UInt8(length & 0xFF)
            offset = name.withUTF8 { bytes.copyBytes(from: UnsafeRawBufferPointer($0), at: offset + 2) }
            _ = payload.withUnsafeBytes { bytes.copyBytes(from: $0, at: offset) }
        }
        return data
    }

    /// The identity `data` was wrapped with.
    public static func identity(of data: Data, location: String) throws(StorageError) -> String {
        name(in: data, at: try nameRange(in: data, location: location))
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
        // subscripts cost more than three times this).
        let name = try nameRange(in: data, location: location)
        var expected = identity
        let same = expected.withUTF8 { wanted in
            data.withUnsafeBytes { raw in
                wanted.count == name.count && (name.isEmpty || memcmp(raw.baseAddress! + name.lowerBound, wanted.baseAddress!, name.count) == 0)
            }
        }
        guard same else {
            throw .identityMismatch(location: location, expected: identity, found: Self.name(in: data, at: name))
        }
        return data[(data.startIndex + name.upperBound)...]
    }

    /// Where the name lies in `data` (offsets from its start); a missing or truncated header is
    /// ``StorageError/corrupted(location:reason:)``.
    private static func nameRange(in data: Data, location: String) throws(StorageError) -> Range<Int> {
        try data.withUnsafeBytes { raw in Self.header(of: raw) }.get(location: location)
    }

    /// The name at `range` of `data`, as text.
    private static func name(in data: Data, at range: Range<Int>) -> String {
        String(decoding: data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)], as: UTF8.self)
    }

    /// Where the name lies in `raw`, a wrapped value (offsets from its start), or why it has none.
    private static func header(of raw: UnsafeRawBufferPointer) -> Header {
        let headerSize = magic.count + 2
        guard raw.count >= headerSize, magic.indices.allSatisfy({ raw[$0] == magic[$0] }) else { return .noBinding }
        let length = Int(raw[magic.count]) << 8 | Int(raw[magic.count + 1])
        guard raw.count >= headerSize + length else { return .truncated }
        return .name(headerSize..<(headerSize + length))
    }

    /// The header of a wrapped value: where its name lies, or why it has none.
    private enum Header {
        case noBinding, truncated
        case name(Range<Int>)

        /// The name's range, or the damage as ``StorageError/corrupted(location:reason:)``.
        func get(location: String) throws(StorageError) -> Range<Int> {
            switch self {
            case .noBinding: throw .corrupted(location: location, reason: "the decrypted data carries no identity binding")
            case .truncated: throw .corrupted(location: location, reason: "the identity binding is truncated")
            case .name(let range): return range
            }
        }
    }
}

extension UnsafeMutableRawBufferPointer {
    /// Copies `source` to `offset` and returns the offset after it.
    fileprivate func copyBytes<Source: Collection<UInt8>>(from source: Source, at offset: Int) -> Int {
        UnsafeMutableRawBufferPointer(rebasing: self[offset...]).copyBytes(from: source)
        return offset + source.count
    }
}

import Foundation

/// The bytes an ``AESGCMEncryptor`` writes: a small self-describing header, then AES-GCM output.
///
/// ```
/// offset  size  field
///      0     4  magic: ASCII "COFR"
///      4     1  format version (1)
///      5     4  key id, big-endian UInt32 (which key of the alias sealed this)
///      9    12  nonce (96 bits, random per seal)
///     21     n  ciphertext
///   21+n    16  authentication tag (128 bits)
/// ```
///
/// The 9 header bytes (magic, version, key id) are passed to AES-GCM as associated data, so
/// changing any of them, like changing the nonce, ciphertext or tag, makes opening fail.
public struct SealedEnvelope: Sendable, Equatable {
    /// The four bytes every envelope starts with: ASCII `COFR`.
    public static let magic: [UInt8] = Array("COFR".utf8)
    /// The format version this build writes.
    public static let currentVersion: UInt8 = 1
    /// Size of the authenticated header (magic, version, key id).
    public static let headerSize = 9
    /// Size of the nonce.
    public static let nonceSize = 12
    /// Size of the authentication tag.
    public static let tagSize = 16
    /// The smallest possible envelope: header, nonce and tag around an empty ciphertext.
    public static let minimumSize = headerSize + nonceSize + tagSize

    /// The format version.
    public var version: UInt8
    /// The id of the key that sealed this envelope, within its alias.
    public var keyID: UInt32
    /// The AES-GCM nonce.
    public var nonce: Data
    /// The encrypted payload.
    public var ciphertext: Data
    /// The AES-GCM authentication tag.
    public var tag: Data

    /// Creates an envelope from its parts.
    public init(version: UInt8 = SealedEnvelope.currentVersion, keyID: UInt32, nonce: Data, ciphertext: Data, tag: Data) {
        self.version = version
        self.keyID = keyID
        self.nonce = nonce
        self.ciphertext = ciphertext
        self.tag = tag
    }

    /// Parses serialised envelope bytes. Checks the structure only; authenticity is checked when
    /// the envelope is opened.
    public init(parsing bytes: Data) throws(EnvelopeError) {
        let bytes = Data(bytes)  // rebase indices at 0
        let keyID = try Self.keyID(checking: bytes)
        let nonceEnd = Self.headerSize + Self.nonceSize
        self.init(
            version: Self.currentVersion,
            keyID: keyID,
            nonce: bytes[Self.headerSize..<nonceEnd],
            ciphertext: bytes[nonceEnd..<(bytes.count - Self.tagSize)],
            tag: bytes.suffix(Self.tagSize))
    }

    /// The key id of the envelope in `bytes`, after the checks ``init(parsing:)`` makes (size,
    /// magic, version), without copying anything out: what opening needs before the key.
    public static func keyID(checking bytes: Data) throws(EnvelopeError) -> UInt32 {
        guard bytes.count >= minimumSize else { throw .truncated(length: bytes.count) }
        let checked = bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<UInt32, EnvelopeError> in
            guard raw.prefix(4).elementsEqual(magic) else { return .failure(.notAnEnvelope) }
            guard raw[4] == currentVersion else { return .failure(.unsupportedVersion(raw[4])) }
            return .success(raw[5..<9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        return try checked.get()
    }

    /// The authenticated header: magic, version and key id.
    public var header: Data {
        Self.header(version: version, keyID: keyID)
    }

    /// The header for a given key id in the current format, as sealing needs it before the rest
    /// of the envelope exists.
    public static func header(keyID: UInt32) -> Data {
        header(version: currentVersion, keyID: keyID)
    }

    private static func header(version: UInt8, keyID: UInt32) -> Data {
        var data = Data(capacity: headerSize)
        data.append(contentsOf: magic)
        data.append(version)
        withUnsafeBytes(of: keyID.bigEndian) { data.append(contentsOf: $0) }
        return data
    }

    /// The envelope as bytes.
    public var serialized: Data {
        var data = Data(capacity: Self.headerSize + nonce.count + ciphertext.count + tag.count)
        data.append(header)
        data.append(nonce)
        data.append(ciphertext)
        data.append(tag)
        return data
    }

    /// An envelope's bytes from its header and its body (nonce, ciphertext and tag, in AES-GCM's
    /// combined form), in one allocation.
    static func serialized(header: Data, body: Data) -> Data {
        var data = Data(capacity: header.count + body.count)
        data.append(header)
        data.append(body)
        return data
    }
}

import CofferStorage
import Crypto
import Foundation

/// One OATH secret, however it is spelled: the identity of the HMAC key a code is computed with.
///
/// HMAC (RFC 2104) does not use its key as given: a key longer than the hash's block is hashed
/// first, and the result (or a shorter key) is padded with zero bytes to the block. So
/// `GEZDGNBVGY3TQOJQ` and `GEZDGNBVGY3TQOJQAA` (the same bytes and one zero byte more) are one
/// key and issue the same codes. Everything that asks "is this the same secret?" (a HOTP
/// counter that must never go back, two accounts refused one secret) compares this identity,
/// never the text or the raw bytes.
package struct OathKeyIdentity: Hashable, Sendable, CustomStringConvertible {
    /// Hex of the SHA-256 of the hash's name and the key as HMAC uses it, without its padding.
    /// It names the key without revealing it (the key itself has at least 80 bits when it is a
    /// real OATH secret), and is what records of the key store.
    package let fingerprint: String

    /// The identity of `key` used with `hash`.
    package init(key: Data, hash: OneTimePassword.Hash) {
        var effective = key.count > hash.blockSize ? hash.digest(key) : key
        while effective.last == 0 { effective.removeLast() }
        var input = Data("coffer-oath-key\0\(hash.name)\0".utf8)
        input.append(effective)
        fingerprint = SHA256.hash(data: input).hexString
    }

    /// The fingerprint, which names the key without revealing it.
    package var description: String { fingerprint }
}

extension OneTimePassword.Hash {
    /// The block size of the hash in bytes: a longer HMAC key is hashed first, a shorter one
    /// padded with zero bytes to it.
    package var blockSize: Int {
        switch self {
        case .sha1, .sha256, .md5: 64
        case .sha384, .sha512: 128
        }
    }

    /// The algorithm's name, as OATH URIs write it.
    package var name: String {
        switch self {
        case .sha1: "SHA1"
        case .sha256: "SHA256"
        case .sha384: "SHA384"
        case .sha512: "SHA512"
        case .md5: "MD5"
        }
    }

    /// The hash of `data`, as HMAC hashes a key longer than the block.
    func digest(_ data: Data) -> Data {
        switch self {
        case .sha1: Data(Insecure.SHA1.hash(data: data))
        case .sha256: Data(SHA256.hash(data: data))
        case .sha384: Data(SHA384.hash(data: data))
        case .sha512: Data(SHA512.hash(data: data))
        case .md5: Data(Insecure.MD5.hash(data: data))
        }
    }
}

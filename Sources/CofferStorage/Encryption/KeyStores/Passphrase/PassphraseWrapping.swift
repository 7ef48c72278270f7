import Crypto
import Foundation

/// A wrapping key derived from a passphrase with scrypt (``PassphraseKeyStore``), optionally
/// kept in the kernel's user keyring for a while.
struct PassphraseWrapping: KeyWrapping {
    struct Header: Codable, Equatable, Sendable {
        /// `"scrypt"`: the only function known.
        var kdf: String
        var scrypt: ScryptParameters
        var salt: Data
        /// How long the derived key is kept in the kernel's user keyring after use (0: never).
        var rememberSeconds: UInt32
        /// 16 bytes of HMAC-SHA256 under the derived key: tells a wrong passphrase (or a stale
        /// remembered key) from a changed file, before the ring is touched. It tells an attacker
        /// with the file nothing the sealed ring does not (either checks a guess).
        var keyCheck: Data
    }

    static let formatName = "coffer.passphrase-key-ring"
    static let fileExtension = "passphrase-key"

    let passphrase: @Sendable () async throws -> String
    let parameters: ScryptParameters
    let remember: UInt32
    /// Whether a derived key the kernel keyring remembers may open the ring; `false` to make
    /// the passphrase be given (before it is changed).
    var acceptsRemembered = true

    static func problem(with header: Header) -> String? {
        guard header.kdf == "scrypt" else { return "the key derivation '\(header.kdf.prefix(32))' is not known" }
        guard header.salt.count >= 16, header.salt.count <= 64 else { return "the salt is \(header.salt.count) bytes; 16 to 64 are allowed" }
        guard header.rememberSeconds <= 7 * 24 * 3600 else { return "the time to remember the key is more than a week" }
        guard header.keyCheck.count == 16 else { return "the key check is \(header.keyCheck.count) bytes, not 16" }
        return header.scrypt.problem
    }

    static func authenticatedData(_ header: Header) -> Data {
        var data = Data("\(header.kdf)/\(header.scrypt.logN)/\(header.scrypt.r)/\(header.scrypt.p)/\(header.rememberSeconds)/".utf8)
        data += header.salt
        data += header.keyCheck
        return data
    }

    func newWrappingKey(alias: String) async throws -> (Header, SymmetricKey) {
        if let problem = parameters.problem { throw KeyRingFormatError(reason: problem) }
        let salt = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let key = try parameters.deriveKey(from: try await passphrase(), salt: salt)
        let header = Header(kdf: "scrypt", scrypt: parameters, salt: salt, rememberSeconds: remember, keyCheck: Self.check(key))
        return (header, key)
    }

    func wrappingKey(for header: Header, alias: String) async throws -> SymmetricKey {
        let name = Self.keyringName(alias: alias, header: header)
        if acceptsRemembered, header.rememberSeconds > 0, let kept = KernelKeyring.key(named: name) {
            if Self.check(kept) == header.keyCheck { return kept }
            // Not this file's key (planted, or left by an older file): dropped, and asked for.
            KernelKeyring.remove(named: name)
        }
        let key = try header.scrypt.deriveKey(from: try await passphrase(), salt: header.salt)
        guard Self.check(key) == header.keyCheck else { throw WrappedKeyRingError.wrongPassphrase(alias: alias) }
        return key
    }

    private static func check(_ key: SymmetricKey) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data("coffer-passphrase-key-check".utf8), using: key).prefix(16))
    }

    func retired(_ header: Header, alias: String) {
        KernelKeyring.remove(named: Self.keyringName(alias: alias, header: header))
    }

    func opened(_ header: Header, key: SymmetricKey, alias: String) {
        guard header.rememberSeconds > 0 else { return }
        KernelKeyring.store(key, name: Self.keyringName(alias: alias, header: header), seconds: header.rememberSeconds)
    }

    /// The kernel keyring's name for the key of `alias` with `header`'s salt: a new passphrase
    /// (a new salt) never meets an old key.
    static func keyringName(alias: String, header: Header) -> String {
        let salt = SHA256.hash(data: header.salt).prefix(8).map { String(format: "%02x", $0) }.joined()
        return "coffer:\(alias):\(salt)"
    }
}

import Crypto
import CryptoExtras
import CofferStorage
import Foundation

/// Reads and writes the vault format of the Aegis authenticator (`docs/vault.md` in the Aegis
/// project), plain or encrypted, so accounts can move between Aegis and Coffer.
///
/// An encrypted vault holds a random 256-bit master key wrapped by one or more *slots*; a
/// password slot derives its key with scrypt (N = 2^15, r = 8, p = 1 when Coffer writes it) and
/// wraps the master key with AES-256-GCM; the entries are AES-256-GCM sealed under the master
/// key. Coffer reads password slots (type 1); raw and biometric slots cannot be opened with a
/// password.
public enum AegisVault {
    /// One account in a vault.
    public struct Entry: Codable, Sendable, Equatable {
        /// `totp`, `hotp`, `steam`, `motp` or `yandex`; Coffer imports the first three.
        public var type: String
        /// The entry's id in the vault (a UUID).
        public var uuid: String
        /// The account's name at the issuer.
        public var name: String
        /// Who issued the account.
        public var issuer: String
        /// The user's note (often recovery codes): imported, kept sealed, exported.
        public var note: String?
        /// Whether the user marked the entry a favourite.
        public var favorite: Bool?
        /// The names of the groups the entry is in. The file keeps groups by UUID in a table of
        /// its own (content version 3) or one name per entry (`group`, older vaults); reading
        /// gives names, writing makes the table.
        public var groups: [String]?
        /// The OTP parameters.
        public var info: Info

        /// An entry.
        public init(type: String, uuid: String, name: String, issuer: String, note: String? = nil, favorite: Bool? = nil,
                    groups: [String]? = nil, info: Info) {
            self.type = type
            self.uuid = uuid
            self.name = name
            self.issuer = issuer
            self.note = note
            self.favorite = favorite
            self.groups = groups
            self.info = info
        }

        private enum CodingKeys: String, CodingKey {
            case type, uuid, name, issuer, note, favorite, groups, group, info
        }

        /// Reads an entry as the file has it; `groups` are still the file's UUIDs here, and an
        /// older vault's single `group` name joins them (``AegisVault`` resolves the UUIDs).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(String.self, forKey: .type)
            uuid = try container.decode(String.self, forKey: .uuid)
            name = try container.decode(String.self, forKey: .name)
            issuer = try container.decode(String.self, forKey: .issuer)
            note = try container.decodeIfPresent(String.self, forKey: .note)
            favorite = try container.decodeIfPresent(Bool.self, forKey: .favorite)
            groups = try container.decodeIfPresent([String].self, forKey: .groups)
            if let group = try container.decodeIfPresent(String.self, forKey: .group), !group.isEmpty {
                groups = (groups ?? []) + [Self.legacyGroupPrefix + group]
            }
            info = try container.decode(Info.self, forKey: .info)
        }

        /// Writes the entry; `groups` must already be the file's UUIDs.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(type, forKey: .type)
            try container.encode(uuid, forKey: .uuid)
            try container.encode(name, forKey: .name)
            try container.encode(issuer, forKey: .issuer)
            try container.encodeIfPresent(note, forKey: .note)
            try container.encodeIfPresent(favorite, forKey: .favorite)
            try container.encodeIfPresent(groups, forKey: .groups)
            try container.encode(info, forKey: .info)
        }

        /// Marks an older vault's group name among the UUIDs until they are resolved.
        static let legacyGroupPrefix = "\u{0}name:"

        /// OTP parameters.
        public struct Info: Codable, Sendable, Equatable {
            /// The secret, in base32.
            public var secret: String
            /// `SHA1`, `SHA256` or `SHA512`; `nil` for SHA1.
            public var algo: String?
            /// How many digits a code has; `nil` for 6.
            public var digits: Int?
            /// A TOTP code's lifetime in seconds; `nil` for 30.
            public var period: Int?
            /// A HOTP entry's counter; `nil` for 0.
            public var counter: UInt64?
        }
    }

    /// Why a vault could not be read or written. Nothing is imported when one is thrown.
    public enum VaultError: Error, Sendable, Equatable {
        /// Not an Aegis vault, or damaged JSON.
        case malformed(String)
        /// A vault or content version this build does not know.
        case unsupportedVersion(String)
        /// The vault is encrypted and no password was given.
        case passwordRequired
        /// No password slot opens with this password (or the vault was changed).
        case wrongPassword
        /// The vault is encrypted without a password slot.
        case noPasswordSlot
        /// The password slot opened but the entries do not decrypt: the file was damaged.
        case damaged(String)
    }

    private struct File: Codable {
        var version: Int
        var header: Header
        var db: DB
    }

    private struct Header: Codable {
        var slots: [Slot]?
        var params: Params?
    }

    private struct Params: Codable {
        var nonce: String
        var tag: String
    }

    private struct Slot: Codable {
        var type: Int
        var uuid: String
        var key: String
        var key_params: Params
        var n: Int?
        var r: Int?
        var p: Int?
        var salt: String?
    }

    private struct Content: Codable {
        var version: Int
        var entries: [Entry]
        var groups: [Group]?
        struct Group: Codable {
            var uuid: String
            var name: String
        }

        /// The entries with their groups' names instead of the file's UUIDs (a UUID the table
        /// does not name stays as it is, so nothing is lost).
        var resolved: [Entry] {
            let names = Dictionary((groups ?? []).map { ($0.uuid.lowercased(), $0.name) }, uniquingKeysWith: { first, _ in first })
            return entries.map { entry in
                var entry = entry
                entry.groups = entry.groups.map { $0.map { id in
                    id.hasPrefix(Entry.legacyGroupPrefix) ? String(id.dropFirst(Entry.legacyGroupPrefix.count)) : names[id.lowercased()] ?? id
                } }
                return entry
            }
        }

        /// Content for `entries` whose groups are names: a table of the names (each given a
        /// UUID) and entries pointing into it; version 3 when there are groups, else 1.
        init(named entries: [Entry]) {
            var table: [String: String] = [:], groups: [Group] = []
            self.entries = entries.map { entry in
                var entry = entry
                entry.groups = entry.groups.map { $0.map { name in
                    if let id = table[name] { return id }
                    let id = UUID().uuidString.lowercased()
                    table[name] = id
                    groups.append(Group(uuid: id, name: name))
                    return id
                } }
                return entry
            }
            self.version = groups.isEmpty ? 1 : 3
            self.groups = groups.isEmpty ? nil : groups
        }
    }

    /// The db field: the content as JSON (plain vaults) or as base64 ciphertext (encrypted).
    private enum DB: Codable {
        case plain(Content)
        case sealed(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) { self = .sealed(text) } else { self = .plain(try container.decode(Content.self)) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .plain(let content): try container.encode(content)
            case .sealed(let text): try container.encode(text)
            }
        }
    }

    // MARK: - Reading

    /// The entries of a vault file. `password` is needed when the vault is encrypted.
    public static func read(_ data: Data, password: String?) throws(VaultError) -> [Entry] {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw .malformed("the file is not an Aegis vault (its JSON does not have version, header and db)")
        }
        guard file.version == 1 else { throw .unsupportedVersion("vault version \(file.version)") }
        let content: Content
        switch file.db {
        case .plain(let plain):
            content = plain
        case .sealed(let text):
            guard let password else { throw .passwordRequired }
            guard let params = file.header.params, let slots = file.header.slots else {
                throw .malformed("the vault is encrypted but its header has no slots or params")
            }
            let masterKey = try unwrapMasterKey(slots: slots, password: password)
            guard let ciphertext = Data(base64Encoded: text) else { throw .malformed("db is not base64") }
            let plaintext: Data
            do {
                plaintext = try open(ciphertext, params: params, key: masterKey)
            } catch {
                throw .damaged("the entries do not decrypt with the vault's master key")
            }
            do {
                content = try JSONDecoder().decode(Content.self, from: plaintext)
            } catch {
                throw .malformed("the decrypted entries are not the expected JSON")
            }
        }
        guard (1...3).contains(content.version) else { throw .unsupportedVersion("content version \(content.version)") }
        return content.resolved
    }

    /// The most memory one scrypt derivation may take (128 × N × r bytes): the file chooses the
    /// cost, and a hostile vault must not make an import take gigabytes. Aegis's own choice
    /// (N = 2^15, r = 8) takes 32 MiB.
    static let maximumScryptMemory = 256 << 20

    /// The most password slots tried, for the same reason (each is one scrypt derivation).
    static let maximumPasswordSlots = 8

    /// The most scrypt work (N × r × p, summed over the password slots) an import may do: 16
    /// of Aegis's own slots (2^15 × 8 × 1 each), about two seconds here. Memory alone does not
    /// bound the time: p multiplies the work, not the memory.
    static let maximumScryptWork = 16 << 18

    private static func unwrapMasterKey(slots: [Slot], password: String) throws(VaultError) -> SymmetricKey {
        let passwordSlots = slots.filter { $0.type == 1 }
        guard !passwordSlots.isEmpty else { throw .noPasswordSlot }
        guard passwordSlots.count <= maximumPasswordSlots else {
            throw .malformed("the vault has \(passwordSlots.count) password slots; at most \(maximumPasswordSlots) are tried")
        }
        let work = passwordSlots.reduce(0) { total, slot in
            total + min(slot.n ?? 0, 1 << 20) * min(slot.r ?? 0, 32) * min(slot.p ?? 0, 16)
        }
        guard work <= maximumScryptWork else {
            throw .malformed("the vault's password slots ask for \(work) units of scrypt work (N·r·p summed); at most \(maximumScryptWork) are done")
        }
        for slot in passwordSlots {
            guard let n = slot.n, let r = slot.r, let p = slot.p, let saltHex = slot.salt, let salt = Data(hex: saltHex),
                  let wrapped = Data(hex: slot.key), n > 1, n <= 1 << 20, n & (n - 1) == 0, r > 0, r <= 32, p > 0, p <= 16,
                  128 * n * r <= maximumScryptMemory else {
                throw .malformed("a password slot has missing or out-of-range scrypt parameters (N must be a power of two, 128·N·r at most 256 MiB)")
            }
            do {
                let kek = try KDF.Scrypt.deriveKey(from: Data(password.utf8), salt: salt, outputByteCount: 32,
                                                   rounds: n, blockSize: r, parallelism: p)
                return SymmetricKey(data: try open(wrapped, params: slot.key_params, key: kek))
            } catch {
                continue  // another password slot may match
            }
        }
        throw .wrongPassword
    }

    private static func open(_ ciphertext: Data, params: Params, key: SymmetricKey) throws -> Data {
        guard let nonce = Data(hex: params.nonce), let tag = Data(hex: params.tag) else {
            throw VaultError.malformed("nonce or tag is not hexadecimal")
        }
        let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
        return try AES.GCM.open(box, using: key)
    }

    // MARK: - Writing

    /// A vault file holding `entries`, encrypted under `password` when one is given.
    ///
    /// - Parameters:
    ///   - entries: The accounts to write, one vault entry each.
    ///   - password: Seals the vault (a password slot) when given; `nil` writes it in the clear.
    ///   - scryptRounds: scrypt's N; Aegis uses 2^15. Lower only in tests.
    public static func write(_ entries: [Entry], password: String?, scryptRounds: Int = 1 << 15) throws -> Data {
        let content = Content(named: entries)
        let file: File
        if let password {
            let masterKey = SymmetricKey(size: .bits256)
            let salt = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
            let kek = try KDF.Scrypt.deriveKey(from: Data(password.utf8), salt: salt, outputByteCount: 32,
                                               rounds: scryptRounds, blockSize: 8, parallelism: 1)
            let wrapped = try AES.GCM.seal(masterKey.withUnsafeBytes { Data($0) }, using: kek)
            let sealed = try AES.GCM.seal(try JSONEncoder().encode(content), using: masterKey)
            let slot = Slot(type: 1, uuid: UUID().uuidString.lowercased(), key: wrapped.ciphertext.hexString,
                            key_params: Params(nonce: Data(wrapped.nonce).hexString, tag: wrapped.tag.hexString),
                            n: scryptRounds, r: 8, p: 1, salt: salt.hexString)
            file = File(version: 1, header: Header(slots: [slot], params: Params(nonce: Data(sealed.nonce).hexString, tag: sealed.tag.hexString)),
                        db: .sealed(sealed.ciphertext.base64EncodedString()))
        } else {
            file = File(version: 1, header: Header(slots: nil, params: nil), db: .plain(content))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(file)
    }

    // MARK: - Conversion

    /// The vault entry for `account`; `nil` for a type Aegis has no form for.
    ///
    /// Written as Aegis's own parser reads each type (`OtpInfo.fromJson`): every entry has
    /// `secret`, `algo` and `digits`; `totp` and `steam` have `period`, `hotp` has `counter`. The
    /// account's note, favourite mark and groups go with it.
    /// A Steam entry is SHA-1, 5 characters, 30 seconds, whatever was stored. The entry's id is
    /// the account's UUID as it is written (Aegis reads either case; a Ping credential's id
    /// comes back unchanged), or a new one, lower-cased as Aegis writes its own.
    public static func entry(_ account: TransferAccount) -> Entry? {
        let type = account.type.lowercased()
        let algo = (account.algorithm ?? "SHA1").uppercased()
        let info: Entry.Info
        switch type {
        case "totp": info = Entry.Info(secret: account.secret, algo: algo, digits: account.digits ?? 6, period: account.period ?? 30)
        case "steam": info = Entry.Info(secret: account.secret, algo: "SHA1", digits: 5, period: 30)
        case "hotp": info = Entry.Info(secret: account.secret, algo: algo, digits: account.digits ?? 6, counter: account.counter ?? 0)
        default: return nil
        }
        let details = account.details
        return Entry(type: type, uuid: account.uuid ?? UUID().uuidString.lowercased(), name: account.accountName,
                     issuer: account.issuer, note: details?.note, favorite: details?.isFavorite == true ? true : nil,
                     groups: details.flatMap { $0.groups.isEmpty ? nil : $0.groups }, info: info)
    }

    /// The entry as an ``ImportEntry``, checked when it is imported.
    public static func importEntry(_ entry: Entry) -> ImportEntry {
        .account(ImportEntry.Fields(
            type: entry.type, issuer: entry.issuer, accountName: entry.name, secret: entry.info.secret, algorithm: entry.info.algo,
            digits: entry.info.digits, period: entry.info.period, counter: entry.info.counter, uuid: entry.uuid,
            details: AccountDetails(note: entry.note, groups: entry.groups ?? [], isFavorite: entry.favorite ?? false)))
    }
}

extension AegisVault.Entry: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The type, names and groups; the note and the secret show only as `<redacted>`.
    public var description: String {
        "Entry(\(type), \(issuer): \(name)\(note == nil ? "" : ", note: <redacted>")\(groups.map { ", groups: \($0)" } ?? ""), \(info))"
    }

    /// The same as ``description``: the note and secret stay out of `debugPrint` too.
    public var debugDescription: String { description }

    /// Only ``description``, so `dump(_:)` and the debugger cannot reveal the note or secret.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

extension AegisVault.Entry.Info: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The OTP parameters; the secret shows only as `<redacted>`.
    public var description: String {
        "Info(algo: \(algo ?? "nil"), digits: \(digits.map(String.init) ?? "nil"), secret: <redacted>)"
    }

    /// The same as ``description``: the secret stays out of `debugPrint` too.
    public var debugDescription: String { description }

    /// Only ``description``, so `dump(_:)` and the debugger cannot reveal the secret.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

extension AegisVault.VaultError: LocalizedError {
    /// What went wrong and whether anything was imported; never the password or a secret.
    public var errorDescription: String? {
        switch self {
        case .malformed(let reason): return "The vault cannot be read: \(reason). Nothing was imported."
        case .unsupportedVersion(let what): return "The vault uses \(what), which this version of Coffer does not know. Nothing was imported."
        case .passwordRequired: return "The vault is encrypted: give its password (prompt, --password-file or COFFER_PASSWORD)."
        case .wrongPassword: return "The password does not open the vault (or the vault was changed). Nothing was imported."
        case .noPasswordSlot: return "The vault is encrypted without a password slot (biometric only); export it from Aegis with a password."
        case .damaged(let reason): return "The vault is damaged: \(reason). Nothing was imported."
        }
    }
}

extension Data {
    /// Bytes from a hexadecimal string, or nil.
    init?(hex: String) {
        guard hex.count.isMultiple(of: 2) else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}

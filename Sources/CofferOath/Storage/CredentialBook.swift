import CofferMFACommons
import CofferMFAEngine
import CofferStorage
import Foundation
import Synchronization

/// How ``OathKeychainStorage`` keeps its credentials on the keyring: one sealed item, the
/// *book*, holding every credential of the storage (its service and access group), secrets
/// included, as one JSON array.
///
/// Why one item and not Ping's two per credential (metadata, and the secret apart): the Secret
/// Service has no range queries, and gnome-keyring answers each found item's attributes in
/// about 0.4 ms and its secret in 0.14 ms, so a listing of 1,000 credentials read 2,000 items
/// (over a second). A book of 1,000 reads in one search (a few milliseconds). Writes cost what
/// they did: gnome-keyring rewrites its whole keyring file on every change either way, and
/// every change is one item write, which gnome-keyring makes atomically, so a process killed
/// at any point leaves the old book or the new. The metadata is sealed too now (Ping kept it
/// in the clear).
///
/// | item | attributes | sealed value, bound to |
/// | --- | --- | --- |
/// | the book | `service`, `accessGroup`, `kind=credentials` | the service and the access group |
///
/// The sealed book carries a generation, one more at every write. A write goes to the default
/// collection, so when that changed, the book's old item stays in the other one; of several
/// items the newest generation is read, and changes go on (a copy that does not open stops them:
/// it might be the newest).
///
/// Items of Ping's layout, which Coffer 0.3 wrote (`service` with `account` = the id, and
/// `service.secrets`), are moved into the book the first time a process uses the storage,
/// under the keyring lock: the book is written first, then the old items deleted, so a
/// process killed in between leaves copies that the next move merges (the book's copy wins),
/// never a gap. An old credential that cannot be opened is left where it is and logged;
/// ``OathKeychainStorage/clearOathCredentials()`` removes it too.
final class CredentialBook: Sendable {
    private let service: String
    private let accessGroup: String
    private let items: SealedKeyringItems
    private let logger: any CofferMFACommons.Logger
    /// Set once this process has looked for the older layout (and moved what it could), so the
    /// check costs three path-only searches per process.
    private let layoutChecked = Mutex(false)

    init(service: String, accessGroup: String, items: SealedKeyringItems, logger: any CofferMFACommons.Logger) {
        self.service = service
        self.accessGroup = accessGroup
        self.items = items
        self.logger = logger
    }

    /// What the book's item holds, sealed: the credentials and the book's generation, one more
    /// at every write, so that of two items holding the book the newer is known.
    private struct Contents: Codable {
        let generation: Int
        let credentials: [Entry]
    }

    /// One credential as the book holds it: `OathCredential`'s JSON leaves the secret out.
    private struct Entry: Codable {
        let credential: OathCredential
        let secret: String
    }

    // MARK: - Attributes and binding

    private var book: [String: String] { ["service": service, "accessGroup": accessGroup, "kind": "credentials"] }
    private var oldMetadata: [String: String] { ["service": service, "accessGroup": accessGroup] }
    private var oldSecrets: [String: String] { ["service": service + ".secrets", "accessGroup": accessGroup] }
    /// What the book is sealed to: the service and the access group, lengths first so that no
    /// two pairs read alike.
    private var field: String { "oath-book/\(service.utf8.count):\(service)/\(accessGroup.utf8.count):\(accessGroup)" }

    // MARK: - Reading

    /// What a search for the book found.
    struct Shelf: Sendable {
        /// The credentials of the newest book, in its order.
        var credentials: [OathCredential] = []
        /// The newest book's generation (0: no book).
        var generation = 0
        /// How many keyring items hold a book: more than one when the default collection
        /// changed since it was written (a write goes to the default collection).
        var items = 0
        /// Why an item of the book does not open, if one does not.
        var damage: (any Error)?
    }

    /// The book as the keyring holds it now: of several items, the newest. A keyring or key
    /// store that fails, or a locked item, fails the call; a book that does not open is named
    /// in ``Shelf/damage``.
    func shelf() async throws -> Shelf {
        let found = try await items.keyring.search(book, loadLabels: false)
        guard found.allSatisfy({ !$0.isLocked }) else { throw KeychainError.locked }
        let texts = await items.openEach(found.map { ($0.secret ?? Data(), field) })
        var shelf = Shelf(items: found.count)
        for text in texts {
            do {
                let contents = try JSONDecoder().decode(Contents.self, from: Data(try text.get().utf8))
                guard Set(contents.credentials.map(\.credential.storedID)).count == contents.credentials.count else {
                    throw SealedKeyringItems.Malformed("the book of OATH credentials names a credential twice")
                }
                guard contents.generation > shelf.generation else { continue }
                shelf.generation = contents.generation
                shelf.credentials = contents.credentials.map { $0.credential.withSecret($0.secret) }
            } catch where SealedKeyringItems.isDamage(error) {
                shelf.damage = shelf.damage ?? error
            }
        }
        return shelf
    }

    /// Every credential, after any move of the older layout. A book that does not open fails
    /// the call (``OathStorageError/storageCorrupted(_:)``): it may hold any of them, so no
    /// listing without it would be true.
    func credentials() async throws -> [OathCredential] {
        try await ensureLayout()
        let shelf = try await shelf()
        if let damage = shelf.damage {
            logger.e("The book of OATH credentials cannot be read (\(service))", error: damage)
            throw OathStorageError.storageCorrupted("the keyring item holding the OATH credentials of \(service) cannot be read")
        }
        return shelf.credentials
    }

    // MARK: - Changing (under the keyring lock)

    /// Reads the book, lets `change` edit its credentials and writes it back if they changed,
    /// all holding the keyring lock, so no process's change is lost between another's read and
    /// write. A book that does not open is never rewritten: the call fails and nothing changes.
    func change<R>(_ change: (inout [OathCredential]) throws -> R) async throws -> R {
        try await ensureLayout()
        return try await items.exclusively {
            let shelf = try await shelf()
            try checkChangeable(shelf)
            var credentials = shelf.credentials
            let result = try change(&credentials)
            if try Self.differ(credentials, shelf.credentials) { try await write(credentials, after: shelf) }
            return result
        }
    }

    /// Removes the book and every item of the older layout, readable or not. Call inside the
    /// keyring lock.
    func removeAll() async throws {
        _ = try await items.keyring.clear(book)
        let (metadata, secrets) = try await oldItems()
        for item in metadata + secrets { _ = try await items.keyring.clear(item.attributes) }
    }

    private func checkChangeable(_ shelf: Shelf) throws {
        if let damage = shelf.damage {
            logger.e("The book of OATH credentials cannot be read (\(service)); nothing was changed", error: damage)
            throw OathStorageError.storageCorrupted("the keyring item holding the OATH credentials of \(service) cannot be read; nothing was changed")
        }
    }

    /// Whether two lists would be written differently (the order, a field or a secret).
    private static func differ(_ one: [OathCredential], _ other: [OathCredential]) throws -> Bool {
        guard one.count == other.count, zip(one, other).allSatisfy({ $0.id.isSameStoredID(as: $1.id) && $0.secret == $1.secret }) else { return true }
        return try JSONEncoder().encode(one) != JSONEncoder().encode(other)
    }

    /// Writes the book in one item write, a generation after `shelf`'s, into the default
    /// collection (an item there is replaced; one left in another collection is older from now
    /// on). An empty book is deleted, every copy.
    private func write(_ credentials: [OathCredential], after shelf: Shelf) async throws {
        guard !credentials.isEmpty else {
            _ = try await items.keyring.clear(book)
            return
        }
        let contents = Contents(generation: shelf.generation + 1, credentials: credentials.map { Entry(credential: $0, secret: $0.secret) })
        let sealed = try await items.seal(String(decoding: try JSONEncoder().encode(contents), as: UTF8.self), boundTo: field)
        try await items.keyring.store(sealed, attributes: book, label: "Coffer OATH credentials (\(service))",
                                      contentType: "application/octet-stream")
    }

    // MARK: - The older layout

    /// Moves items of the older layout into the book, once per process (see the type's
    /// documentation). Nothing is written where there is nothing to move.
    private func ensureLayout() async throws {
        guard !layoutChecked.withLock({ $0 }) else { return }
        let bookItems = try await items.keyring.count(book)
        let metadataItems = try await items.keyring.count(oldMetadata)
        let secretItems = try await items.keyring.count(oldSecrets)
        if metadataItems > bookItems || secretItems > 0 {
            try await items.exclusively { try await moveOldItems() }  // what cannot be moved waits for the next process
        }
        layoutChecked.withLock { $0 = true }
    }

    /// This storage's items of the older layout: exactly the attributes Coffer 0.3 gave them
    /// (`service`, `accessGroup`, `account`; an item with any other is not this storage's) and,
    /// since a storage named `<this service>.secrets` has items of the same attributes as this
    /// one's secrets, told apart by their bytes: metadata is JSON, a secret is sealed.
    private func oldItems() async throws -> (metadata: [SecretService.Item], secrets: [SecretService.Item]) {
        func isOld(_ item: SecretService.Item) -> Bool { Set(item.attributes.keys) == ["service", "accessGroup", "account"] }
        func isSealed(_ item: SecretService.Item) -> Bool { item.secret?.starts(with: SealedEnvelope.magic) == true }
        let metadata = try await items.keyring.search(oldMetadata, loadLabels: false).filter(isOld)
        let secrets = try await items.keyring.search(oldSecrets, loadLabels: false).filter(isOld)
        guard (metadata + secrets).allSatisfy({ !$0.isLocked }) else { throw KeychainError.locked }
        return (metadata.filter { !isSealed($0) }, secrets.filter(isSealed))
    }

    private func secretField(_ id: String) -> String { "oath/\(service)/\(id)/secret" }

    /// Moves what opens. An old credential that cannot be read (its secret sealed under a key the
    /// key store no longer has included) stays where it is, logged; a keyring or key store
    /// failure stops the move before anything is deleted.
    private func moveOldItems() async throws {
        let (metadata, secrets) = try await oldItems()
        // Ids are compared byte for byte, as the keyring compares attributes ("é" composed or not
        // are two credentials).
        func account(_ item: SecretService.Item) -> StoredID { (item.attributes["account"] ?? "").storedID }
        let secretItems = Dictionary(secrets.map { (account($0), $0) }, uniquingKeysWith: { first, _ in first })
        let ids = metadata.map { $0.attributes["account"] ?? "" }
        let opened = await items.openEach(ids.map { (secretItems[$0.storedID]?.secret ?? Data(), secretField($0)) })
        var moving: [OathCredential] = []
        var movingIds: Set<StoredID> = []
        for (index, item) in metadata.enumerated() {
            let id = ids[index]
            do {
                let credential = try JSONDecoder().decode(OathCredential.self, from: item.secret ?? Data())
                guard credential.id.isSameStoredID(as: id) else { throw SealedKeyringItems.Malformed("the item of \(TerminalText.escaped(id)) holds another credential") }
                guard secretItems[id.storedID] != nil else { throw SealedKeyringItems.Malformed("the credential \(TerminalText.escaped(id)) has no secret") }
                let secret = try opened[index].get()
                // Two items of one id (a copy in another collection): the first is moved, both removed.
                if movingIds.insert(credential.storedID).inserted { moving.append(credential.withSecret(secret)) }
            } catch where SealedKeyringItems.isDamage(error) || SealedKeyringItems.isUnknownKey(error) {
                logger.w("Left an OATH credential of the older layout that cannot be read (\(service) \(TerminalText.escaped(id)))", error: error)
            }
        }
        let shelf = try await shelf()
        do { try checkChangeable(shelf) } catch {
            logger.w("Left the older OATH items of \(service) where they are", error: error)
            return
        }
        let kept = Set(shelf.credentials.map(\.storedID))
        let added = moving.filter { !kept.contains($0.storedID) }.sorted(by: OathCredential.oldestFirst)
        if !added.isEmpty { try await write(shelf.credentials + added, after: shelf) }
        for credential in moving {
            _ = try await items.keyring.clear(oldMetadata.merging(["account": credential.id]) { $1 })
            _ = try await items.keyring.clear(oldSecrets.merging(["account": credential.id]) { $1 })
        }
        // A secret with no metadata item is what the older layout left when a process stopped
        // between its two writes (the secret was written first, and deleted last): a store that
        // never finished or a removal that did. No credential can be made of it. Only a secret
        // that opens as this storage's is removed.
        let named = Set(ids.map(\.storedID))
        let orphans = secrets.filter { !named.contains(account($0)) }
        let orphanIds = orphans.map { $0.attributes["account"] ?? "" }
        for (id, result) in zip(orphanIds, await items.openEach(zip(orphans, orphanIds).map { ($0.secret ?? Data(), secretField($1)) })) {
            guard case .success = result else { continue }
            logger.w("Removed an OATH secret of the older layout that no credential names (\(service) \(TerminalText.escaped(id)))", error: nil)
            _ = try await items.keyring.clear(oldSecrets.merging(["account": id]) { $1 })
        }
        logger.i("Moved \(moving.count) OATH credentials into one keyring item (\(service))")
    }
}

extension OathCredential {
    /// The id as the stores tell ids apart: byte for byte (Swift's `==` would take a composed
    /// "é" and a decomposed one for the same id).
    package var storedID: StoredID { id.storedID }

    /// Oldest first, ties by id in byte order: the order every storage lists credentials in
    /// (SQLite's `ORDER BY created_at, id` compares ids by bytes).
    package static func oldestFirst(_ one: OathCredential, _ other: OathCredential) -> Bool {
        (one.createdAt, one.storedID) < (other.createdAt, other.storedID)
    }
}

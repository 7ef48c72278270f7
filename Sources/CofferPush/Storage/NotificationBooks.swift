import CofferMFACommons
import CofferMFAEngine
import CofferStorage
import Foundation
import Synchronization

/// How ``PushKeychainStorage`` keeps notifications on the keyring: one sealed item per
/// credential, its *book*, holding that credential's notifications as one JSON array.
///
/// Why books and not one item per notification (Ping's layout, and Coffer's before 0.4): the
/// Secret Service answers a search with one object per item, and libsecret makes each of them
/// a D-Bus proxy (a round trip each), while gnome-keyring rewrites its whole keyring file on
/// every change. At 1,000 notifications a pending listing read 1,000 items (1.4 s) and a purge
/// of 50 made 50 file rewrites (about 17 ms each). With books a listing reads one item per
/// credential and a purge rewrites one item, and every change is a single item write, which
/// gnome-keyring makes atomically: a process killed at any point leaves the old book or the new.
///
/// | item | attributes | sealed value, bound to |
/// | --- | --- | --- |
/// | a credential's book | `service` (the notification service), `accessGroup`, `kind=notifications`, `credentialId` | `push-book/<service>/<credentialId>` |
/// | the layout mark | `service`, `accessGroup`, `kind=layout` | `push-layout/<service>` |
///
/// Items of the older layout (`account` = a notification's id) are moved into books the first
/// time a process touches the notifications, under the keyring lock: books are written first,
/// then the old items deleted, then the mark; a process killed in between leaves copies that
/// the next move merges (the book's copy wins), never a gap. An old item that cannot be opened
/// is left where it is and logged; removing a credential's notifications or all of them removes
/// it too. Ids of credentials and notifications are told apart byte for byte (``StoredID``), as
/// the keyring tells attributes apart.
final class NotificationBooks: Sendable {
    /// One credential's notifications, as read.
    struct Book: Sendable {
        let credentialId: String
        var notifications: [PushNotification]
    }

    private let service: String
    private let accessGroup: String
    private let items: SealedKeyringItems
    private let logger: any CofferMFACommons.Logger
    /// Set once this process has found nothing of the older layout left (or moved it), so the
    /// check costs one search per process.
    private let layoutChecked = Mutex(false)

    init(service: String, accessGroup: String, items: SealedKeyringItems, logger: any CofferMFACommons.Logger) {
        self.service = service
        self.accessGroup = accessGroup
        self.items = items
        self.logger = logger
    }

    // MARK: - Attributes and bindings

    /// Every item of the notification service in this access group: books, the mark, old items.
    var everything: [String: String] { ["service": service, "accessGroup": accessGroup] }

    /// Everything of one credential: its book and its old-layout items.
    func everything(of credentialId: String) -> [String: String] {
        everything.merging(["credentialId": credentialId]) { $1 }
    }

    private var allBooks: [String: String] { everything.merging(["kind": "notifications"]) { $1 } }
    private func book(_ credentialId: String) -> [String: String] { allBooks.merging(["credentialId": credentialId]) { $1 } }
    private var mark: [String: String] { everything.merging(["kind": "layout"]) { $1 } }
    private func field(_ credentialId: String) -> String { "push-book/\(service)/\(credentialId)" }
    private var markField: String { "push-layout/\(service)" }

    // MARK: - Reading

    /// What a search for books found.
    struct Shelf: Sendable {
        /// The books that open, by credential; two items for one credential (the default
        /// collection changed) are read as one, by notification id.
        var books: [StoredID: Book] = [:]
        /// Credentials whose book is held by more than one item.
        var copied: Set<StoredID> = []
        /// Credentials whose book does not open (damaged, or moved from another item).
        var damaged: [StoredID: any Error] = [:]

        /// The book of `credentialId`, if it has one that opens.
        func book(of credentialId: String) -> Book? { books[credentialId.storedID] }
        /// How many keyring items the search found.
        var items = 0
    }

    /// The books of all credentials, or of one. A damaged book is named in ``Shelf/damaged``;
    /// a keyring or key store that fails, or a locked item, fails the call (never read as "no
    /// notifications").
    func shelf(of credentialId: String? = nil) async throws -> Shelf {
        let found = try await items.keyring.search(credentialId.map(book) ?? allBooks, loadLabels: false)
        guard found.allSatisfy({ !$0.isLocked }) else { throw KeychainError.locked }
        let texts = await items.openEach(found.map { ($0.secret ?? Data(), field($0.attributes["credentialId"] ?? "")) })
        var shelf = Shelf(items: found.count)
        for (item, text) in zip(found, texts) {
            let credentialId = item.attributes["credentialId"] ?? ""
            let key = credentialId.storedID
            do {
                let notifications = try JSONDecoder().decode([PushNotification].self, from: Data(try text.get().utf8))
                guard notifications.allSatisfy({ $0.credentialId.isSameStoredID(as: credentialId) }) else {
                    throw SealedKeyringItems.Malformed("a book of notifications holds another credential's notification")
                }
                if var book = shelf.books[key] {
                    shelf.copied.insert(key)
                    let known = Set(book.notifications.map(\.id.storedID))
                    book.notifications += notifications.filter { !known.contains($0.id.storedID) }
                    shelf.books[key] = book
                } else {
                    shelf.books[key] = Book(credentialId: credentialId, notifications: notifications)
                }
            } catch where SealedKeyringItems.isDamage(error) {
                shelf.damaged[key] = error
            }
        }
        return shelf
    }

    /// Every notification that opens; damaged books are logged and skipped.
    func notifications() async throws -> [PushNotification] {
        try await ensureLayout()
        let shelf = try await shelf()
        for (credentialId, error) in shelf.damaged {
            logger.w("Skipped push notifications that cannot be read (\(service), credential \(credentialId.text))", error: error)
        }
        return shelf.books.values.flatMap(\.notifications)
    }

    /// Throws when `credentialId`'s book cannot be changed safely.
    static func checkChangeable(_ credentialId: String, in shelf: Shelf) throws {
        if let error = shelf.damaged[credentialId.storedID] {
            throw PushStorageError.storageFailure("the notifications of credential \(credentialId) cannot be read; nothing was changed", error)
        }
        if shelf.copied.contains(credentialId.storedID) {
            throw PushStorageError.storageFailure(
                "two keyring items hold the notifications of credential \(credentialId) (the default keyring changed?); "
                    + "they are read together, and change again once one of them is removed", nil)
        }
    }

    // MARK: - Writing (inside the keyring lock)

    /// Replaces `book` in one item write; an empty book is deleted.
    func write(_ book: Book) async throws {
        guard !book.notifications.isEmpty else {
            _ = try await items.keyring.clear(self.book(book.credentialId))
            return
        }
        let json = String(decoding: try JSONEncoder().encode(book.notifications), as: UTF8.self)
        let sealed = try await items.seal(json, boundTo: field(book.credentialId))
        try await items.keyring.store(sealed, attributes: self.book(book.credentialId),
                                      label: "Coffer push notifications (\(service))", contentType: "application/octet-stream")
    }

    /// Removes a credential's book and any item of the older layout left for it; returns how
    /// many notifications they held (a damaged book is removed all the same, and logged). Call
    /// inside the keyring lock.
    func removeAll(of credentialId: String) async throws -> Int {
        let shelf = try await shelf(of: credentialId)
        if let error = shelf.damaged[credentialId.storedID] {
            logger.w("Removed push notifications that could not be read (\(service), credential \(credentialId))", error: error)
        }
        let cleared = try await items.keyring.clear(everything(of: credentialId))
        return (shelf.book(of: credentialId)?.notifications.count ?? 0) + max(0, cleared - shelf.items)
    }

    // MARK: - The older layout

    /// Moves items of the older layout into books, once per keyring (see the type's
    /// documentation). Nothing is written where there is nothing to move.
    func ensureLayout() async throws {
        guard !layoutChecked.withLock({ $0 }) else { return }
        if try await items.keyring.count(mark) == 0, try await !oldItems(loadSecrets: false).isEmpty {
            try await items.exclusively {
                guard try await items.keyring.count(mark) == 0 else { return }
                guard try await moveOldItems() else { return }  // some left for a later process
                let sealed = try await items.seal("books/1", boundTo: markField)
                try await items.keyring.store(sealed, attributes: mark, label: "Coffer push notifications: layout",
                                              contentType: "application/octet-stream")
            }
        }
        layoutChecked.withLock { $0 = true }
    }

    private func oldItems(loadSecrets: Bool) async throws -> [SecretService.Item] {
        try await items.keyring.search(everything, loadSecrets: loadSecrets, loadLabels: false).filter { $0.attributes["kind"] == nil }
    }

    /// Moves what opens; returns whether the layout is done (`false` when a credential's book
    /// is damaged, so its old items stay where they are for a later try). An old item that is
    /// itself damaged stays where it is, logged; a keyring or key store failure stops the move
    /// before anything is deleted.
    private func moveOldItems() async throws -> Bool {
        let old = try await oldItems(loadSecrets: true)
        guard old.allSatisfy({ !$0.isLocked }) else { throw KeychainError.locked }
        let texts = await items.openEach(old.map { ($0.secret ?? Data(), "push/\(service)/\($0.attributes["account"] ?? "")") })
        var moving: [StoredID: [PushNotification]] = [:]
        var seen: Set<StoredID> = []
        for (item, text) in zip(old, texts) {
            let id = item.attributes["account"] ?? ""
            do {
                let notification = try JSONDecoder().decode(PushNotification.self, from: Data(try text.get().utf8))
                guard notification.id.isSameStoredID(as: id) else { throw SealedKeyringItems.Malformed("the item holds the notification \(notification.id)") }
                // Two old items of one id (0.3 kept one per message id and notification id): the first is kept, both are removed.
                if seen.insert(id.storedID).inserted { moving[notification.credentialId.storedID, default: []].append(notification) }
            } catch where SealedKeyringItems.isDamage(error) {
                logger.w("Left a push notification of the older layout that cannot be read (\(service) \(id))", error: error)
            }
        }
        var done = true
        var moved: Set<StoredID> = []
        for (key, notifications) in moving.sorted(by: { $0.key < $1.key }) {
            let credentialId = key.text
            let shelf = try await shelf(of: credentialId)
            do { try Self.checkChangeable(credentialId, in: shelf) } catch {
                logger.w("Left the older items of credential \(credentialId) where they are (\(service))", error: error)
                done = false
                continue
            }
            var book = shelf.book(of: credentialId) ?? Book(credentialId: credentialId, notifications: [])
            let kept = Set(book.notifications.map(\.id.storedID))
            book.notifications += notifications.filter { !kept.contains($0.id.storedID) }
            try await write(book)
            moved.formUnion(notifications.map(\.id.storedID))
        }
        for item in old where moved.contains((item.attributes["account"] ?? "").storedID) {
            _ = try await items.keyring.clear(everything.merging(["account": item.attributes["account"] ?? ""]) { $1 })
        }
        logger.i("Moved \(moved.count) push notifications into one keyring item per credential (\(service))")
        return done
    }
}

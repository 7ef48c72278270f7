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
/// it too.
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
    /// Set once this process has seen the layout mark, so the check costs one search per process.
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

    /// Every book that can be read; one that cannot is logged and skipped.
    func readable() async throws -> [Book] {
        try await ensureLayout()
        var books: [Book] = []
        for result in try await open(try await items.keyring.search(allBooks, loadLabels: false)) {
            switch result {
            case .success(let book): books.append(book)
            case .failure(let error): logger.w("Skipped push notifications that cannot be read (\(service))", error: error)
            }
        }
        return books
    }

    /// Every notification that can be read.
    func notifications() async throws -> [PushNotification] {
        try await readable().flatMap(\.notifications)
    }

    /// Every book, for a change: one that cannot be read fails the change, so it is never
    /// overwritten with less than it holds. Call inside the keyring lock.
    func forChange() async throws -> [Book] {
        try await open(try await items.keyring.search(allBooks, loadLabels: false)).map { try $0.get() }
    }

    /// The book of `credentialId` (empty when there is none), for a change.
    func forChange(of credentialId: String) async throws -> Book {
        let found = try await items.keyring.search(book(credentialId), loadLabels: false)
        guard found.count <= 1 else { throw KeychainError.ambiguous(attributes: book(credentialId), count: found.count) }
        return try await open(found).first.map { try $0.get() } ?? Book(credentialId: credentialId, notifications: [])
    }

    private func open(_ found: [SecretService.Item]) async throws -> [Result<Book, any Error>] {
        var counts: [String: Int] = [:]
        for item in found { counts[item.attributes["credentialId"] ?? "", default: 0] += 1 }
        let sealed = try found.map { item throws -> (sealed: Data, field: String) in
            guard !item.isLocked else { throw KeychainError.locked }
            return (item.secret ?? Data(), field(item.attributes["credentialId"] ?? ""))
        }
        let texts = await items.openEach(sealed)
        return zip(found, texts).map { item, text in
            Result {
                let credentialId = item.attributes["credentialId"] ?? ""
                guard counts[credentialId] == 1 else {
                    throw PushStorageError.storageFailure("the keyring holds \(counts[credentialId] ?? 0) books of notifications for one credential", nil)
                }
                let notifications = try JSONDecoder().decode([PushNotification].self, from: Data(try text.get().utf8))
                guard notifications.allSatisfy({ $0.credentialId == credentialId }) else {
                    throw PushStorageError.storageFailure("a book of notifications holds another credential's notification", nil)
                }
                return Book(credentialId: credentialId, notifications: notifications)
            }
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
    /// many notifications they held (a book that cannot be read is removed all the same, and
    /// logged). Call inside the keyring lock.
    func removeAll(of credentialId: String) async throws -> Int {
        let found = try await items.keyring.search(book(credentialId), loadLabels: false)
        var held = 0
        for result in try await open(found) {
            switch result {
            case .success(let book): held += book.notifications.count
            case .failure(let error): logger.w("Removed push notifications that could not be read (\(service))", error: error)
            }
        }
        let cleared = try await items.keyring.clear(everything(of: credentialId))
        return held + max(0, cleared - found.count)
    }

    // MARK: - The older layout

    /// Moves items of the older layout into books, once per keyring (see the type's documentation).
    func ensureLayout() async throws {
        guard !layoutChecked.withLock({ $0 }) else { return }
        if try await items.keyring.count(mark) == 0 {
            try await items.exclusively {
                guard try await items.keyring.count(mark) == 0 else { return }
                try await moveOldItems()
                let sealed = try await items.seal("books/1", boundTo: markField)
                try await items.keyring.store(sealed, attributes: mark, label: "Coffer push notifications: layout",
                                              contentType: "application/octet-stream")
            }
        }
        layoutChecked.withLock { $0 = true }
    }

    private func moveOldItems() async throws {
        let old = try await items.keyring.search(everything, loadLabels: false).filter { $0.attributes["kind"] == nil }
        guard !old.isEmpty else { return }
        let texts = await items.openEach(old.map { ($0.secret ?? Data(), "push/\(service)/\($0.attributes["account"] ?? "")") })
        var moving: [String: [(id: String, notification: PushNotification)]] = [:]
        for (item, text) in zip(old, texts) {
            let id = item.attributes["account"] ?? ""
            do {
                guard !item.isLocked else { throw KeychainError.locked }
                let notification = try JSONDecoder().decode(PushNotification.self, from: Data(try text.get().utf8))
                guard notification.id == id else { throw PushStorageError.storageFailure("the item holds the notification \(notification.id)", nil) }
                moving[notification.credentialId, default: []].append((id, notification))
            } catch {
                logger.w("Left a push notification of the older layout that cannot be read (\(service) \(id))", error: error)
            }
        }
        for (credentialId, entries) in moving.sorted(by: { $0.key < $1.key }) {
            var book = try await forChange(of: credentialId)
            let kept = Set(book.notifications.map(\.id))
            book.notifications += entries.map(\.notification).filter { !kept.contains($0.id) }
            try await write(book)
        }
        for entries in moving.values {
            for entry in entries { _ = try await items.keyring.clear(everything.merging(["account": entry.id]) { $1 }) }
        }
        logger.i("Moved \(moving.values.map(\.count).reduce(0, +)) push notifications into one keyring item per credential (\(service))")
    }
}

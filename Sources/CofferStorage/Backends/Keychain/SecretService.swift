import CLibSecret
import Foundation

/// A connection to the freedesktop Secret Service (gnome-keyring, KeePassXC, KWallet's bridge),
/// through libsecret loaded at run time.
///
/// Items are identified by their string attributes. Coffer's backends store into the default
/// collection and search all collections; nothing here ever shows an unlock prompt: a locked
/// collection or item is reported as ``KeychainError/locked``.
///
/// Every call runs on a keyring thread of its own (never Swift's cooperative pool) and is
/// cancelled after ``timeout``.
public struct SecretService: Sendable {
    /// How long one call may take before it is cancelled with ``KeychainError/timedOut``.
    public var timeout: Duration

    /// Creates a connection handle. Nothing is contacted until the first call.
    public init(timeout: Duration = SecretService.defaultTimeout) {
        self.timeout = timeout
    }

    /// How long a keyring call may take when its caller names no timeout: the whole number of
    /// seconds (1 to 3600) in the environment variable `COFFER_KEYRING_TIMEOUT`, else 10 seconds.
    /// Raise it for a keyring that answers slowly (one shared by many busy programs, a remote
    /// provider); a value that is not such a number is ignored.
    public static let defaultTimeout: Duration = EnvironmentTimeout.named("COFFER_KEYRING_TIMEOUT")

    /// Whether the default collection can be used now.
    public enum CollectionState: Sendable, Equatable {
        /// It exists and is unlocked.
        case unlocked
        /// It exists and is locked.
        case locked
    }

    /// An item found by ``search(_:loadSecrets:loadAttributes:loadLabels:)``.
    public struct Item: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// The item's attributes.
        public var attributes: [String: String]
        /// The label a keyring manager shows.
        public var label: String
        /// Whether the item is locked (its secret is then `nil`).
        public var isLocked: Bool
        /// The secret's bytes, when asked for and unlocked.
        public var secret: Data?
        /// The item's D-Bus object path. While one provider process runs, no other item gets
        /// it (``provider()`` tells when another runs); a restarted provider may give it to
        /// another item.
        public var path: String = ""

        /// The item's label, attributes and lock state; the secret shows only as `<redacted>` (or `nil`),
        /// so an item can be logged safely.
        public var description: String {
            "SecretService.Item(label: \(label), attributes: \(attributes), locked: \(isLocked), secret: "
                + (secret == nil ? "nil" : "<redacted>") + ")"
        }

        /// The same as ``description``: the secret stays redacted in `debugPrint`.
        public var debugDescription: String { description }

        /// A mirror without the secret, so `dump(_:)` and the debugger cannot reveal it.
        public var customMirror: Mirror {
            Mirror(self, children: ["label": label, "attributes": attributes, "isLocked": isLocked,
                                    "secret": secret == nil ? "nil" : "<redacted>"])
        }
    }

    /// Why libsecret cannot be loaded, or `nil` when it can.
    public static var libraryProblem: String? {
        coffer_secret_load().map { String(cString: $0) }
    }

    /// The state of the default collection.
    ///
    /// - Throws: ``KeychainError/unavailable(reason:)`` when there is no keyring to talk to or
    ///   no default collection, or another ``KeychainError``.
    public func defaultCollectionState() async throws(KeychainError) -> CollectionState {
        try await BlockingCallRunner.run(timeout: timeout) { cancellable throws(SecretCallError) in
            try Self.collectionState(cancellable)
        }
    }

    /// `nil` when the keyring can store and read secrets now, else why not. Blocks the calling
    /// thread for at most ``timeout`` (plus a short grace period).
    public func usabilityProblem() -> KeychainError? {
        do {
            let state = try BlockingCallRunner.runAndWait(timeout: timeout) { cancellable throws(SecretCallError) in
                try Self.collectionState(cancellable)
            }
            return state == .locked ? .locked : nil
        } catch {
            return error
        }
    }

    /// Stores `secret` under `attributes`, replacing the item that has exactly these attributes.
    ///
    /// The item goes into the default collection, or replaces one there. When the default
    /// collection holds no such item but exactly one other collection item does (the user made
    /// another keyring the default since it was written), that item is changed in place, so a
    /// store never leaves a second copy beside the first; if that item's collection is locked,
    /// the store fails with ``KeychainError/locked`` and writes nothing.
    public func store(_ secret: Data, attributes: [String: String], label: String, contentType: String) async throws(KeychainError) {
        await KeyringFaults.beforeWrite?(.store, attributes)
        try await BlockingCallRunner.run(timeout: timeout) { cancellable throws(SecretCallError) in
            try Self.store(secret, attributes: attributes, label: label, contentType: contentType, cancellable)
        }
    }

    /// The items that have all of `attributes` (and perhaps others), in every collection.
    ///
    /// - Parameters:
    ///   - attributes: What every item found has (equality; the Secret Service has no other query).
    ///   - loadSecrets: Whether to read the unlocked items' secrets (one call for all of them).
    ///   - loadAttributes: Whether to read each item's attributes; without, ``Item/attributes``
    ///     is empty and the search makes one call per item fewer (for a caller that needs only
    ///     the secret of the item these attributes name).
    ///   - loadLabels: Whether to read each item's label; without, ``Item/label`` is empty and
    ///     the search makes one call per item fewer.
    public func search(
        _ attributes: [String: String], loadSecrets: Bool = true, loadAttributes: Bool = true, loadLabels: Bool = true
    ) async throws(KeychainError) -> [Item] {
        try await BlockingCallRunner.run(timeout: timeout) { cancellable throws(SecretCallError) in
            try Self.search(attributes, loadSecrets: loadSecrets, loadAttributes: loadAttributes, loadLabels: loadLabels, cancellable)
        }
    }

    /// The attributes and labels of the items at `paths` (found by a search made without
    /// them), in the same order; their secrets are not loaded and ``Item/isLocked`` is `false`.
    /// One call per item and property, sent together. An item deleted since it was found is
    /// left out.
    public func read(paths: [String]) async throws(KeychainError) -> [Item] {
        guard !paths.isEmpty else { return [] }
        return try await BlockingCallRunner.run(timeout: timeout) { cancellable throws(SecretCallError) in
            do throws(SecretCallError) {
                return try Self.read(paths, cancellable)
            } catch where error.isVanishedItem {
                // One by one, leaving out those that are gone (rare: deleted between the search and now).
                var items: [Item] = []
                for path in paths {
                    do throws(SecretCallError) {
                        items += try Self.read([path], cancellable)
                    } catch where error.isVanishedItem {}
                }
                return items
            }
        }
    }

    /// Who answers for the Secret Service now: the session bus's id and the unique bus name of
    /// the provider's process. It changes whenever the provider (or the bus) is restarted, and
    /// only then; what is known about the items by their ``Item/path`` holds while it stays the same.
    public func provider() async throws(KeychainError) -> String {
        try await BlockingCallRunner.run(timeout: timeout) { cancellable throws(SecretCallError) in
            var error = coffer_secret_error()
            var id: UnsafeMutablePointer<CChar>?
            let status = coffer_secret_provider(cancellable, &id, &error)
            defer { free(id) }
            guard status == Int32(COFFER_SECRET_OK), let id else { throw SecretCallError(status: status, error: &error) }
            return String(cString: id)
        }
    }

    /// How many items have all of `attributes`, locked or not. Cheaper than ``search(_:loadSecrets:loadAttributes:loadLabels:)``
    /// when the items themselves are not needed: nothing is loaded per item.
    public func count(_ attributes: [String: String]) async throws(KeychainError) -> Int {
        try await BlockingCallRunner.run(timeout: timeout) { cancellable throws(SecretCallError) in
            var error = coffer_secret_error()
            var count = 0
            let status = Self.withAttributes(attributes) { list, length in
                coffer_secret_count(list, length, cancellable, &count, &error)
            }
            guard status == Int32(COFFER_SECRET_OK) else { throw SecretCallError(status: status, error: &error) }
            return count
        }
    }

    /// Deletes the items that have all of `attributes`; returns how many. Deleting nothing
    /// succeeds with 0. When one of them is locked, nothing is deleted and ``KeychainError/locked``
    /// is thrown.
    @discardableResult
    public func clear(_ attributes: [String: String]) async throws(KeychainError) -> Int {
        await KeyringFaults.beforeWrite?(.clear, attributes)
        return try await BlockingCallRunner.run(timeout: timeout) { cancellable throws(SecretCallError) in
            try Self.clear(attributes, cancellable)
        }
    }

    /// Locks the default collection. Unlocking needs the user (or the provider's own tools).
    public func lockDefaultCollection() async throws(KeychainError) {
        try await BlockingCallRunner.run(timeout: timeout) { cancellable throws(SecretCallError) in
            var error = coffer_secret_error()
            let status = coffer_secret_lock_default(cancellable, &error)
            guard status == Int32(COFFER_SECRET_OK) else { throw SecretCallError(status: status, error: &error) }
        }
    }

    /// Runs several keyring calls as one unit on a keyring thread, under one deadline. `body`
    /// gets a ``Calls`` handle to make them.
    func perform<R: Sendable>(_ body: @escaping @Sendable (Calls) throws(SecretCallError) -> R) async throws(KeychainError) -> R {
        try await BlockingCallRunner.run(timeout: timeout) { cancellable throws(SecretCallError) in
            try body(Calls(cancellable: cancellable))
        }
    }

    /// Synchronous keyring calls, for use inside ``perform(_:)`` only.
    struct Calls {
        let cancellable: UnsafeMutableRawPointer?

        func search(_ attributes: [String: String], loadSecrets: Bool = true, loadLabels: Bool = true) throws(SecretCallError) -> [Item] {
            try SecretService.search(attributes, loadSecrets: loadSecrets, loadLabels: loadLabels, cancellable)
        }

        func store(_ secret: Data, attributes: [String: String], label: String, contentType: String) throws(SecretCallError) {
            try SecretService.store(secret, attributes: attributes, label: label, contentType: contentType, cancellable)
        }

        func clear(_ attributes: [String: String]) throws(SecretCallError) -> Int {
            try SecretService.clear(attributes, cancellable)
        }
    }

    // MARK: - Blocking calls (keyring threads only)

    private static func collectionState(_ cancellable: UnsafeMutableRawPointer?) throws(SecretCallError) -> CollectionState {
        var error = coffer_secret_error()
        let status = coffer_secret_default_collection_state(cancellable, &error)
        switch status {
        case Int32(COFFER_SECRET_OK): return .unlocked
        case Int32(COFFER_SECRET_LOCKED): return .locked
        default: throw SecretCallError(status: status, error: &error)
        }
    }

    private static func store(
        _ secret: Data, attributes: [String: String], label: String, contentType: String,
        _ cancellable: UnsafeMutableRawPointer?
    ) throws(SecretCallError) {
        // A store first looks for the item to replace (in another collection than the default,
        // it is changed in place); one deleted meanwhile is looked for again.
        try retryingVanishedItems(cancellable) { () throws(SecretCallError) in
            var error = coffer_secret_error()
            let status = withAttributes(attributes) { list, count in
                secret.withUnsafeBytes { bytes in
                    coffer_secret_store(
                        list, count, label, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count,
                        contentType, cancellable, &error)
                }
            }
            guard status == Int32(COFFER_SECRET_OK) else { throw SecretCallError(status: status, error: &error) }
        }
    }

    /// Runs `body` again when an item it found vanished before it could be read: another
    /// process deleted or replaced it in between, and a new search sees the keyring as it is
    /// now. Another process that keeps changing the items can make several searches in a row
    /// miss, the more so on a loaded machine where each search takes longer; so the retries go
    /// on, each after a pause that grows to 50 ms, until the call's deadline cancels it (then
    /// the vanished item is the error reported, and the caller sees a timeout), or 200 attempts.
    private static func retryingVanishedItems<R>(
        _ cancellable: UnsafeMutableRawPointer?, _ body: () throws(SecretCallError) -> R
    ) throws(SecretCallError) -> R {
        var (attempt, pause) = (1, 1)
        while true {
            do {
                return try body()
            } catch where error.isVanishedItem && attempt < 200 && coffer_secret_cancellable_is_cancelled(cancellable) == 0 {
                usleep(useconds_t(pause * 1000))
                (attempt, pause) = (attempt + 1, min(pause * 2, 50))
            }
        }
    }

    private static func search(
        _ attributes: [String: String], loadSecrets: Bool, loadAttributes: Bool = true, loadLabels: Bool, _ cancellable: UnsafeMutableRawPointer?
    ) throws(SecretCallError) -> [Item] {
        try retryingVanishedItems(cancellable) { () throws(SecretCallError) in
            try searchOnce(attributes, loadSecrets: loadSecrets, loadAttributes: loadAttributes, loadLabels: loadLabels, cancellable)
        }
    }

    private static func searchOnce(
        _ attributes: [String: String], loadSecrets: Bool, loadAttributes: Bool, loadLabels: Bool, _ cancellable: UnsafeMutableRawPointer?
    ) throws(SecretCallError) -> [Item] {
        var error = coffer_secret_error()
        var found: UnsafeMutablePointer<coffer_secret_item>?
        var count = 0
        let status = withAttributes(attributes) { list, attributeCount in
            coffer_secret_search(list, attributeCount, loadSecrets ? 1 : 0, loadAttributes ? 1 : 0, loadLabels ? 1 : 0, cancellable, &found, &count, &error)
        }
        defer { coffer_secret_items_free(found, count) }
        guard status == Int32(COFFER_SECRET_OK) else { throw SecretCallError(status: status, error: &error) }
        return (0..<count).map { item(found![$0]) }
    }

    private static func read(_ paths: [String], _ cancellable: UnsafeMutableRawPointer?) throws(SecretCallError) -> [Item] {
        var error = coffer_secret_error()
        var found: UnsafeMutablePointer<coffer_secret_item>?
        let copies = paths.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let status = copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { list in
            coffer_secret_read(list.baseAddress, list.count, cancellable, &found, &error)
        }
        defer { coffer_secret_items_free(found, paths.count) }
        guard status == Int32(COFFER_SECRET_OK) else { throw SecretCallError(status: status, error: &error) }
        return (0..<paths.count).map { item(found![$0]) }
    }

    /// An item copied out of the C shim's answer.
    private static func item(_ item: coffer_secret_item) -> Item {
        var attributes: [String: String] = [:]
        for a in 0..<item.attribute_count {
            attributes[String(cString: item.keys[a]!)] = String(cString: item.values[a]!)
        }
        return Item(
            attributes: attributes,
            label: String(cString: item.label),
            isLocked: item.locked != 0,
            secret: item.secret.map { Data(bytes: $0, count: item.secret_length) },
            path: String(cString: item.path))
    }

    private static func clear(_ attributes: [String: String], _ cancellable: UnsafeMutableRawPointer?) throws(SecretCallError) -> Int {
        try retryingVanishedItems(cancellable) { () throws(SecretCallError) in try clearOnce(attributes, cancellable) }
    }

    private static func clearOnce(_ attributes: [String: String], _ cancellable: UnsafeMutableRawPointer?) throws(SecretCallError) -> Int {
        var error = coffer_secret_error()
        var deleted = 0
        let status = withAttributes(attributes) { list, count in
            coffer_secret_clear(list, count, cancellable, &deleted, &error)
        }
        guard status == Int32(COFFER_SECRET_OK) else { throw SecretCallError(status: status, error: &error) }
        return deleted
    }

    /// Calls `body` with `attributes` as a C array whose strings live for the call.
    private static func withAttributes<R>(
        _ attributes: [String: String], _ body: (UnsafePointer<coffer_secret_attribute>, Int) -> R
    ) -> R {
        let strings = attributes.sorted { $0.key < $1.key }.map { (strdup($0.key)!, strdup($0.value)!) }
        defer { for (key, value) in strings { free(key); free(value) } }
        let list = strings.map { coffer_secret_attribute(key: $0.0, value: $0.1) }
        return list.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
    }
}

import CofferStorage
import Foundation

/// How the client lists: paths and secrets from the keyring, attributes from the item index
/// (``KeyringItemIndex``) where it knows them, and the index kept up to date.
extension KeychainStorageClient {
    /// A search a listing makes: the attributes every item found has, and whether their
    /// secrets are needed.
    struct ListingSearch {
        var attributes: [String: String]
        var loadSecrets: Bool
    }

    /// The items each of `searches` (each naming a `service`) finds, with their attributes:
    /// from the index of that service's items where it knows the item's path, read from the
    /// keyring (and then remembered) where it does not. Items deleted while the listing runs are
    /// left out. Labels are not read (see ``relabelled(_:)``).
    func listing(_ searches: [ListingSearch], attempt: Int = 1) throws -> [[SecretService.Item]] {
        let secretService = self.secretService
        // The indexes are read before the searches, so an indexed path a search no longer finds
        // is an item deleted since (paths are not reused while the provider runs).
        let provider = try SyncBridge.run { try await secretService.provider() }
        KeychainListingFaults.afterProviderCheck.withLock { $0 }?()
        var indexes: [String: KeyringItemIndex] = [:]
        var untidy: Set<String> = []
        for service in Set(searches.compactMap { $0.attributes["service"] }).sorted() {
            let (index, tidy) = readIndex(of: service)
            if readsItemIndex, attempt < 3 { indexes[service] = index.flatMap { $0.provider == provider ? $0 : nil } }
            if !tidy { untidy.insert(service) }
        }
        let known = indexes.values.reduce(into: [String: [String: String]]()) { $0.merge($1.attributes) { first, _ in first } }
        var found = try searches.map { search in
            try SyncBridge.run {
                try await secretService.search(search.attributes, loadSecrets: search.loadSecrets, loadAttributes: false, loadLabels: false)
            }
        }
        // A provider restarted between the first question and the searches may have given an
        // indexed path to another item: then the listing starts again (at the third time,
        // without the indexes).
        guard try attempt >= 3 || SyncBridge.run({ try await secretService.provider() }) == provider else {
            return try listing(searches, attempt: attempt + 1)
        }
        let unknown = found.joined().map(\.path).filter { known[$0] == nil }
        var learned: [String: [String: String]] = [:]
        for item in try SyncBridge.run({ try await secretService.read(paths: unknown) }) {
            learned[item.path] = item.attributes
        }
        found = found.map { items in
            items.compactMap { item in
                guard let attributes = known[item.path] ?? learned[item.path] else { return nil }  // deleted meanwhile
                var item = item
                item.attributes = attributes
                return item
            }
        }
        let present = Set(found.joined().map(\.path))
        for search in searches {
            guard let service = search.attributes["service"] else { continue }
            let gone = (indexes[service]?.attributes ?? [:]).filter { path, attributes in
                !present.contains(path) && search.attributes.allSatisfy { attributes[$0.key] == $0.value }
            }
            let new = learned.filter { $0.value["service"] == service }
            if !new.isEmpty || !gone.isEmpty || untidy.contains(service) {
                remember(new, of: service, provider: provider, forgetting: Set(gone.keys))
            }
        }
        return found
    }

    /// `items` with their labels and attributes as the keyring has them now, for judging again
    /// and reporting the few a listing could not open; those deleted since are left out.
    func relabelled(_ items: [SecretService.Item]) -> [SecretService.Item] {
        guard !items.isEmpty else { return [] }
        let secretService = self.secretService
        guard let current = try? SyncBridge.run({ try await secretService.read(paths: items.map(\.path)) }) else { return items }
        let byPath = Dictionary(current.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        return items.compactMap { item in
            guard let now = byPath[item.path] else { return nil }
            var item = item
            item.attributes = now.attributes
            item.label = now.label
            return item
        }
    }

    /// Removes the items with `attributes` (the lock held) and, when none of their kind is left,
    /// that kind's index too, so a client emptied through its API (a `coffer migrate` away from
    /// the keyring) leaves nothing behind. Returns how many items were removed.
    func removeItems(_ attributes: [String: String]) throws -> Int {
        let removed = try clearItems(attributes)
        if removed > 0, let service = attributes["service"] {
            let secretService = self.secretService
            if try SyncBridge.run({ try await secretService.count(["service": service]) }) == 0 {
                _ = try clearItems(indexAttributes(service))
            }
        }
        return removed
    }

    /// The attributes of the index item of the items of `service`.
    private func indexAttributes(_ service: String) -> [String: String] {
        ["service": self.service("index"), "kind": service]
    }

    /// The index of the items of `service` in the keyring (`nil` when there is none or none
    /// can be used, which is logged), and whether it is tidy: at most one index item, and that
    /// one opens. Items that are not (copies in several collections, damaged or crafted ones)
    /// are replaced by the next listing's one.
    func readIndex(of service: String) -> (index: KeyringItemIndex?, tidy: Bool) {
        do {
            let secretService = self.secretService, attributes = indexAttributes(service)
            let items = try SyncBridge.run { try await secretService.search(attributes, loadSecrets: true, loadAttributes: false, loadLabels: false) }
            for item in items where !item.isLocked {
                if let text = try? openText(item, identity: KeyringItemIndex.identity(of: service)), let index = KeyringItemIndex(text: text),
                   index.service == service {
                    return (index, items.count == 1)
                }
            }
            if !items.isEmpty { diagnostics.note("the keyring's item index cannot be opened; listings read every item's attributes", operation: "read the item index") }
            return (nil, items.isEmpty)
        } catch {
            diagnostics.note("the keyring's item index cannot be read (\(error)); listings read every item's attributes", operation: "read the item index")
            return (nil, true)
        }
    }

    /// Adds `learned` to the index of `service`'s items and drops the `gone` paths, holding the
    /// client's lock, so two listings that learn different items keep both. A failure is
    /// logged: the listing stands, and the next one reads those attributes again.
    private func remember(_ learned: [String: [String: String]], of service: String, provider: String, forgetting gone: Set<String>) {
        // Hashed attributes (a keyring locked as loaded from disk) are not the item's own.
        let learned = learned.filter { _, attributes in !attributes.keys.contains { $0.hasPrefix("gkr:compat:hashed:") } }
        do {
            try exclusively {
                let (found, tidy) = readIndex(of: service)
                let current = found.flatMap { $0.provider == provider ? $0 : nil }
                var index = current ?? KeyringItemIndex(service: service, provider: provider, attributes: [:])
                index.attributes.merge(learned) { _, new in new }
                for path in gone { index.attributes[path] = nil }
                guard index != current || !tidy else { return }
                if !tidy || index.attributes.isEmpty {  // copies, damaged or crafted items; or every item it knew is gone
                    _ = try clearItems(indexAttributes(service))
                }
                if !index.attributes.isEmpty {
                    try storeText(index.text, identity: KeyringItemIndex.identity(of: service), attributes: indexAttributes(service),
                                  label: "Item index of \(service)")
                }
            }
        } catch {
            diagnostics.note("the keyring's item index could not be updated (\(error)); the next listing reads those attributes again",
                             operation: "update the item index")
        }
    }
}

import CofferStorage
import Foundation

/// What ``KeychainStorageClient``'s listings remember of the keyring's items: their attributes,
/// by object path, for the one provider process that gave those paths.
///
/// The Secret Service finds the paths of every item of a kind in one call and reads all their
/// secrets in one more, but it hands out an item's attributes one item per call (gnome-keyring:
/// about 0.3 ms each, most of a listing of a thousand items), and a listing needs them: a record
/// opens only under the identity its item's attributes name, and the check for mechanisms whose
/// account is gone compares their owner attributes. So a sealed item per kind of item (`service`
/// `<prefix>.index`, `kind` the items' `service`) keeps the attributes a listing read, and the
/// next listing reads only the attributes of items the index does not know.
///
/// It is a cache, not a record: nothing is ever read from it but attributes, and it is trusted
/// only as far as it cannot be wrong:
/// - It names the provider process (``SecretService/provider()``: the bus's id and the process's
///   unique name). While that process runs, an item's path is never given to another item
///   (gnome-keyring numbers them upward; KeePassXC uses UUIDs) and Coffer never changes an
///   item's attributes, so what the index says of a path stays true. After a restart, when a
///   path may name another item, an index of the old process is not used at all; a listing
///   asks again after its searches, and starts again if the provider restarted meanwhile.
/// - What it cannot see: attributes another program changed in place
///   (`org.freedesktop.DBus.Properties.Set`; keyring managers such as Seahorse change labels
///   and secrets, not attributes). A listing goes on showing such an item by its old
///   attributes (under its own sealed name: lookups by the new ones fail loudly) until the
///   daemon restarts or a client made by ``KeychainStorageClient/withoutItemIndex()`` lists,
///   which reads every item's attributes, reports the mismatch and corrects the index. That is
///   what `coffer doctor` does.
/// - Items it does not know (stored since by a process killed before it listed, by an older
///   Coffer, by another tool) have their attributes read, and the listing adds them to it.
/// - A record that does not open under the attributes it names has its own attributes read
///   again before it is reported, so an item whose attributes another tool changed is judged by
///   what it has now.
/// - It is sealed and bound like every record; one that does not open is not used, and several
///   of a kind (copies in two collections, crafted ones) are replaced by one at the next listing:
///   it holds nothing that cannot be read again.
struct KeyringItemIndex: Equatable {
    /// The `service` attribute of the items it knows: one index per kind of item, so a listing
    /// of accounts does not read what is known of every notification.
    var service: String
    /// ``SecretService/provider()`` when the paths were read.
    var provider: String
    /// Each known item's attributes, by object path.
    var attributes: [String: [String: String]]

    private static let header = "coffer-keyring-index 1"

    init(service: String, provider: String, attributes: [String: [String: String]]) {
        self.service = service
        self.provider = provider
        self.attributes = attributes
    }

    /// The sealed identity of the index of the items of `service`: an index copied onto
    /// another kind's index item does not open.
    static func identity(of service: String) -> String { "index/" + service }

    /// The index as sealed: a header line, the service and provider lines, then a line per
    /// item: its path and its attributes' names and values but `service`, separated by tabs
    /// (`\`, tab and newline escaped as `\\`, `\t`, `\n`). Not JSON: a thousand items decode
    /// in a tenth of JSONDecoder's 20 ms.
    var text: String {
        var text = Self.header + "\n" + Self.escaped(service) + "\n" + Self.escaped(provider) + "\n"
        for (path, attributes) in attributes.sorted(by: { $0.key < $1.key }) {
            text += Self.escaped(path)
            for (name, value) in attributes.sorted(by: { $0.key < $1.key }) where name != "service" {
                text += "\t" + Self.escaped(name) + "\t" + Self.escaped(value)
            }
            text += "\n"
        }
        return text
    }

    /// Reads ``text``; `nil` when it is not an index this version wrote.
    init?(text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
        guard lines.popFirst() == Substring(Self.header), let service = lines.popFirst().map(Self.unescaped),
              let provider = lines.popFirst(), lines.popLast() == "" else { return nil }
        var attributes: [String: [String: String]] = [:]
        attributes.reserveCapacity(lines.count)
        for line in lines {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count % 2 == 1 else { return nil }
            var item = ["service": service]
            var index = 1
            while index < fields.count {
                item[Self.unescaped(fields[index])] = Self.unescaped(fields[index + 1])
                index += 2
            }
            attributes[Self.unescaped(fields[0])] = item
        }
        self.init(service: service, provider: Self.unescaped(provider), attributes: attributes)
    }

    private static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A }) else { return text }
        return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func unescaped(_ text: Substring) -> String {
        guard text.utf8.contains(0x5C) else { return String(text) }
        var result = ""
        var escaping = false
        for character in text {
            if escaping {
                result.append(character == "t" ? "\t" : character == "n" ? "\n" : character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}

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
        for (search, service) in zip(searches, searches.map { $0.attributes["service"] }) {
            guard let service else { continue }
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

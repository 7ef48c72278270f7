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

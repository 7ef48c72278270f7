import ArgumentParser
import CofferAuthenticator
import Foundation

/// `coffer trash`: what was removed, replaced or renamed in the last 30 days.
struct TrashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trash",
        abstract: "List what remove, add --replace, an overwriting import and rename took away (kept 30 days).",
        discussion: """
            Each entry has an id for coffer restore. Entries are sealed like the accounts, and \
            purged after 30 days ($COFFER_TRASH_DAYS changes it; --empty purges them now). Only \
            the sqlite backend (the default) keeps a trash.

            Examples:
              coffer trash
              coffer trash --json
              coffer trash --empty                  # the secrets in it are gone for good
              coffer restore 1a2b3c4d
            """)

    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Purge every entry now.") var empty = false
    @OptionGroup var options: AuthenticatorOptions

    struct Listed: Encodable {
        let id: String
        let trashedAt: Date
        let reason: String
        let issuer: String
        let accountName: String
        let types: [String]
        /// Whether the entry keeps the account's details (a note an import replaced, say).
        let keepsDetails: Bool
    }

    func run() async throws {
        try await reportingErrors {
            let (authenticator, _) = try options.open()
            guard let trash = authenticator.trash as? SealedTrashDirectory else {
                throw CommandFailure("only the sqlite backend keeps a trash; with \(try options.backend().rawValue), a removal is final")
            }
            if empty {
                // Entries that wait for the key are not purged unseen: the key comes first.
                if let waiting = trash.keyFailure(waiting: try trash.damaged().count) {
                    throw CommandFailure("\(waiting.description) Nothing was purged.", status: waiting.status)
                }
                let purged = try trash.empty()
                print("Purged \(purged) \(purged == 1 ? "entry" : "entries") from the trash.")
                return
            }
            let entries = try trash.entries()
            let damaged = try trash.damaged()
            if let waiting = trash.keyFailure(waiting: damaged.count) { throw waiting }
            for file in damaged {
                StandardStreams.note("coffer: warning: trash/\(file.name) is not an entry that opens (\(file.why)); move it aside to keep it, "
                    + "or coffer trash --empty purges it with the rest")
            }
            let listed = entries.map {
                Listed(id: $0.id, trashedAt: $0.trashedAt, reason: $0.reason, issuer: $0.account.shownIssuer,
                       accountName: $0.account.shownAccountName, types: $0.mechanisms.map(\.type.rawValue),
                       keepsDetails: $0.account.details != nil)
            }
            if json {
                try JSONOutput.print(listed)
                return
            }
            guard !entries.isEmpty else {
                print("The trash is empty.")
                return
            }
            let format = Date.ISO8601FormatStyle()
            for entry in listed {
                let what = entry.types.isEmpty ? (entry.keepsDetails ? "names, note and groups" : "names")
                                               : entry.types.map { $0.uppercased() }.joined(separator: ", ")
                print("\(entry.id)  \(entry.trashedAt.formatted(format))  \(entry.reason)  \(entry.issuer): \(entry.accountName) (\(what))")
            }
        }
    }
}

/// `coffer restore ID`: brings back what `remove`, `--replace`, `import` or `rename` took away.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Bring back an entry of the trash.",
        discussion: """
            A removed account comes back with its mechanisms; a replaced mechanism comes back in \
            place of the one that replaced it (which goes to the trash, so this too can be \
            undone) when --replace is given; a rename is undone. A HOTP counter never goes back: \
            a restored mechanism keeps the highest counter the store has seen for it, so no code \
            the server has seen is issued again.

            The entry is named by its id or by its account, as other commands name accounts; \
            a name that several entries have is ambiguous (exit 3): the message lists their ids.

            Examples:
              coffer trash
              coffer restore 1a2b3c4d
              coffer restore bank
              coffer restore 1a2b3c4d --replace
            """)

    @Argument(help: ArgumentHelp("The entry's id, as coffer trash lists it, or its account's name.", valueName: "id|query"))
    var id: String
    @Flag(help: "Put a replaced mechanism back in place of the one there now (which goes to the trash).") var replace = false
    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            let (authenticator, _) = try options.open()
            guard let trash = authenticator.trash as? SealedTrashDirectory else {
                throw CommandFailure("only the sqlite backend keeps a trash")
            }
            let entry: TrashEntry
            do {
                // Not a name of an entry that opens: as an id, so an entry that does not open
                // (the key not answering) says why rather than "nothing".
                let found = try authenticator.trashEntries(matching: id)
                let chosen = found.first?.id ?? id
                guard found.count <= 1 else {
                    let named = found.prefix(4).map { "\($0.id) (\(AccountQuery.title($0.account)), \($0.reason) "
                        + "\($0.trashedAt.formatted(.relative(presentation: .named))))" }.joined(separator: ", ")
                    throw CommandFailure.ambiguous("'\(id)' names \(found.count) trash entries: \(named)\(found.count > 4 ? ", …" : ""); "
                        + "restore one by its id")
                }
                entry = try await authenticator.restore(trashID: chosen, replacing: replace)
            } catch AuthenticatorError.trashEntryUnreadable(let name, let why) {
                // An entry that does not open is not an absent one.
                if let failure = trash.keyFailure(waiting: 1) { throw failure }
                throw CommandFailure("the trash entry \(name) cannot be restored: \(why)")
            } catch AuthenticatorError.notFound(let what) where what.hasPrefix("The trash entry") {
                throw CommandFailure.noMatch("nothing in the trash has the id or the name '\(id)'; coffer trash lists them")
            } catch AuthenticatorError.restoreClash(let type, let issuer, let accountName, let trashID) {
                throw CommandFailure("\(ImportEntry.printable("\(issuer): \(accountName)")) has a \(type.rawValue.uppercased()) mechanism again; "
                    + "coffer restore \(trashID) --replace puts the old one back in its place (the current one goes to the trash)")
            } catch AuthenticatorError.notFound(let what) {
                throw CommandFailure("\(what.replacingOccurrences(of: " (restore the account first)", with: "")) is no longer stored; restore the account first")
            }
            print("Restored \(AccountQuery.title(entry.account)) (\(entry.reason) \(entry.trashedAt.formatted(.relative(presentation: .named)))).")
        }
    }
}

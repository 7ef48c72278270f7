import Foundation

extension ImportEntry {
    /// The account and mechanisms, checked as a scanned URI is (secret, digits, period, …).
    ///
    /// - Throws: ``URIParseError`` naming what is wrong, or ``ImportEntry/UnsupportedType`` for
    ///   a type Coffer has no generator for.
    func parsed(now: Date = Date()) throws -> (parsed: MechanismURI.Parsed, uuid: String?) {
        switch content {
        case .uri(let uri):
            return (try MechanismURI.parse(uri, now: now), nil)
        case .fields(let fields):
            guard let type = MechanismType(rawValue: fields.type.lowercased()), type.generatesCodes else {
                throw UnsupportedType(type: fields.type)
            }
            let uri = MechanismURI.otpauth(
                type: type, issuer: fields.issuer, accountName: fields.accountName, secret: fields.secret, algorithm: fields.algorithm,
                digits: fields.digits, period: fields.period, counter: type == .hotp ? fields.counter ?? 0 : nil)
            return (try MechanismURI.parse(uri, now: now), fields.uuid.flatMap { UUID(uuidString: $0)?.uuidString })
        case .refused(let reason):
            throw Refused(reason: reason)
        }
    }

    /// A type of code Coffer does not generate (mOTP, Yandex, …).
    struct UnsupportedType: Error {
        let type: String
    }

    struct Refused: Error {
        let reason: String
    }
}

extension AuthenticatorClient {
    /// Imports accounts read from an export file (see `ImportFormat`).
    ///
    /// Every entry ends up stored or named in the report, never dropped without a word. Each is
    /// checked as a scanned URI is, then:
    /// - stored (``VaultImportReport/imported``), with the details the file keeps beside it
    ///   (note, groups, favourite, icon name), sealed like the secret;
    /// - when an account of that name already has a code of that type, with `overwrite`: the
    ///   stored one is replaced (kept in the ``trash`` when the client has one, under `trashReason`);
    /// - without: the **same** secret and settings are already there (``VaultImportReport/skippedExisting``),
    ///   the entry's details added to the stored account's; the same secret with other settings
    ///   is refused, named; a **different** secret (a personal and a work login under one e-mail
    ///   address, say) is stored under the first free name `name (2)`, `name (3)`, …
    ///   (``VaultImportReport/renamed``);
    /// - under a new id when its id belongs to another stored object (``VaultImportReport/renumbered``);
    /// - not imported, and named: a type Coffer has no generator for (``VaultImportReport/unsupported``),
    ///   an entry that does not check (``VaultImportReport/refused``), details that cannot join
    ///   the stored account's (``VaultImportReport/detailsNotKept``).
    ///
    /// ``VaultImportReport/isComplete`` says whether the whole file is stored. The caller reads
    /// the whole file before calling, so a file that cannot be read imports nothing.
    public func importEntries(_ entries: [ImportEntry], overwrite: Bool, trashReason: String = "overwritten by import") throws -> VaultImportReport {
        var report = VaultImportReport()
        var valid: [(parsed: MechanismURI.Parsed, uuid: String?, entry: ImportEntry)] = []
        for entry in entries {
            do {
                let (parsed, uuid) = try entry.parsed()
                valid.append((parsed, uuid, entry))
            } catch is ImportEntry.UnsupportedType {
                report.unsupported.append(entry.title)
            } catch let refused as ImportEntry.Refused {
                report.refused.append("\(entry.title): \(refused.reason)")
            } catch {
                report.refused.append("\(entry.title): \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
            }
        }
        // How every stored account is listed (the names it shows and its issuer's, folded as
        // queries fold them): an entry is never stored under a name another account is listed
        // as, or a query could not tell the two apart. Read once; each name is then taken under
        // the store's names lock, and the storage refuses a second account of one identity.
        var listed = ListedNames(valid.isEmpty ? [] : allAccounts())
        for (parsed, uuid, entry) in valid {
            var details = entry.details
            if let problem = details?.problem {
                report.detailsNotKept.append("\(entry.title): \(problem); the code was imported without them")
                details = nil
            }
            for var mechanism in parsed.mechanisms {
                if let uuid, parsed.mechanisms.count == 1 { mechanism.mechanismUUID = uuid }
                try holdingNames { () throws(AuthenticatorError) in
                    try importMechanism(mechanism, of: parsed.account, details: details, title: entry.title, overwrite: overwrite,
                                        trashReason: trashReason, listed: &listed, into: &report)
                }
            }
        }
        return report
    }

    /// The most names `name (2)` … tried for an entry whose name another secret holds.
    static let importNameLimit = 100

    /// Stores one mechanism of an entry under the first name where it is new or already there
    /// (see ``importEntries(_:overwrite:trashReason:)``). The storage's refusal of a second
    /// mechanism of a type decides each name, so two imports at once never share one.
    private func importMechanism(_ mechanism: Mechanism, of account: Account, details: AccountDetails?, title: String,
                                 overwrite: Bool, trashReason: String, listed: inout ListedNames,
                                 into report: inout VaultImportReport) throws(AuthenticatorError) {
        for number in 1...Self.importNameLimit {
            var account = account, mechanism = mechanism
            if number > 1 {
                account.accountName += " (\(number))"
                account.displayAccountName = account.displayAccountName.map { "\($0) (\(number))" }
                mechanism.accountName = account.accountName
            }
            account.details = details
            if listed.byAnother(account) { continue }
            let stored = self.account(identifier: account.identifier)
            if let same = stored?.mechanisms.first(where: { $0.type == mechanism.type }), !overwrite {
                guard same.secret == mechanism.secret else { continue }
                if same.algorithm == mechanism.algorithm && same.digits == mechanism.digits
                    && (mechanism.type == .hotp || same.period == mechanism.period) {
                    report.skippedExisting.append(title)
                    try keep(details, on: account, title: title, overwrite: false, trashReason: trashReason, into: &report)
                } else {
                    report.refused.append("\(title): already there with the same secret but other settings (algorithm, digits or period); "
                                          + "--overwrite replaces them")
                }
                return
            }
            do throws(AuthenticatorError) {
                let added: (renumbered: Bool, replaced: [Mechanism])
                do throws(AuthenticatorError) {
                    added = try addRenumberingOnClash(account: account, mechanism: mechanism, replacing: overwrite)
                } catch .storageFailed(let operation, let cause) {
                    // This entry's HOTP secret is another account's: the entry is refused, named,
                    // and the others go on. An unreadable ledger or trash stops the import.
                    guard case .secretHeldBy? = cause as? HOTPCounterFloorError else { throw .storageFailed(operation: operation, cause: cause) }
                    report.refused.append("\(title): \((cause as? LocalizedError)?.errorDescription ?? operation)")
                    return
                }
                report.replaced += added.replaced
                // Into the trash at once: an entry refused later in the file loses nothing.
                if let trash, !added.replaced.isEmpty {
                    let kept = self.account(storedAs: account.identifier) ?? account
                    do {
                        report.trashed.append(.init(account: kept, id: try trash.put(kept, added.replaced, reason: trashReason)))
                    } catch {
                        throw .storageFailed(operation: "keep the replaced mechanism in the trash", cause: error)
                    }
                }
                if added.renumbered { report.renumbered.append(title) }
                if number > 1 {
                    let clash = String(account.shownAccountName.dropLast(" (\(number))".count))
                    report.renamed.append(.init(title: title, storedAs: ImportEntry.printable("\(account.shownIssuer): \(account.shownAccountName)"),
                                                clashesWith: ImportEntry.printable("\(account.shownIssuer): \(clash)")))
                }
                report.imported.append(title)
                listed.insert(account)
                if stored != nil { try keep(details, on: account, title: title, overwrite: overwrite, trashReason: trashReason, into: &report) }
                return
            } catch .duplicateMechanism {
                continue  // stored meanwhile by another process: look again under this name
            }
        }
        report.refused.append("\(title): \(Self.importNameLimit) accounts of that name already hold other secrets")
    }

    /// Adds `details` to the stored account `account` names, merged with what it has. Two notes
    /// that differ are never merged: without `overwrite` the stored one stays and the entry is
    /// named in ``VaultImportReport/detailsNotKept``; with it, the stored account goes to the
    /// trash first (when the client has one), then its details are replaced.
    private func keep(_ details: AccountDetails?, on account: Account, title: String, overwrite: Bool, trashReason: String,
                      into report: inout VaultImportReport) throws(AuthenticatorError) {
        guard let details else { return }
        if overwrite, let trash, let stored = self.account(storedAs: account.identifier),
           (stored.details ?? AccountDetails()).merged(with: details) == nil {
            do {
                report.trashed.append(.init(account: stored, id: try trash.put(stored, [], reason: trashReason)))
            } catch {
                throw .storageFailed(operation: "keep the replaced note in the trash", cause: error)
            }
        }
        let updated = try updatingAccount(account.identifier) { stored in
            if let merged = (stored.details ?? AccountDetails()).merged(with: details) {
                stored.details = merged.nonEmpty
            } else if overwrite {
                stored.details = details
            }
        }
        let conflict = !overwrite && (updated.details ?? AccountDetails()).merged(with: details) == nil
        if conflict { report.detailsNotKept.append("\(title): the stored account has another note, which stays (--overwrite replaces it)") }
    }
}

/// How accounts are listed, folded as queries fold names: the names each shows and its issuer's.
struct ListedNames {
    private var owners: [String: Set<String>] = [:]

    init(_ accounts: [Account]) {
        for account in accounts { insert(account) }
    }

    mutating func insert(_ account: Account) {
        owners[AccountSearch.listingKey(issuer: account.shownIssuer, name: account.shownAccountName), default: []].insert(account.identifier)
        owners[AccountSearch.listingKey(issuer: account.issuer, name: account.accountName), default: []].insert(account.identifier)
    }

    /// Whether an account other than `account`'s identity is listed as `account` would be.
    func byAnother(_ account: Account) -> Bool {
        owners[AccountSearch.listingKey(issuer: account.shownIssuer, name: account.shownAccountName)].map { !$0.subtracting([account.identifier]).isEmpty } ?? false
    }
}

import Foundation

/// What an import did.
public struct VaultImportReport: Sendable, Equatable {
    /// `issuer: account (type)` of each entry imported.
    public var imported: [String] = []
    /// Entries whose account already had a mechanism of that type, left as they were.
    public var skippedExisting: [String] = []
    /// Entries of types Coffer does not support (steam, motp, yandex, …), not imported.
    public var unsupported: [String] = []
    /// Entries imported under a new id, because the vault's id already belonged to another
    /// stored object (which is left as it was). Also listed in ``imported``.
    public var renumbered: [String] = []
}

extension AuthenticatorClient {
    /// Imports Aegis vault entries.
    ///
    /// Every entry is checked first (secret, digits, period, …, as for a URI); if one is
    /// invalid, nothing is imported and the error names it. Existing mechanisms are skipped
    /// unless `overwrite`; unsupported types are reported, never dropped silently.
    public func importAegis(_ entries: [AegisVault.Entry], overwrite: Bool) throws -> VaultImportReport {
        var report = VaultImportReport()
        var valid: [(Account, Mechanism, String)] = []
        for entry in entries {
            let title = "\(entry.issuer): \(entry.name) (\(entry.type))"
            let converted: (Account, Mechanism)?
            do {
                converted = try AegisVault.mechanism(for: entry)
            } catch {
                throw AegisVault.VaultError.malformed("the entry \(title) is invalid: \(error.localizedDescription)")
            }
            if let converted {
                valid.append((converted.0, converted.1, title))
            } else {
                report.unsupported.append(title)
            }
        }
        for (account, mechanism, title) in valid {
            do {
                if try addRenumberingOnClash(account: account, mechanism: mechanism, replacing: overwrite) {
                    report.renumbered.append(title)
                }
                report.imported.append(title)
            } catch {
                guard case .duplicateMechanism = error else { throw error }
                report.skippedExisting.append(title)
            }
        }
        return report
    }

    /// Adds the mechanism; when its id belongs to another stored object, which is never replaced,
    /// adds it under a new id instead and returns `true`.
    private func addRenumberingOnClash(account: Account, mechanism: Mechanism, replacing: Bool) throws(AuthenticatorError) -> Bool {
        do {
            try add(account: account, mechanism: mechanism, replacing: replacing)
            return false
        } catch {
            guard case .storageFailed(_, let cause) = error, case .uuidTaken? = cause as? StorageClientError else { throw error }
            var renumbered = mechanism
            renumbered.mechanismUUID = UUID().uuidString
            try add(account: account, mechanism: renumbered, replacing: replacing)
            return true
        }
    }

    /// The Aegis entries of every OATH mechanism, and the titles of the push mechanisms, which
    /// have no Aegis form.
    public func exportAegis() -> (entries: [AegisVault.Entry], notExported: [String]) {
        var entries: [AegisVault.Entry] = []
        var notExported: [String] = []
        for listed in accounts() {
            for mechanism in listed.mechanisms {
                if let entry = AegisVault.entry(account: listed.account, mechanism: mechanism) {
                    entries.append(entry)
                } else {
                    notExported.append("\(listed.account.shownIssuer): \(listed.account.shownAccountName) (\(mechanism.type.rawValue))")
                }
            }
        }
        return (entries, notExported)
    }
}

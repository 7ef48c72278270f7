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
    /// Each entry is checked as a scanned URI is and reported: imported, skipped (the account
    /// already has a mechanism of that type; `overwrite` replaces a readable one), imported
    /// under a new id (its id belongs to another stored object, which is never replaced),
    /// unsupported (a type Coffer has no generator for) or refused (with why). The caller reads
    /// the whole file before calling, so a file that cannot be read imports nothing. With the
    /// client's ``trash``, what `overwrite` replaced is kept there, an entry per account
    /// (``VaultImportReport/trashed``), under `trashReason`.
    public func importEntries(_ entries: [ImportEntry], overwrite: Bool, trashReason: String = "overwritten by import") throws -> VaultImportReport {
        var report = VaultImportReport()
        var valid: [(parsed: MechanismURI.Parsed, uuid: String?, title: String)] = []
        for entry in entries {
            do {
                let (parsed, uuid) = try entry.parsed()
                valid.append((parsed, uuid, entry.title))
            } catch is ImportEntry.UnsupportedType {
                report.unsupported.append(entry.title)
            } catch let refused as ImportEntry.Refused {
                report.refused.append("\(entry.title): \(refused.reason)")
            } catch {
                report.refused.append("\(entry.title): \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
            }
        }
        for (parsed, uuid, title) in valid {
            do {
                var renumbered = false
                for var mechanism in parsed.mechanisms {
                    if let uuid, parsed.mechanisms.count == 1 { mechanism.mechanismUUID = uuid }
                    let added = try addRenumberingOnClash(account: parsed.account, mechanism: mechanism, replacing: overwrite)
                    renumbered = added.renumbered || renumbered
                    report.replaced += added.replaced
                    // Into the trash at once: an entry refused later in the file loses nothing.
                    if let trash, !added.replaced.isEmpty {
                        let account = self.account(storedAs: parsed.account.identifier) ?? parsed.account
                        report.trashed.append(.init(account: account, id: try trash.put(account, added.replaced, reason: trashReason)))
                    }
                }
                if renumbered { report.renumbered.append(title) }
                report.imported.append(title)
            } catch {
                guard case AuthenticatorError.duplicateMechanism? = error as? AuthenticatorError else { throw error }
                report.skippedExisting.append(title)
            }
        }
        return report
    }
}

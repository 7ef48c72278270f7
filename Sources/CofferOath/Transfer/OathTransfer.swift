import CofferMFAEngine
import CofferMFATransfer
import Foundation

/// How entries of other authenticators' exports become Ping credentials, and credentials
/// exported entries: the mapping between ``OathCredential`` and CofferMFATransfer's neutral
/// `ImportEntry` and `TransferAccount`.
extension OathService {
    /// Imports `entries`, each checked as a scanned URI is (Ping's rules, then the policies and
    /// the storage's rules when it is saved). See ``OathClient/importEntries(_:overwrite:)``.
    func importEntries(_ entries: [ImportEntry], overwrite: Bool) async throws -> OathImportReport {
        var report = OathImportReport()
        var stored = try await storage.getAllOathCredentials()
        for entry in entries {
            var credential: OathCredential
            switch Self.reading(entry) {
            case .unsupported:
                report.unsupported.append(entry.title)
                continue
            case .refused(let why):
                report.refused.append("\(entry.title): \(why)")
                continue
            case .credential(let read):
                credential = read
            }
            var existing = stored.first { $0.isSameAccount(as: credential) }
            if let found = existing, !overwrite {
                // The same secret is already there; another secret under this name (a personal
                // and a work login under one address) becomes a credential of its own, `name (2)`.
                guard let free = OathCredential.freeName(for: credential, among: stored, sameSecretAs: found) else {
                    report.skippedExisting.append(entry.title)
                    if entry.details != nil { report.detailsNotKept.append(entry.title) }
                    continue
                }
                credential = free
                existing = nil
                report.renamed.append("\(entry.title) as \(ImportEntry.printable("\(free.displayIssuer): \(free.displayAccountName)"))")
            }
            if entry.details != nil { report.detailsNotKept.append(entry.title) }
            var placed = credential
            var renumbered = false
            if let existing {
                placed = credential.identified(as: existing.id)
                // The same secret again: its counter never goes back, whatever the storage keeps.
                if existing.oathType == .hotp, placed.oathType == .hotp, (try? existing.key()) == (try? placed.key()) {
                    placed.counter = max(placed.counter, existing.counter)
                }
            } else if stored.contains(where: { $0.id.lowercased() == credential.id.lowercased() }) {
                placed = credential.identified(as: UUID().uuidString)
                renumbered = true
            }
            do {
                let saved = try await add(placed)
                stored.removeAll { $0.id == saved.id }
                stored.append(saved)
                if let existing { report.replaced.append(existing) }
                if renumbered { report.renumbered.append(entry.title) }
                report.imported.append(entry.title)
            } catch let error as OathError {
                report.refused.append("\(entry.title): \(Self.reason(error))")
            } catch {
                // The storage failed: stop, and hand back what was done (with what was replaced).
                throw OathImportInterrupted(report: report, entry: entry.title, cause: error)
            }
        }
        return report
    }

    /// Every credential as an exported account, and those left out with why: a credential a
    /// policy locked (its codes are not to be made here, so not anywhere else either) or one
    /// being removed.
    func exportAccounts() async throws -> (accounts: [TransferAccount], notExported: [String]) {
        var accounts: [TransferAccount] = []
        var notExported: [String] = []
        for credential in try await credentials() {
            let title = ImportEntry.printable("\(credential.displayIssuer): \(credential.displayAccountName) (\(credential.type))")
            if credential.isHeldForRemoval {
                notExported.append("\(title): it is being removed")
            } else if credential.isLocked {
                notExported.append("\(title): the policy '\(ImportEntry.printable(credential.lockingPolicy ?? "unknown"))' locked it")
            } else {
                accounts.append(TransferAccount(credential))
            }
        }
        return (accounts, notExported)
    }

    /// What an entry is to Ping's Oath module.
    enum Reading {
        case credential(OathCredential)
        /// A type Ping's Oath module has no generator for (Steam, mOTP, Yandex, push).
        case unsupported
        case refused(String)
    }

    /// The credential an entry holds, read by Ping's URI rules. An entry's UUID becomes the
    /// credential's id as written (Ping's ids keep their case).
    static func reading(_ entry: ImportEntry) -> Reading {
        do {
            switch entry.content {
            case .uri(let text):
                if let uri = try? AuthenticatorURI(text, limits: .ping),
                   uri.scheme == "pushauth" || OathType(rawValue: uri.type) == nil && ["otpauth", "mfauth"].contains(uri.scheme)
                    && ["steam", "motp", "yandex", "push"].contains(uri.type) {
                    return .unsupported
                }
                return .credential(try OathUriParser.parse(text))
            case .fields(let fields):
                guard OathType(rawValue: fields.type.lowercased()) != nil else { return .unsupported }
                let credential = try OathUriParser.parse(fields.otpauthURI)
                guard let uuid = fields.uuid, UUID(uuidString: uuid) != nil else { return .credential(credential) }
                return .credential(credential.identified(as: uuid))
            case .refused(let why):
                return .refused(why)
            }
        } catch {
            return .refused(reason(error))
        }
    }

    /// Why an entry was refused, in a person's words, control characters escaped; the URI
    /// errors never quote a secret.
    private static func reason(_ error: any Error) -> String {
        ImportEntry.printable((error as? LocalizedError)?.errorDescription ?? String(describing: error))
    }
}

extension OathCredential {
    /// Whether `other` is this account: the same type, and the issuer (without case) and account
    /// name as stored or as shown (an exported credential travels under its shown names).
    func isSameAccount(as other: OathCredential) -> Bool {
        oathType == other.oathType
            && [issuer.lowercased(), displayIssuer.lowercased()].contains(other.issuer.lowercased())
            && [accountName, displayAccountName].contains(other.accountName)
    }

    /// The first `name (n)` no stored credential of this issuer and type has, for `credential`
    /// whose name `found` holds with another secret; `nil` when `found`, or a credential under
    /// one of those names, already holds this very secret (the entry is already there).
    static func freeName(for credential: OathCredential, among stored: [OathCredential], sameSecretAs found: OathCredential) -> OathCredential? {
        if (try? found.key()) == (try? credential.key()) { return nil }
        for number in 2...100 {
            let candidate = credential.named("\(credential.accountName) (\(number))")
            guard let holder = stored.first(where: { $0.isSameAccount(as: candidate) }) else { return candidate }
            if (try? holder.key()) == (try? credential.key()) { return nil }
        }
        return nil
    }

    /// The same credential under another account name (shown as it too).
    func named(_ name: String) -> OathCredential {
        copy(accountName: name, displayAccountName: name)
    }

    /// The same credential under another id.
    func identified(as id: String) -> OathCredential {
        copy(id: id)
    }

    /// The same credential with its id or names changed.
    private func copy(id: String? = nil, accountName: String? = nil, displayAccountName: String? = nil) -> OathCredential {
        OathCredential(
            id: id ?? self.id, userId: userId, resourceId: resourceId, issuer: issuer, displayIssuer: displayIssuer,
            accountName: accountName ?? self.accountName, displayAccountName: displayAccountName ?? self.displayAccountName,
            oathType: oathType, oathAlgorithm: oathAlgorithm, digits: digits, period: period, counter: counter, createdAt: createdAt,
            imageURL: imageURL, backgroundColor: backgroundColor, policies: policies, lockingPolicy: lockingPolicy, isLocked: isLocked,
            secretKey: secretKey)
    }
}

/// An exported account made from one of Ping's credentials.
extension TransferAccount {
    /// The exported form of `credential`, under the names it is shown with; its id travels as
    /// the entry's UUID.
    public init(_ credential: OathCredential) {
        self.init(type: credential.type, issuer: credential.displayIssuer, accountName: credential.displayAccountName,
                  secret: credential.secret, algorithm: credential.algorithm, digits: credential.digits,
                  period: credential.oathType == .totp ? credential.period : nil,
                  counter: credential.oathType == .hotp ? UInt64(max(credential.counter, 0)) : nil,
                  uuid: UUID(uuidString: credential.id) == nil ? nil : credential.id,
                  userId: credential.userId, resourceId: credential.resourceId)
    }
}

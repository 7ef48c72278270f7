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
            let credential: OathCredential
            do {
                guard let parsed = try Self.credential(from: entry) else {
                    report.unsupported.append(entry.title)
                    continue
                }
                credential = parsed
            } catch {
                report.refused.append("\(entry.title): \(Self.reason(error))")
                continue
            }
            let existing = stored.first {
                $0.issuer.lowercased() == credential.issuer.lowercased() && $0.accountName == credential.accountName
                    && $0.oathType == credential.oathType
            }
            if existing != nil, !overwrite {
                report.skippedExisting.append(entry.title)
                continue
            }
            var placed = credential
            if let existing {
                placed = credential.identified(as: existing.id)
            } else if stored.contains(where: { $0.id == credential.id }) {
                placed = credential.identified(as: UUID().uuidString)
                report.renumbered.append(entry.title)
            }
            do {
                let saved = try await add(placed)
                stored.removeAll { $0.id == saved.id }
                stored.append(saved)
                if let existing { report.replaced.append(existing) }
                report.imported.append(entry.title)
            } catch let error as OathError {
                report.renumbered.removeAll { $0 == entry.title }
                report.refused.append("\(entry.title): \(Self.reason(error))")
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
            let title = "\(credential.displayIssuer): \(credential.displayAccountName) (\(credential.type))"
            if credential.isHeldForRemoval {
                notExported.append("\(title): it is being removed")
            } else if credential.isLocked {
                notExported.append("\(title): the policy '\(credential.lockingPolicy ?? "unknown")' locked it")
            } else {
                accounts.append(TransferAccount(credential))
            }
        }
        return (accounts, notExported)
    }

    /// The credential an entry holds, read by Ping's URI rules; `nil` for a type Ping's Oath
    /// module has no generator for.
    static func credential(from entry: ImportEntry) throws -> OathCredential? {
        switch entry.content {
        case .uri(let uri):
            guard !uri.lowercased().hasPrefix("pushauth:") else { return nil }
            return try OathUriParser.parse(uri)
        case .fields(let fields):
            guard OathType(rawValue: fields.type.lowercased()) != nil else { return nil }
            let credential = try OathUriParser.parse(fields.otpauthURI)
            guard let uuid = fields.uuid.flatMap(UUID.init(uuidString:)) else { return credential }
            return credential.identified(as: uuid.uuidString)
        case .refused(let reason):
            throw OathError.invalidUri(reason)
        }
    }

    /// Why an entry was refused, in a person's words; never a secret (no error here quotes one).
    private static func reason(_ error: any Error) -> String {
        (error as? LocalizedError)?.errorDescription ?? String(describing: error)
    }
}

extension OathCredential {
    /// The same credential under another id.
    func identified(as id: String) -> OathCredential {
        OathCredential(
            id: id, userId: userId, resourceId: resourceId, issuer: issuer, displayIssuer: displayIssuer,
            accountName: accountName, displayAccountName: displayAccountName, oathType: oathType, oathAlgorithm: oathAlgorithm,
            digits: digits, period: period, counter: counter, createdAt: createdAt, imageURL: imageURL,
            backgroundColor: backgroundColor, policies: policies, lockingPolicy: lockingPolicy, isLocked: isLocked,
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
                  uuid: UUID(uuidString: credential.id)?.uuidString)
    }
}

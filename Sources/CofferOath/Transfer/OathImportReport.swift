import Foundation

/// What ``OathClient/importEntries(_:overwrite:)`` did with each entry of an export, named by
/// its title (`Issuer: account (type)`, never the secret).
public struct OathImportReport: Sendable {
    /// Entries stored as credentials.
    public var imported: [String] = []
    /// Entries a stored credential already has: the same issuer, account, type and secret.
    public var skippedExisting: [String] = []
    /// Entries stored under a name of their own (`name (2)`) because a credential of their name
    /// holds another secret, each `title as Issuer: name (2)`. Also listed in ``imported``.
    public var renamed: [String] = []
    /// Entries whose note, groups or favourite mark (an Aegis or Bitwarden export's) could not be
    /// kept: Ping's credential has no place for them. Keep the export if they matter.
    public var detailsNotKept: [String] = []
    /// Entries of types Ping's Oath module has no generator for (Steam, mOTP, Yandex, push).
    public var unsupported: [String] = []
    /// Entries that could not be imported, each `title: why` (a secret that is not base32, a
    /// HOTP secret another credential holds, a failing policy, …).
    public var refused: [String] = []
    /// Entries stored under a new id, because their id belonged to another credential (which is
    /// left as it was). Also listed in ``imported``.
    public var renumbered: [String] = []
    /// The credentials `overwrite` replaced, as they were (a HOTP one's counter is remembered
    /// by a storage that keeps a counter ledger).
    public var replaced: [OathCredential] = []
}

/// An import that stopped because the storage failed (not because of an entry): what was done
/// before it, with the credentials already replaced, so nothing is lost without a word.
public struct OathImportInterrupted: Error, Sendable {
    /// What the import did before it stopped; ``OathImportReport/replaced`` holds every
    /// credential it already replaced, as it was.
    public let report: OathImportReport
    /// The title of the entry being stored when the storage failed (not stored).
    public let entry: String
    /// The storage's error.
    public let cause: any Error
}

extension OathImportInterrupted: LocalizedError {
    /// Where the import stopped and how much it had done.
    public var errorDescription: String? {
        let cause = (cause as? LocalizedError)?.errorDescription ?? String(describing: cause)
        return "The import stopped at \(entry): the storage failed (\(cause)). \(report.imported.count) entr"
            + "\(report.imported.count == 1 ? "y was" : "ies were") imported before it"
            + (report.replaced.isEmpty ? "." : ", replacing \(report.replaced.count) credential(s), which the error's report keeps.")
    }
}

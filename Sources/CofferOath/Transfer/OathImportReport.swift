/// What ``OathClient/importEntries(_:overwrite:)`` did with each entry of an export, named by
/// its title (`Issuer: account (type)`, never the secret).
public struct OathImportReport: Sendable {
    /// Entries stored as credentials.
    public var imported: [String] = []
    /// Entries whose issuer, account and type a stored credential already has, left as it was.
    public var skippedExisting: [String] = []
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

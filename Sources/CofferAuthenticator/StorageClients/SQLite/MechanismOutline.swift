/// What ``SQLiteStorageClient`` can say about a mechanism without its key: the plain columns a
/// listing shows (``SQLiteStorageClient/mechanismOutlines()``).
///
/// The sealed secret is bound to these columns, but that binding is checked only when the secret
/// is opened, with the key; read without it, an outline is what the file says, unverified. It
/// carries no secret, so nothing that makes a code can be built from it. For showing a store
/// whose key cannot be opened now (a keyring out of reach, a TPM that does not answer), never
/// for deciding anything.
public struct MechanismOutline: Sendable, Equatable {
    /// The mechanism's identifier.
    public let mechanismUUID: String
    /// The issuer of the account the mechanism belongs to (its identity, not a shown name).
    public let issuer: String
    /// The account name of the account the mechanism belongs to (its identity).
    public let accountName: String
    /// TOTP, HOTP or push.
    public let type: MechanismType
    /// The OATH algorithm as stored (`sha1`, `sha256`, `sha512`).
    public let algorithm: String
    /// The number of digits of a code.
    public let digits: Int
    /// The TOTP time step, in seconds.
    public let period: Int
    /// The HOTP counter as the column holds it (for TOTP and push, 0).
    public let counter: Int64
}

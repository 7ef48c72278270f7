import CofferAuthenticator
import Foundation

/// One mechanism's code as `coffer code` reports it: the cells of a line of text, or an object of
/// `--json` (the scripting contract: the keys below stay, new ones may be added).
struct CodeReport: Encodable {
    /// The mechanism's id: stable for the life of the account, across renames.
    let id: String
    let issuer: String
    let accountName: String
    let type: String
    let digits: Int?
    /// TOTP: the time step in seconds (Steam: 30).
    let period: Int?
    let code: String?
    /// When the code became valid (TOTP, Steam), or when it was issued (HOTP).
    let validFrom: Date?
    /// When a TOTP or Steam code stops being valid; HOTP codes are valid until used.
    let validUntil: Date?
    /// Seconds from now until `validUntil`.
    let secondsRemaining: Int?
    /// HOTP: the counter value the code was computed with.
    let counter: UInt64?
    /// Why there is no code: an error.
    let error: String?
    /// Why there is no code although nothing failed (a HOTP account not asked for by name).
    let note: String?
    /// When the report was made: a code for another time (`--next`, `--at`) says when it is valid.
    private let now: Date

    private enum CodingKeys: String, CodingKey {
        case id, issuer, accountName, type, digits, period, code, validFrom, validUntil, secondsRemaining, counter, error, note
    }

    init(_ entry: AccountEntry, _ mechanism: Mechanism, code: OathCode? = nil, now: Date = Date(), error: String? = nil, note: String? = nil) {
        id = mechanism.mechanismUUID
        // As stored: the text output escapes them as it prints, JSON as it encodes.
        issuer = entry.account.shownIssuer
        accountName = entry.account.shownAccountName
        type = mechanism.type.rawValue
        digits = mechanism.type == .steam ? 5 : mechanism.digits
        period = mechanism.type == .hotp ? nil : (mechanism.type == .steam ? 30 : mechanism.period)
        self.code = code?.code
        validFrom = code?.validFrom
        validUntil = code?.validUntil
        secondsRemaining = code?.secondsRemaining(at: now)
        counter = code?.counter
        self.error = error
        self.note = note
        self.now = now
    }

    /// The line's cells, for columns: `Issuer: account`, then the code and how long it is valid,
    /// or why there is no code.
    var cells: [String] {
        let title = "\(issuer): \(accountName)"
        if let code {
            if let validFrom, let validUntil, !(validFrom...validUntil).contains(now) {
                let format = Date.ISO8601FormatStyle()
                return [title, "\(code)  valid \(validFrom.formatted(format)) to \(validUntil.formatted(format))"]
            }
            return [title, code + (secondsRemaining.map { "  \($0)s left" } ?? "")]
        }
        if let note { return [title, "(\(note))"] }
        return [title, "(no code: \(error ?? "unknown error"))"]
    }
}

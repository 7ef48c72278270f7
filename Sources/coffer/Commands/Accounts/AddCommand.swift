import ArgumentParser
import CofferAuthenticator
import Foundation

/// `coffer add`: an account from a URI, or typed in.
struct AddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add an account from an otpauth://, pushauth:// or mfauth:// URI, or from its secret.",
        discussion: """
            The URI is what an issuer's QR code contains. Put it in quotes: it has '&' in it.

            Examples:
              coffer add 'otpauth://totp/Example:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Example'
              coffer add --issuer Example --account alice --secret JBSWY3DPEHPK3PXP
              coffer add --type hotp --counter 0 --issuer Bank --account bob --secret GEZDGNBVGY3TQOJQ
            """)

    @Argument(help: "The URI. Omit it to type the account in with the options below.")
    var uri: String?

    @Option(help: "The secret, in base32 (spaces and dashes are ignored).") var secret: String?
    @Option(help: "The issuer (the service).") var issuer: String?
    @Option(help: "The account name at the issuer.") var account: String?
    @Option(help: "totp or hotp.") var type: String = "totp"
    @Option(help: "Digits per code, 6 to 8.") var digits: Int = 6
    @Option(help: "TOTP time step in seconds.") var period: Int = 30
    @Option(help: "SHA1, SHA256 or SHA512.") var algorithm: String = "SHA1"
    @Option(help: "HOTP: the next counter value.") var counter: UInt64 = 0
    @Flag(help: "Print the added account as JSON.") var json = false

    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            let (authenticator, _) = try options.open()
            let entry = try authenticator.addAccount(uri: try resolvedURI())
            if json {
                try JSONOutput.print(AccountSummary(entry, showSecrets: false))
            } else {
                print("Added \(AccountQuery.title(entry.account)) (\(entry.mechanisms.map { $0.type.rawValue.uppercased() }.joined(separator: ", ")))")
            }
        }
    }

    /// The URI given, or one built from the options (so both paths share the URI validation).
    private func resolvedURI() throws -> String {
        if let uri {
            guard secret == nil, issuer == nil, account == nil else {
                throw CommandFailure("give either a URI or --secret/--issuer/--account, not both")
            }
            return uri
        }
        guard let secret, let issuer, let account else {
            throw CommandFailure("give a URI, or all of --secret, --issuer and --account (see coffer add --help)")
        }
        guard let mechanismType = MechanismType(rawValue: type.lowercased()), mechanismType != .push else {
            throw CommandFailure("--type must be totp or hotp")
        }
        return MechanismURI.otpauth(
            type: mechanismType, issuer: issuer, accountName: account, secret: secret, algorithm: algorithm,
            digits: digits, period: period, counter: mechanismType == .hotp ? counter : nil)
    }
}

/// An account as `--json` shows it. Secrets only with `--show-secret`.
struct AccountSummary: Encodable {
    struct MechanismSummary: Encodable {
        let uuid: String
        let type: String
        let algorithm: String?
        let digits: Int?
        let period: Int?
        let counter: UInt64?
        let secret: String?
    }

    let issuer: String
    let accountName: String
    let displayIssuer: String?
    let displayAccountName: String?
    let locked: Bool
    let lockingPolicy: String?
    let added: Date
    let mechanisms: [MechanismSummary]

    init(_ entry: AccountEntry, showSecrets: Bool) {
        issuer = entry.account.issuer
        accountName = entry.account.accountName
        displayIssuer = entry.account.displayIssuer
        displayAccountName = entry.account.displayAccountName
        locked = entry.account.isLocked
        lockingPolicy = entry.account.lockingPolicy
        added = entry.account.timeAdded
        mechanisms = entry.mechanisms.map { mechanism in
            let oath = mechanism.type != .push
            return MechanismSummary(
                uuid: mechanism.mechanismUUID, type: mechanism.type.rawValue,
                algorithm: oath ? mechanism.algorithm.rawValue.uppercased() : nil, digits: oath ? mechanism.digits : nil,
                period: mechanism.type == .totp ? mechanism.period : nil, counter: mechanism.type == .hotp ? mechanism.counter : nil,
                secret: showSecrets ? mechanism.secret : nil)
        }
    }
}

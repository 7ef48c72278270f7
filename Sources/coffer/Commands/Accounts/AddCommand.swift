import ArgumentParser
import CofferAuthenticator
import Foundation

/// `coffer add`: an account from a URI, or typed in.
struct AddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add an account from an otpauth://, pushauth:// or mfauth:// URI, or from its secret.",
        discussion: """
            The URI is what an issuer's QR code contains. It holds the secret, and other users \
            can read a command's arguments (in ps or /proc), so pass it on standard input: '-' \
            reads one URI per line. Typed in, --secret - reads the secret from standard input, \
            and with no --secret at all you are asked for it, echo off.

            Examples:
              printf '%s\\n' "$URI" | coffer add -
              coffer add - < uris.txt
              coffer add --issuer Example --account alice          # asks for the secret
              coffer add --type hotp --counter 0 --issuer Bank --account bob --secret - < secret.txt
            """)

    @Argument(help: ArgumentHelp("The URI, or - to read URIs from standard input, one per line. Omit it to type the account in.",
                                 valueName: "uri|-"))
    var uri: String?

    @Option(help: ArgumentHelp("The secret, in base32 (spaces and dashes are ignored), or - for standard input. Asked for when omitted.",
                               valueName: "base32|-"))
    var secret: String?
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
            let uris = try resolvedURIs()
            let (authenticator, _) = try options.open()
            var failures = 0
            for uri in uris {
                do {
                    let entry = try authenticator.addAccount(uri: uri)
                    if json {
                        try JSONOutput.print(AccountSummary(entry, showSecrets: false))
                    } else {
                        print("Added \(AccountQuery.title(entry.account)) (\(entry.mechanisms.map { $0.type.rawValue.uppercased() }.joined(separator: ", ")))")
                    }
                } catch {
                    guard uris.count > 1 else { throw error }
                    failures += 1
                    StandardStreams.note("coffer: \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
                }
            }
            if failures > 0 { throw CommandFailure("\(failures) of \(uris.count) URIs were not added (see above)") }
        }
    }

    /// The URIs to add: the one given, those on standard input (`-`), or one built from the
    /// options (so every path shares the URI validation).
    private func resolvedURIs() throws -> [String] {
        if let uri {
            guard secret == nil, issuer == nil, account == nil else {
                throw CommandFailure("give either a URI or --secret/--issuer/--account, not both")
            }
            guard uri == "-" else { return [uri] }
            let lines = try StandardStreams.inputLines(limit: StandardStreams.uriInputLimit, what: "URIs")
            guard !lines.isEmpty else { throw CommandFailure("no URI on standard input") }
            return lines
        }
        guard let issuer, let account else {
            throw CommandFailure("give a URI (or - to read it from standard input), or --issuer and --account (see coffer add --help)")
        }
        guard let mechanismType = MechanismType(rawValue: type.lowercased()), mechanismType != .push else {
            throw CommandFailure("--type must be totp or hotp")
        }
        let typedSecret: String
        switch secret {
        case "-"?:
            guard let line = try StandardStreams.inputLines(limit: StandardStreams.valueInputLimit, what: "the secret").first else { throw CommandFailure("no secret on standard input") }
            typedSecret = line
        case let given?:
            typedSecret = given
        case nil:
            guard isatty(STDIN_FILENO) == 1 else {
                throw CommandFailure("give the secret with --secret - on standard input (there is no terminal to ask on)")
            }
            typedSecret = try HiddenPrompt.read("Secret (base32): ")
        }
        return [MechanismURI.otpauth(
            type: mechanismType, issuer: issuer, accountName: account, secret: typedSecret, algorithm: algorithm,
            digits: digits, period: period, counter: mechanismType == .hotp ? counter : nil)]
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

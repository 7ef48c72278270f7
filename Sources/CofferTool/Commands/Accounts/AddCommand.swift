import ArgumentParser
import CofferAuthenticator
import CofferMFAEngine
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
              coffer add --type hotp --issuer Bank --account bob --secret - < key.txt
              coffer add --issuer Foo --secret - < key.txt   # account Foo too
              printf '%s\\n' "$NEW_URI" | coffer add --replace -   # after a new QR code
            """)

    @Argument(help: ArgumentHelp("The URI, or - to read URIs from standard input, one per line. Omit it to type the account in.",
                                 valueName: "uri|-"))
    var uri: String?

    @Option(help: ArgumentHelp("The secret, in base32 (spaces and dashes are ignored), or - for standard input. Asked for when omitted.",
                               valueName: "base32|-"))
    var secret: String?
    @Option(help: "The issuer (the service).") var issuer: String?
    @Option(help: "The account name at the issuer (the issuer's name when left out, as in otpauth://totp/Foo).") var account: String?
    @Option(help: "The kind of code.") var type: TypedMechanism = .totp
    @Option(help: "Digits per code, 6 to 8.") var digits: Int = 6
    @Option(help: "TOTP time step in seconds.") var period: Int = 30
    @Option(help: "The hash.") var algorithm: OathAlgorithm = .sha1
    @Option(help: "HOTP: the next counter value.") var counter: UInt64 = 0
    @Option(name: .customLong("qr"), help: ArgumentHelp("Add the accounts of the QR codes in this PNG or JPEG image.", valueName: "image"),
            completion: .file(extensions: ["png", "jpg", "jpeg"]))
    var qrImage: String?
    @Flag(help: "Replace the account's mechanism of the same type (re-enrolment, after the issuer gave a new QR code).")
    var replace = false
    @Flag(help: "Print the added account as JSON.") var json = false

    @OptionGroup var options: AuthenticatorOptions

    func run() async throws {
        try await reportingErrors {
            let numbered = try resolvedURIs()
            let uris = numbered.map(\.text)
            let keyBefore = options.recordedKeyLocation()
            let (authenticator, _) = try options.open()
            defer { options.noteNewKeyFile(before: keyBefore) }
            var failures = 0
            for (number, uri) in numbered {
                do {
                    try Self.checkLooksLikeURI(uri)
                    let entry: AccountEntry
                    do {
                        if replace {
                            let (added, _, trashID) = try await authenticator.replaceAccount(uri: uri, trashReason: "replaced by add --replace")
                            entry = added
                            if let id = trashID {
                                StandardStreams.note("coffer: note: what \(AccountQuery.title(added.account)) had is in the trash; "
                                    + "coffer restore \(id) --replace brings it back")
                            }
                        } else {
                            entry = try await authenticator.addAccount(uri: uri)
                        }
                    } catch AuthenticatorError.duplicateMechanism(let type, let issuer, let accountName) {
                        throw CommandFailure("\(issuer): \(accountName) already has a \(type.rawValue.uppercased()) mechanism. "
                            + (replace ? "It could not be read, and Coffer never replaces what it cannot read: see coffer doctor."
                               : "To enrol it again with a new QR code, add it with --replace; to keep both, remove the old one first."))
                    }
                    if json {
                        try JSONOutput.print(AccountSummary(entry, showSecrets: false))
                    } else {
                        print("Added \(AccountQuery.title(entry.account)) (\(entry.mechanisms.map { $0.type.rawValue.uppercased() }.joined(separator: ", ")))")
                    }
                    Self.noteCounterFloor(uri: uri, entry: entry)
                } catch {
                    guard uris.count > 1 else { throw error }
                    failures += 1
                    let message = CommandFailure.words(for: error)
                    StandardStreams.note("coffer: \(self.uri == "-" ? "line" : "QR code") \(number): \(message)")
                }
            }
            if failures > 0 { throw CommandFailure("\(failures) of \(uris.count) URIs were not added (see the lines above); the others were") }
        }
    }

    /// Says when a HOTP mechanism was stored with a higher counter than `uri` gave: its secret
    /// was seen before (removed, replaced), and it goes on where it left off.
    static func noteCounterFloor(uri: String, entry: AccountEntry) {
        guard let asked = try? MechanismURI.parse(uri).mechanisms.first(where: { $0.type == .hotp }),
              let stored = entry.mechanisms.first(where: { $0.type == .hotp && $0.keyIdentity == asked.keyIdentity }),
              stored.counter > asked.counter else { return }
        StandardStreams.note("coffer: note: \(AccountQuery.title(entry.account)): this secret was used before, so its HOTP counter "
            + "goes on from \(stored.counter), not \(asked.counter): no code the server has seen is issued again")
    }

    /// Refuses, with the command that takes it, what people paste where a URI goes: a bare
    /// secret, or a Google Authenticator export.
    static func checkLooksLikeURI(_ text: String) throws {
        let lowered = text.lowercased()
        if lowered.hasPrefix(GoogleAuthenticatorExport.scheme + ":") {
            throw CommandFailure("that is a Google Authenticator export (otpauth-migration://), not an account's URI; "
                + "import it with: coffer import -  (or coffer import FILE)")
        }
        guard !lowered.contains("://") else { return }
        if (try? Base32.decode(text)) != nil, text.filter({ !$0.isWhitespace && $0 != "-" }).count >= 16 {
            throw CommandFailure("that looks like a bare secret, not a URI; add it with: "
                + "coffer add --issuer ISSUER --account NAME --secret -  (the secret on standard input)")
        }
    }

    /// The URIs to add: the one given, those on standard input (`-`), or one built from the
    /// options (so every path shares the URI validation).
    private func resolvedURIs() throws -> [(number: Int, text: String)] {
        if let qrImage {
            guard uri == nil, secret == nil, issuer == nil, account == nil else {
                throw CommandFailure.usage("give either --qr or a URI or --secret/--issuer/--account, not several")
            }
            let texts = try QRCodeImage.texts(in: StandardStreams.readFile(qrImage, limit: ImportCommand.sizeLimit))
            guard !texts.isEmpty else { throw CommandFailure("no QR code was found in \(qrImage)") }
            if texts.contains(where: { $0.lowercased().hasPrefix(GoogleAuthenticatorExport.scheme + ":") }) {
                throw CommandFailure("\(qrImage) is a Google Authenticator export; import it with: coffer import \(qrImage)")
            }
            return texts.enumerated().map { (number: $0.offset + 1, text: $0.element) }
        }
        if let uri {
            guard secret == nil, issuer == nil, account == nil else {
                throw CommandFailure.usage("give either a URI or --secret/--issuer/--account, not both")
            }
            guard uri == "-" else { return [(1, uri)] }
            let lines = try StandardStreams.inputLines(limit: StandardStreams.uriInputLimit, what: "URIs")
            guard !lines.isEmpty else { throw CommandFailure("no URI on standard input") }
            return lines
        }
        // One name alone names both, as a URI whose label has no account (otpauth://totp/Foo) does.
        guard let issuer = (issuer ?? account)?.trimmingCharacters(in: .whitespaces),
              let account = (account ?? issuer)?.trimmingCharacters(in: .whitespaces) else {
            throw CommandFailure.usage("give a URI (or - to read it from standard input), or --issuer and --account (see coffer add --help)")
        }
        guard !issuer.isEmpty, !account.isEmpty else { throw CommandFailure.usage("--issuer and --account must not be empty") }
        // The options' own ranges, said of the options (not of a URI the user never wrote).
        guard (6...8).contains(digits) else { throw CommandFailure.usage("--digits must be 6, 7 or 8 (it was \(digits))") }
        let mechanismType = type.mechanismType
        let typedSecret: String
        switch secret {
        case "-"?:
            guard let line = try StandardStreams.inputLines(limit: StandardStreams.valueInputLimit, what: "the secret").first else { throw CommandFailure("no secret on standard input") }
            typedSecret = line.text
        case let given?:
            typedSecret = given
        case nil:
            guard isatty(STDIN_FILENO) == 1 else {
                throw CommandFailure("give the secret with --secret - on standard input (there is no terminal to ask on)")
            }
            typedSecret = try Self.askSecret()
        }
        try Self.checkSecret(typedSecret)
        return [(1, MechanismURI.otpauth(
            type: mechanismType, issuer: issuer, accountName: account, secret: typedSecret, algorithm: algorithm.rawValue.uppercased(),
            digits: digits, period: period, counter: mechanismType == .hotp ? counter : nil))]
    }
}

extension AddCommand {
    /// At a terminal: asks for the secret until it is base32 (three tries).
    static func askSecret() throws -> String {
        for attempt in 1...3 {
            let typed = try HiddenPrompt.read("Secret (base32): ")
            do {
                try checkSecret(typed)
                return typed
            } catch let failure as CommandFailure {
                guard attempt < 3 else { throw failure }
                StandardStreams.note("coffer: \(failure); try again")
            }
        }
        throw CommandFailure("no secret was given")
    }

    /// A typed secret is spoken of as one: not as a URI's parameter (there was no URI).
    static func checkSecret(_ secret: String) throws {
        do {
            _ = try Base32.decode(secret)
        } catch {
            throw CommandFailure("\(error.localizedDescription); the secret is the text shown beside the QR code, "
                + "letters A–Z and digits 2–7")
        }
    }
}

/// What `coffer add --type` accepts: the kinds of code an account can be typed in as.
enum TypedMechanism: String, ExpressibleByArgument, CaseIterable {
    case totp, hotp

    var mechanismType: MechanismType {
        switch self {
        case .totp: .totp
        case .hotp: .hotp
        }
    }
}

extension OathAlgorithm: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(uriValue: argument)
    }

    public var defaultValueDescription: String { rawValue.uppercased() }

    public static var allValueStrings: [String] { allCases.map { $0.rawValue.uppercased() } }
}

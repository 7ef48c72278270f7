import ArgumentParser
import CofferAuthenticator
import Foundation

/// What `coffer import --format` accepts: a format, or `auto` (by content).
enum ImportFormatChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, aegis, google, twoFAS = "2fas", andOTP = "andotp", freeOTPPlus = "freeotp-plus", bitwarden, ente, uris, image

    var format: ImportFormat? { ImportFormat(rawValue: rawValue) }
}

/// `coffer import FILE|-`: accounts from another authenticator's export.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import accounts from another authenticator's export, a list of URIs or a QR code image.",
        discussion: """
            The format is recognised by the content: Aegis vaults (plain or encrypted), Google \
            Authenticator exports (otpauth-migration:// lines, one per QR code), 2FAS backups \
            (plain or encrypted), andOTP and FreeOTP+ JSON, Bitwarden JSON (unencrypted), Ente \
            Auth plain-text exports, lists of otpauth:// URIs, and PNG or JPEG images of any of \
            those QR codes. --format says which when the content does not.

            The whole file is read first: a wrong password or a damaged file imports nothing. \
            Then each entry is reported: imported, with its note, groups and favourite mark \
            (kept sealed like the secret); already there, with the same secret; imported as a \
            separate account "name (2)" when an account of its name holds another secret \
            (--overwrite replaces that one instead, keeping it in the trash); or NOT imported \
            (mOTP, Yandex, an entry that does not check), with why. The export holds your \
            secrets in the clear: delete it once coffer import exits 0. Exit status 4 (done in \
            part) means some entries were not stored: they are named, keep the export.

            Examples:
              coffer import aegis-export.json
              coffer import 2fas-backup.2fas --password-file ~/.pw
              coffer import google-export.png
              coffer import google-1.png google-2.png       # an export of two QR codes
              zbarimg -q --raw shot.png | coffer import -
            """)

    @Argument(help: ArgumentHelp("The export files (several QR code images of one Google export, say), or - for standard input.",
                                 valueName: "file|-"), completion: .file())
    var files: [String]
    @Option(help: "The format, when the content does not tell.") var format: ImportFormatChoice = .auto
    @Flag(help: "Replace mechanisms that already exist.") var overwrite = false
    @OptionGroup var password: PasswordOptions
    @OptionGroup var options: AuthenticatorOptions

    /// The most an export may be: a vault of tens of thousands of accounts, or a photo.
    static let sizeLimit = 64 << 20

    func validate() throws {
        if files.isEmpty { throw ValidationError("name the export file (or - for standard input)") }
        if files.count > 1, files.contains("-") { throw ValidationError("- (standard input) cannot be one of several files") }
        if files.count > 100 { throw ValidationError("at most 100 files at a time") }
    }

    func run() async throws {
        try await reportingErrors {
            // Every file is read and recognised before anything is imported.
            var read: [(data: Data, format: ImportFormat)] = []
            for file in files {
                let data = file == "-"
                    ? try StandardStreams.readInput(limit: Self.sizeLimit, what: "the export")
                    : try StandardStreams.readFile(file, limit: Self.sizeLimit)
                guard let format = format.format ?? ImportFormat.detect(data) else {
                    throw ImportError.unknownFormat((files.count > 1 ? "\(file): " : "") + (data.isEmpty ? "it is empty" : "its content matches none of them"))
                }
                read.append((data, format))
            }
            let name = Set(read.map(\.format)).count == 1 ? read[0].format.name : "files"
            let contents = try ImportFormat.read(read) {
                try password.password(prompt: "Password of the \(read.count == 1 ? read[0].format.name : "export"): ", confirm: false)
            }
            let keyBefore = options.recordedKeyLocation()
            let (authenticator, _) = try options.open()
            defer { options.noteNewKeyFile(before: keyBefore) }
            var report = try await authenticator.importEntries(contents.entries, overwrite: overwrite)
            for kept in report.trashed {
                report.notes.append("\(AccountQuery.title(kept.account)): what it had is in the trash; coffer restore \(kept.id) --replace brings it back")
            }
            report.notes += contents.notes
            print("Imported \(report.imported.count) account(s) from " + (files.count > 1 ? "\(files.count) files (\(name))." : "the \(name)."))
            // Entries said below with more words are not said here too (titles may repeat).
            var said = report.renumbered + report.renamed.map(\.title)
            for title in report.imported {
                if let index = said.firstIndex(of: title) { said.remove(at: index) } else { print("  imported: \(title)") }
            }
            for title in report.renumbered { print("  imported under a new id (its id belongs to another stored account): \(title)") }
            for renamed in report.renamed {
                print("  imported as \(renamed.storedAs) (\(renamed.clashesWith) holds another secret): \(renamed.title)")
            }
            for title in report.skippedExisting { print("  already there (the same secret): \(title)") }
            for title in report.unsupported { print("  NOT imported (type not supported): \(title)") }
            for line in report.refused { print("  NOT imported: \(line)") }
            for line in report.detailsNotKept { print("  imported without its details: \(line)") }
            for note in report.notes { print("  note: \(note)") }
            if !report.isComplete {
                let left = report.unsupported.count + report.refused.count + report.detailsNotKept.count
                let stored = !report.imported.isEmpty || !report.skippedExisting.isEmpty
                throw CommandFailure("\(left) entr\(left == 1 ? "y was" : "ies were") not stored whole (named above): keep the export",
                                     status: stored ? .partial : .failed)
            }
        }
    }
}

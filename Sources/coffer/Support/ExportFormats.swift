import CofferAuthenticator
import CofferStorage
import Foundation

/// `coffer export --format uris|qr|google`: the accounts in the clear, for other tools and
/// phones. Files are written as `PrivateFile` writes them (0600 from the first byte, atomically);
/// PNGs go into a new 0700 directory.
struct ExportFormats {
    let file: String
    let format: VaultFormat

    func write(_ entries: [AccountEntry]) throws {
        let exported = entries.flatMap { entry in
            entry.mechanisms.filter { $0.type != .push }.map { mechanism -> (Account, Mechanism) in
                // The names shown, as list shows them (what `show --uri` gives too).
                var shown = mechanism
                shown.issuer = entry.account.shownIssuer
                shown.accountName = entry.account.shownAccountName
                return (entry.account, shown)
            }
        }
        guard !exported.isEmpty else {
            throw CommandFailure.noMatch("there are no HOTP or TOTP accounts to export; nothing was written")
        }
        var notExported = entries.flatMap { entry in
            entry.mechanisms.filter { $0.type == .push }.map { _ in "\(AccountQuery.title(entry.account)) (push): push mechanisms cannot be exported" }
        }
        let kind: String
        switch format {
        case .aegis:
            return
        case .uris:
            kind = "otpauth:// URIs"
            let text = exported.map { MechanismURI.otpauth($0.1) + "\n" }.joined()
            try output(Data(text.utf8))
            try warn(kind)
            report("Exported \(exported.count) account(s) as \(kind) to \(where_)."
                   + (file == "-" ? "" : " The file holds the secrets in the clear: keep it private, delete it when done."))
        case .qr:
            kind = "QR codes"
            try PrivateFile.createDirectory(at: file)
            for (index, (account, mechanism)) in exported.enumerated() {
                let name = String(format: "%03d-", index + 1) + Self.fileName("\(account.shownIssuer)-\(account.shownAccountName)") + ".png"
                try PrivateFile.create(try QRCodePNG.png(for: MechanismURI.otpauth(mechanism)), at: file + "/" + name)
            }
            try warn(kind)
            report("Exported \(exported.count) account(s) as \(kind), one PNG each, to the new directory \(file).")
        case .google:
            kind = "Google Authenticator transfer codes"
            let transfer = GoogleAuthenticatorTransfer.uris(for: exported)
            notExported += transfer.notExported
            if file == "-" {
                if isatty(STDOUT_FILENO) == 1 {
                    for (index, uri) in transfer.uris.enumerated() {
                        for line in try TerminalQRCode.lines(for: uri) { StandardStreams.control(line + "\n") }
                        print("Scan \(index + 1) of \(transfer.uris.count) in Google Authenticator (Transfer accounts > Import accounts).")
                    }
                } else {
                    try StandardStreams.writeOutput(Data(transfer.uris.map { $0 + "\n" }.joined().utf8))
                }
            } else {
                try PrivateFile.createDirectory(at: file)
                for (index, uri) in transfer.uris.enumerated() {
                    try PrivateFile.create(try QRCodePNG.png(for: uri), at: file + "/google-\(index + 1)-of-\(transfer.uris.count).png")
                }
            }
            try warn(kind)
            report("Exported \(exported.count - transfer.notExported.count) account(s) in \(transfer.uris.count) transfer QR code(s) to \(where_).")
        }
        for line in notExported { report("  not exported: \(line)") }
    }

    private var where_: String { file == "-" ? "standard output" : file }

    /// The report goes to standard error when the export itself goes to standard output.
    private func report(_ line: String) {
        if file == "-" { StandardStreams.note(line) } else { print(line) }
    }

    private func warn(_ kind: String) throws {
        StandardStreams.note("coffer: warning: \(kind) are not encrypted; anyone who sees them can make your codes")
    }

    private func output(_ data: Data) throws {
        if file == "-" {
            try StandardStreams.writeOutput(data)
        } else {
            try PrivateFile.write(data, to: file)
        }
    }

    /// A file name from account names: letters, digits, `.`, `-`, `_`; at most 60 characters.
    static func fileName(_ text: String) -> String {
        let kept = text.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar)) ? Character(scalar) : "_"
        }
        let name = String(kept.prefix(60))
        return name.hasPrefix(".") ? "_" + name.dropFirst() : name
    }
}

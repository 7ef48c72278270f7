import CofferAuthenticator
import CofferStorage
import Foundation

/// Where `coffer export` puts what the library's `AccountExport` wrote: standard output, a file
/// (as `PrivateFile` writes it: 0600 from the first byte, atomically) or a new 0700 directory of
/// PNGs; and what it says about it.
struct ExportFormats {
    let file: String
    let format: ExportFormat

    func write(_ accounts: [TransferAccount], notExported pushes: [String], password: String?) throws {
        guard !accounts.isEmpty || format == .aegis else {
            throw CommandFailure.noMatch("there are no HOTP or TOTP accounts to export; nothing was written")
        }
        // Printed transfer codes need no PNGs (nor the QR library to draw them).
        let written = try AccountExport.write(accounts, as: format, password: password, drawingImages: !(format == .google && file == "-"))
        switch format {
        case .aegis, .uris:
            var data = written.files[0].data
            // Names as JSON escapes where a terminal would act on them (the same JSON to a parser):
            // the vault may be shown on one (`export -`), or `cat` later.
            if format == .aegis { data = Data(TerminalText.jsonEscaped(String(decoding: data, as: UTF8.self)).utf8) }
            try output(data)
        case .qr:
            try writeDirectory(written.files)
        case .google:
            if file == "-" {
                if isatty(STDOUT_FILENO) == 1 {
                    for (index, uri) in written.transferURIs.enumerated() {
                        for line in try TerminalQRCode.lines(for: uri) { StandardStreams.control(line + "\n") }
                        print("Scan \(index + 1) of \(written.transferURIs.count) in Google Authenticator (Transfer accounts > Import accounts).")
                    }
                } else {
                    try StandardStreams.writeOutput(Data(written.transferURIs.map { $0 + "\n" }.joined().utf8))
                }
            } else {
                try writeDirectory(written.files)
            }
        }
        if password == nil {
            let what = format == .aegis ? "the vault is not encrypted; its secrets are readable by anyone who gets the file"
                : "\(format.name) are not encrypted; anyone who sees them can make your codes"
            StandardStreams.note("coffer: warning: \(what)")
        }
        report(summary(written, encrypted: password != nil))
        if format == .aegis {
            for line in pushes + written.notExported { report("  not exported (no Aegis form): \(line)") }
        } else {
            for push in pushes { report("  not exported: \(push): push mechanisms cannot be exported") }
            for line in written.notExported { report("  not exported: \(line)") }
        }
    }

    private func summary(_ written: AccountExport.Written, encrypted: Bool) -> String {
        switch format {
        case .aegis:
            return "Exported \(written.exportedCount) account(s) to \(where_)\(encrypted ? " (encrypted)" : "")."
        case .uris:
            return "Exported \(written.exportedCount) account(s) as \(format.name) to \(where_)."
                + (file == "-" ? "" : " The file holds the secrets in the clear: keep it private, delete it when done.")
        case .qr:
            return "Exported \(written.exportedCount) account(s) as \(format.name), one PNG each, to the new directory \(file)."
        case .google:
            return "Exported \(written.exportedCount) account(s) in \(written.transferURIs.count) transfer QR code(s) to \(where_)."
        }
    }

    private var where_: String { file == "-" ? "standard output" : file }

    /// The report goes to standard error when the export itself goes to standard output.
    private func report(_ line: String) {
        if file == "-" { StandardStreams.note(line) } else { print(line) }
    }

    private func output(_ data: Data) throws {
        if file == "-" {
            try StandardStreams.writeOutput(data)
        } else {
            try PrivateFile.write(data, to: file)
        }
    }

    private func writeDirectory(_ files: [(name: String, data: Data)]) throws {
        try PrivateFile.createDirectory(at: file)
        for (name, data) in files { try PrivateFile.create(data, at: file + "/" + name) }
    }
}

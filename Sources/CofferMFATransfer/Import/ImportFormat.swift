import Foundation

/// The export files Coffer imports, recognised by their content.
public enum ImportFormat: String, CaseIterable, Sendable {
    /// Aegis vault (plain or password-encrypted).
    case aegis
    /// Google Authenticator's `otpauth-migration://` export, one URI (QR code) per line.
    case google
    /// 2FAS backup, plain or encrypted.
    case twoFAS = "2fas"
    /// andOTP plain JSON backup.
    case andOTP = "andotp"
    /// FreeOTP+ JSON export.
    case freeOTPPlus = "freeotp-plus"
    /// Bitwarden unencrypted JSON export.
    case bitwarden
    /// Ente Auth plain-text export.
    case ente
    /// A list of `otpauth://`, `pushauth://` or `mfauth://` URIs, one per line.
    case uris
    /// A PNG or JPEG image of QR codes (any of the URIs above).
    case image

    /// What the format is called in reports.
    public var name: String {
        switch self {
        case .aegis: "Aegis vault"
        case .google: GoogleAuthenticatorExport.format
        case .twoFAS: TwoFASBackup.format
        case .andOTP: AndOTPBackup.format
        case .freeOTPPlus: FreeOTPPlusExport.format
        case .bitwarden: BitwardenExport.format
        case .ente: EnteAuthExport.format
        case .uris: "list of URIs"
        case .image: "QR code image"
        }
    }

    /// The most entries a file may hold: people have hundreds of accounts, not tens of thousands,
    /// and a crafted file of millions of tiny entries would cost memory far beyond its size.
    public static let maximumEntries = 10_000

    /// The most bytes an export that is text or JSON may have (images may be larger): a
    /// parser's memory grows with the input many times over.
    public static let maximumTextBytes = 4 << 20

    static func tooManyEntries(format: String) -> ImportError {
        .malformed(format: format, reason: "it holds more than \(maximumEntries) entries, more than an authenticator export has")
    }

    /// What a file holds: its entries, and remarks about the file as a whole.
    public struct Contents: Sendable {
        /// The entries, in the file's order, refused ones included.
        public var entries: [ImportEntry]
        /// Remarks about the file as a whole, for the report (for example, a Google Authenticator
        /// export whose batch is incomplete).
        public var notes: [String]
    }

    /// The format of `data`, by its content, or `nil`.
    public static func detect(_ data: Data) -> ImportFormat? {
        if QRCodeImage.kind(of: data) != nil { return .image }
        if let json = try? JSONSerialization.jsonObject(with: data) {
            if let object = json as? [String: Any] {
                if object["db"] != nil, object["header"] != nil, object["version"] != nil { return .aegis }
                if TwoFASBackup.matches(object) { return .twoFAS }
                if FreeOTPPlusExport.matches(object) { return .freeOTPPlus }
                if BitwardenExport.matches(object) { return .bitwarden }
                if EnteAuthExport.matchesEncrypted(object) { return .ente }
            }
            return AndOTPBackup.matches(json) ? .andOTP : nil
        }
        let lines = textLines(data)
        guard !lines.isEmpty else { return nil }
        if lines.allSatisfy({ $0.lowercased().hasPrefix(GoogleAuthenticatorExport.scheme + "://") }) { return .google }
        if lines.contains(where: { EnteAuthExport.normalize($0).contains("codeDisplay=") }) { return .ente }
        return lines.allSatisfy { $0.hasPrefix("#") || URIListExport.isURI(EnteAuthExport.normalize($0)) } ? .uris : nil
    }

    /// Reads `data` as this format. `password` is asked for only when the file is encrypted.
    public func read(_ data: Data, password: () throws -> String) throws -> Contents {
        if self != .image, data.count > Self.maximumTextBytes {
            throw ImportError.malformed(format: name, reason: "it is \(data.count / 1024) KiB, more than the \(Self.maximumTextBytes / 1024) KiB an export of this kind can need")
        }
        let contents = try readChecked(data, password: password)
        guard contents.entries.count <= Self.maximumEntries else { throw Self.tooManyEntries(format: name) }
        return contents
    }

    /// Reads several files as one import: the QR codes and lines of every image, Google export
    /// and URI list together (so a Google export of several QR codes, one image each, is whole
    /// and its missing codes are counted across the files), the others each by its format.
    /// Nothing is returned unless every file could be read.
    public static func read(_ files: [(data: Data, format: ImportFormat)], password: () throws -> String) throws -> Contents {
        guard files.count > 1 else {
            guard let file = files.first else { return Contents(entries: [], notes: []) }
            return try file.format.read(file.data, password: password)
        }
        var lines: [String] = []
        var contents = Contents(entries: [], notes: [])
        for (data, format) in files {
            switch format {
            case .image:
                let texts = try QRCodeImage.texts(in: data)
                guard !texts.isEmpty else { throw ImportError.malformed(format: format.name, reason: "no QR code was found in one of the images") }
                lines += texts.flatMap { $0.split(whereSeparator: \.isNewline).map(String.init) }
            case .google, .uris:
                guard data.count <= maximumTextBytes else { return try format.read(data, password: password) }
                lines += textLines(data)
            default:
                let read = try format.read(data, password: password)
                contents.entries += read.entries
                contents.notes += read.notes
            }
        }
        let fromLines = try readLines(lines, format: "files")
        contents.entries += fromLines.entries
        contents.notes += fromLines.notes
        guard contents.entries.count <= maximumEntries else { throw tooManyEntries(format: "set of files") }
        return contents
    }

    private func readChecked(_ data: Data, password: () throws -> String) throws -> Contents {
        switch self {
        case .aegis:
            let encrypted = Self.isEncryptedAegisVault(data)
            let entries = try AegisVault.read(data, password: encrypted ? try password() : nil)
            return Contents(entries: entries.map(AegisVault.importEntry), notes: [])
        case .twoFAS: return Contents(entries: try TwoFASBackup.entries(from: data, password: password), notes: [])
        case .andOTP: return Contents(entries: try AndOTPBackup.entries(from: data), notes: [])
        case .freeOTPPlus: return Contents(entries: try FreeOTPPlusExport.entries(from: data), notes: [])
        case .bitwarden: return Contents(entries: try BitwardenExport.entries(from: data), notes: [])
        case .google, .ente, .uris:
            if let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any], EnteAuthExport.matchesEncrypted(json) {
                throw EnteAuthExport.refuseEncrypted()
            }
            return try Self.readLines(Self.textLines(data), format: name)
        case .image:
            let texts = try QRCodeImage.texts(in: data)
            guard !texts.isEmpty else { throw ImportError.malformed(format: name, reason: "no QR code was found in it") }
            return try Self.readLines(texts.flatMap { $0.split(whereSeparator: \.isNewline).map(String.init) }, format: name)
        }
    }

    /// Lines of enrolment and Google export URIs: each kind read by its reader; Ente's quirks
    /// undone, and entries in Ente's trash skipped (and said so).
    private static func readLines(_ lines: [String], format: String) throws -> Contents {
        let migration = lines.filter { $0.lowercased().hasPrefix(GoogleAuthenticatorExport.scheme + "://") }
        var others = lines.filter { !$0.lowercased().hasPrefix(GoogleAuthenticatorExport.scheme + "://") }.map(EnteAuthExport.normalize)
        let trashed = others.filter(EnteAuthExport.isTrashed)
        others.removeAll(where: EnteAuthExport.isTrashed)
        let google = try GoogleAuthenticatorExport.entries(fromLines: migration)
        var notes = google.notes
        if !trashed.isEmpty { notes.append("\(trashed.count) entr\(trashed.count == 1 ? "y" : "ies") in Ente's trash skipped") }
        return Contents(entries: google.entries + (try URIListExport.entries(fromLines: others)), notes: notes)
    }

    /// Whether an Aegis vault's entries are sealed (its `db` is a string, not an object).
    private static func isEncryptedAegisVault(_ data: Data) -> Bool {
        ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["db"] is String
    }

    /// `data` as text lines without line endings; blank lines left out.
    static func textLines(_ data: Data) -> [String] {
        String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

import Foundation

/// Writes accounts in an ``ExportFormat``: the bytes of a file, or the images of a new folder.
/// It writes nothing to disk itself; the caller puts the bytes where they belong (the `coffer`
/// tool writes each file 0600 from its first byte, atomically).
///
/// ```swift
/// let accounts = [TransferAccount(type: "totp", issuer: "Example", accountName: "alice",
///                                 secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")]
/// let export = try AccountExport.write(accounts, as: .uris)
/// // export.files == [("otpauth-uris.txt", "otpauth://totp/Example:alice?secret=…&issuer=Example\n")]
/// ```
public enum AccountExport {
    /// What an export made.
    public struct Written: Sendable {
        /// The files: one for ``ExportFormat/aegis`` and ``ExportFormat/uris`` (its name a
        /// suggestion), one PNG per QR code for ``ExportFormat/qr`` and ``ExportFormat/google``
        /// (named to sort in order, for a new folder).
        public var files: [(name: String, data: Data)]
        /// ``ExportFormat/google`` only: the `otpauth-migration://` URIs the images hold, for a
        /// terminal to draw one after the other.
        public var transferURIs: [String]
        /// Accounts the format has no form for, each `Issuer: account (type): why`; they were
        /// left out, never changed to fit.
        public var notExported: [String]
        /// How many accounts the files hold.
        public var exportedCount: Int
    }

    /// Writes `accounts` as `format`. A `password` seals an ``ExportFormat/aegis`` vault
    /// (scrypt N=2^15, r=8, p=1; AES-256-GCM, as Aegis does); other formats cannot be encrypted.
    /// Without `drawingImages`, ``ExportFormat/google`` gives its transfer URIs only (no PNGs,
    /// so no QR library is needed to print them).
    ///
    /// - Throws: ``ExportError`` for a password with a format that cannot hold one;
    ///   ``QRCodeImage/Failure`` when a QR code cannot be made (libqrencode missing).
    public static func write(_ accounts: [TransferAccount], as format: ExportFormat, password: String? = nil,
                             drawingImages: Bool = true) throws -> Written {
        if password != nil, !format.canBeEncrypted { throw ExportError.cannotEncrypt(format) }
        switch format {
        case .aegis:
            var entries: [AegisVault.Entry] = []
            var left: [String] = []
            for account in accounts {
                if let entry = AegisVault.entry(account) { entries.append(entry) } else { left.append("\(account.title): Aegis has no form for it") }
            }
            let vault = try AegisVault.write(entries, password: password)
            return Written(files: [("aegis-vault.json", vault)], transferURIs: [], notExported: left, exportedCount: entries.count)
        case .uris:
            let (uris, left) = otpauthURIs(accounts)
            let text = uris.map { $0.uri + "\n" }.joined()
            return Written(files: [("otpauth-uris.txt", Data(text.utf8))], transferURIs: [], notExported: left, exportedCount: uris.count)
        case .qr:
            let (uris, left) = otpauthURIs(accounts)
            let images = try uris.enumerated().map { index, item throws(QRCodeImage.Failure) in
                (String(format: "%03d-", index + 1) + fileName("\(item.account.issuer)-\(item.account.accountName)") + ".png",
                 try QRCodePNG.png(for: item.uri))
            }
            return Written(files: images, transferURIs: [], notExported: left, exportedCount: uris.count)
        case .google:
            let transfer = GoogleAuthenticatorTransfer.uris(for: accounts)
            let images = !drawingImages ? [] : try transfer.uris.enumerated().map { index, uri throws(QRCodeImage.Failure) in
                ("google-\(index + 1)-of-\(transfer.uris.count).png", try QRCodePNG.png(for: uri))
            }
            return Written(files: images, transferURIs: transfer.uris, notExported: transfer.notExported,
                           exportedCount: accounts.count - transfer.notExported.count)
        }
    }

    /// Each account's `otpauth://` URI, or why it has none Coffer writes (a type Coffer makes no
    /// codes for, such as mOTP; names that do not form a URI).
    private static func otpauthURIs(_ accounts: [TransferAccount]) -> (uris: [(account: TransferAccount, uri: String)], notExported: [String]) {
        var uris: [(account: TransferAccount, uri: String)] = []
        var left: [String] = []
        for account in accounts {
            let uri = account.otpauthURI
            if !TransferAccount.otpauthTypes.contains(account.type.lowercased()) {
                left.append("\(account.title): Coffer writes no otpauth:// URI for this type")
            } else if uri.isEmpty {
                left.append("\(account.title): its names do not form a URI")
            } else {
                uris.append((account, uri))
            }
        }
        return (uris, left)
    }

    /// A file name from account names: letters, digits, `.`, `-`, `_`; at most 60 characters,
    /// never starting with a dot. A crafted name cannot reach another folder or hide a file.
    public static func fileName(_ text: String) -> String {
        let kept = text.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar)) ? Character(scalar) : "_"
        }
        let name = String(kept.prefix(60))
        return name.hasPrefix(".") ? "_" + name.dropFirst() : name
    }
}

/// Why an export was refused.
public enum ExportError: Error, Sendable, Equatable {
    /// A password was given for a format that holds the secrets in the clear.
    case cannotEncrypt(ExportFormat)
}

extension ExportError: LocalizedError {
    /// What to do instead.
    public var errorDescription: String? {
        switch self {
        case .cannotEncrypt(let format):
            "The \(format.name) format cannot be encrypted; only an Aegis vault can. Nothing was exported."
        }
    }
}

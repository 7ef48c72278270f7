import CofferMFAEngine
import Foundation

/// Google Authenticator's "Transfer accounts" export: QR codes holding
/// `otpauth-migration://offline?data=BASE64`, where `data` is a protocol buffer
/// (`MigrationPayload`): repeated `OtpParameters` (field 1) and the batch it belongs to (fields
/// 2–5: version, batch size, batch index, batch id). A large export is several QR codes, one
/// batch each; a file holds one URI per line.
///
/// `OtpParameters`: 1 secret (bytes), 2 name, 3 issuer, 4 algorithm (1 SHA1, 2 SHA256, 3 SHA512,
/// 4 MD5), 5 digits (1 six, 2 eight), 6 type (1 HOTP, 2 TOTP), 7 counter. Unspecified values (0)
/// are the defaults: SHA1, six digits; an unspecified type is refused.
public enum GoogleAuthenticatorExport {
    /// The URI scheme of the export.
    public static let scheme = "otpauth-migration"
    static let format = "Google Authenticator export"

    /// The accounts of every `otpauth-migration://` URI in `lines`, and notes (batches missing).
    public static func entries(fromLines lines: [String]) throws(ImportError) -> (entries: [ImportEntry], notes: [String]) {
        var entries: [ImportEntry] = []
        var batches: [UInt64: (size: UInt64, seen: Set<UInt64>)] = [:]
        for (number, line) in lines.enumerated() {
            let payload = try payload(of: line, line: number + 1)
            entries += payload.entries
            if let batch = payload.batch {
                batches[batch.id, default: (batch.size, [])].seen.insert(batch.index)
            }
        }
        // A note per export, naming at most five missing codes: a crafted file claiming a thousand
        // exports of a thousand codes each must not make a report a thousand times its size.
        var notes = batches.values.prefix(10).compactMap { batch -> String? in
            let missing = (0..<batch.size).filter { !batch.seen.contains($0) }
            guard !missing.isEmpty else { return nil }
            let named = missing.prefix(5).map { "#\($0 + 1)" }.joined(separator: ", ") + (missing.count > 5 ? ", …" : "")
            return "this export is \(batch.size) QR codes and \(missing.count) of them (\(named)) are not in the file; import them too"
        }
        if batches.count > 10 { notes.append("the file holds parts of \(batches.count) different exports") }
        return (entries, notes)
    }

    private struct Payload {
        var entries: [ImportEntry] = []
        var batch: (id: UInt64, size: UInt64, index: UInt64)?
    }

    private static func payload(of line: String, line number: Int) throws(ImportError) -> Payload {
        func malformed(_ reason: String) -> ImportError {
            .malformed(format: format, reason: "line \(number): \(reason)")
        }
        guard let components = URLComponents(string: line), components.scheme?.lowercased() == scheme else {
            throw malformed("not an otpauth-migration:// URI")
        }
        guard let encoded = components.queryItems?.first(where: { $0.name == "data" })?.value, let data = Base64Text.decode(encoded) else {
            throw malformed("its data parameter is missing or not base64")
        }
        var payload = Payload()
        var size: UInt64 = 1, index: UInt64 = 0, id: UInt64?
        var reader = ProtobufReader(data)
        do {
            while let field = try reader.next() {
                switch field {
                case let .bytes(1, value):
                    guard payload.entries.count < ImportFormat.maximumEntries else { throw ImportFormat.tooManyEntries(format: format) }
                    payload.entries.append(try account(value))
                case let .varint(3, value): size = value
                case let .varint(4, value): index = value
                case let .varint(5, value): id = value
                default: continue
                }
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw malformed("its data is not a Google Authenticator payload (\(error))")
        }
        if let id, size > 1, index < size, size <= 1_000 { payload.batch = (id, size, index) }
        return payload
    }

    private static func account(_ data: Data) throws(ProtobufReader.Failure) -> ImportEntry {
        var secret = Data(), name = "", issuer = ""
        var algorithm: UInt64 = 0, digits: UInt64 = 0, type: UInt64 = 0, counter: UInt64 = 0
        var reader = ProtobufReader(data)
        while let field = try reader.next() {
            switch field {
            case let .bytes(1, value): secret = value
            case let .bytes(2, value): name = String(decoding: value, as: UTF8.self)
            case let .bytes(3, value): issuer = String(decoding: value, as: UTF8.self)
            case let .varint(4, value): algorithm = value
            case let .varint(5, value): digits = value
            case let .varint(6, value): type = value
            case let .varint(7, value): counter = value
            default: continue
            }
        }
        let names = ImportEntry.Fields.names(issuer: issuer, name: name)
        let algorithms: [UInt64: String] = [0: "SHA1", 1: "SHA1", 2: "SHA256", 3: "SHA512", 4: "MD5"]
        let digitCounts: [UInt64: Int] = [0: 6, 1: 6, 2: 8]
        let types: [UInt64: String] = [1: "hotp", 2: "totp"]
        let title = "\(names.issuer): \(names.accountName)"
        guard let typeName = types[type] else { return ImportEntry(title: title, content: .refused("its type (\(type)) is neither HOTP nor TOTP")) }
        guard let algorithmName = algorithms[algorithm] else { return ImportEntry(title: title, content: .refused("its algorithm (\(algorithm)) is unknown")) }
        guard let digitCount = digitCounts[digits] else { return ImportEntry(title: title, content: .refused("its digit count (\(digits)) is unknown")) }
        return .account(ImportEntry.Fields(
            type: typeName, issuer: names.issuer, accountName: names.accountName, secret: Base32Codec.encode(secret),
            algorithm: algorithmName, digits: digitCount, counter: typeName == "hotp" ? counter : nil))
    }
}

import CofferMFAEngine
import Foundation

/// Writes what Google Authenticator's "Transfer accounts" scans: `otpauth-migration://offline?data=`
/// URIs, each a `MigrationPayload` protocol buffer of up to ``batchSize`` accounts (the layout
/// ``GoogleAuthenticatorExport`` reads), shown as QR codes one after the other.
///
/// Google's format has no period and no Steam codes, and digits are six or eight: accounts it
/// cannot hold are returned as not exported, never changed to fit.
public enum GoogleAuthenticatorTransfer {
    /// Accounts per QR code, as Google Authenticator makes them: a code of ten accounts still
    /// scans from a phone at a comfortable size.
    public static let batchSize = 10

    /// The URIs for `accounts`, and the titles of those that Google Authenticator has no form
    /// for, with why.
    public static func uris(for accounts: [TransferAccount], batchID: UInt32 = .random(in: 1...UInt32(Int32.max)))
        -> (uris: [String], notExported: [String]) {
        var accepted: [Data] = []
        var notExported: [String] = []
        for account in accounts {
            switch parameters(account) {
            case .success(let encoded): accepted.append(encoded)
            case .failure(let why): notExported.append("\(account.title): \(why.reason)")
            }
        }
        let batches = stride(from: 0, to: accepted.count, by: batchSize).map { Array(accepted[$0..<min($0 + batchSize, accepted.count)]) }
        let uris = batches.enumerated().map { index, batch in
            var payload = ProtobufWriter()
            for parameters in batch { payload.bytes(1, parameters) }
            payload.varint(2, 1)                        // version
            payload.varint(3, UInt64(batches.count))    // batch size
            payload.varint(4, UInt64(index))            // batch index
            payload.varint(5, UInt64(batchID))          // batch id
            let data = payload.data.base64EncodedString()
                .addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            return "\(GoogleAuthenticatorExport.scheme)://offline?data=\(data)"
        }
        return (uris, notExported)
    }

    private struct Unsupported: Error { let reason: String }

    /// One `OtpParameters`, or why Google Authenticator cannot hold the account.
    private static func parameters(_ account: TransferAccount) -> Result<Data, Unsupported> {
        let type: UInt64
        switch account.type.lowercased() {
        case "totp":
            let period = account.period ?? 30
            guard period == 30 else { return .failure(Unsupported(reason: "its period is \(period) s; Google's format has 30 s only")) }
            type = 2
        case "hotp": type = 1
        case "steam": return .failure(Unsupported(reason: "Google Authenticator has no Steam codes"))
        default: return .failure(Unsupported(reason: "Google Authenticator has no \(account.type) codes"))
        }
        let digits: UInt64
        switch account.digits ?? 6 {
        case 6: digits = 1
        case 8: digits = 2
        case let other: return .failure(Unsupported(reason: "its codes have \(other) digits; Google's format has 6 or 8"))
        }
        let algorithm: UInt64
        switch (account.algorithm ?? "SHA1").uppercased() {
        case "SHA1": algorithm = 1
        case "SHA256": algorithm = 2
        case "SHA512": algorithm = 3
        case "MD5": algorithm = 4
        case let other: return .failure(Unsupported(reason: "Google's format has no \(other.replacingOccurrences(of: "SHA", with: "SHA-"))"))
        }
        guard let secret = try? Base32Codec.decodeSecret(account.secret).bytes, !secret.isEmpty else {
            return .failure(Unsupported(reason: "its secret is not base32"))
        }
        var writer = ProtobufWriter()
        writer.bytes(1, secret)
        writer.bytes(2, Data(account.accountName.utf8))
        writer.bytes(3, Data(account.issuer.utf8))
        writer.varint(4, algorithm)
        writer.varint(5, digits)
        writer.varint(6, type)
        if type == 1 { writer.varint(7, account.counter ?? 0) }
        return .success(writer.data)
    }
}

/// The two protocol buffer wire types the transfer format uses: varints and length-delimited
/// bytes. (``ProtobufReader`` reads them.)
struct ProtobufWriter {
    private(set) var data = Data()

    mutating func varint(_ field: UInt64, _ value: UInt64) {
        raw(field << 3 | 0)
        raw(value)
    }

    mutating func bytes(_ field: UInt64, _ value: Data) {
        raw(field << 3 | 2)
        raw(UInt64(value.count))
        data.append(value)
    }

    private mutating func raw(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            data.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        data.append(UInt8(value))
    }
}

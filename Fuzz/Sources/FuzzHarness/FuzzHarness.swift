import CofferAuthenticator
import Foundation
import CofferStorage
import Synchronization

/// The checks the fuzz targets (`Fuzz/`, run by `scripts/fuzz`) apply to each input, shared with
/// the test suite, which replays every saved crasher and seed through them.
///
/// Each function feeds untrusted bytes to one of Coffer's parsers. Throwing its own typed error is
/// the parser's right answer to bad input; anything else (a crash, a wrong type of error, a
/// result that breaks an invariant) is a finding, thrown as ``FuzzFinding``.
public enum FuzzHarness {
    /// `MechanismURI.parse` on the bytes as UTF-8. A URI that parses must describe what its
    /// rebuilt `otpauth://` form describes, and its codes must compute.
    public static func uri(_ data: Data) throws(FuzzFinding) {
        let text = String(decoding: data, as: UTF8.self)
        let parsed: MechanismURI.Parsed
        do {
            parsed = try MechanismURI.parse(text, now: Date(timeIntervalSince1970: 1_700_000_000))
        } catch {
            return  // a typed URIParseError: the expected answer to bad input
        }
        guard !parsed.mechanisms.isEmpty else { throw FuzzFinding("parsed with no mechanism: \(text)") }
        for mechanism in parsed.mechanisms where mechanism.type != .push {
            guard mechanism.type == .steam ? mechanism.digits == 5 : (6...8).contains(mechanism.digits), mechanism.period > 0 else {
                throw FuzzFinding("out-of-range digits or period accepted: \(text)")
            }
            let secret: Data
            do { secret = try Base32.decode(mechanism.secret) } catch { throw FuzzFinding("accepted secret does not decode: \(text)") }
            do {
                if mechanism.type == .steam {
                    _ = try OathGenerator.steam(secret: secret)
                } else {
                    _ = try OathGenerator.hotp(secret: secret, counter: mechanism.counter, digits: mechanism.digits, algorithm: mechanism.algorithm)
                }
            } catch {
                throw FuzzFinding("accepted mechanism cannot make a code (\(error)): \(text)")
            }
            try rebuilds(mechanism, from: text)
        }
    }

    /// The `otpauth://` URI Coffer builds for an accepted mechanism (as vault import and typed-in
    /// accounts do) must parse back to the same account and settings.
    private static func rebuilds(_ mechanism: Mechanism, from text: String) throws(FuzzFinding) {
        let rebuilt = MechanismURI.otpauth(mechanism)
        let again: Mechanism
        do {
            guard let first = try MechanismURI.parse(rebuilt).mechanisms.first else { throw FuzzFinding("rebuilt URI has no mechanism") }
            again = first
        } catch let finding as FuzzFinding {
            throw finding
        } catch {
            throw FuzzFinding("the rebuilt URI does not parse (\(error)): \(text) -> \(rebuilt)")
        }
        guard again.issuer == mechanism.issuer, again.accountName == mechanism.accountName, again.secret == mechanism.secret,
              again.type == mechanism.type, again.algorithm == mechanism.algorithm, again.digits == mechanism.digits,
              again.period == mechanism.period, again.counter == mechanism.counter, again.uid == mechanism.uid,
              again.resourceId == mechanism.resourceId else {
            throw FuzzFinding("the rebuilt URI describes another mechanism: \(text) -> \(rebuilt)")
        }
    }

    /// `SealedEnvelope(parsing:)` on the bytes, then a full decryption attempt by an
    /// `AESGCMEncryptor` with a key of its own. A parsed envelope must serialise back to the same
    /// bytes; decryption must fail with `EncryptorError` (the bytes were not sealed with that key).
    ///
    /// Async because the encryptor is; the fuzz target waits for it on its own thread.
    public static func envelope(_ data: Data) async throws(FuzzFinding) {
        if let envelope = try? SealedEnvelope(parsing: data), envelope.serialized != data {
            throw FuzzFinding("an envelope does not serialise back to the bytes it was parsed from")
        }
        _ = try? IdentityBinding.identity(of: data, location: "fuzz")
        do {
            _ = try await encryptor().decrypt(data: data)
        } catch is EncryptorError {
            return
        } catch {
            throw FuzzFinding("decrypt threw \(type(of: error)), not EncryptorError")
        }
        throw FuzzFinding("random bytes decrypted")
    }

    /// `AegisVault.read` on the bytes, without and with a password, then every entry through
    /// `AegisVault.mechanism(for:)` as an import does. Errors are typed by the signatures; the
    /// finding here is a crash or a hang.
    public static func aegis(_ data: Data) throws(FuzzFinding) {
        for password in [nil, "fuzz"] as [String?] {
            guard let entries = try? AegisVault.read(data, password: password) else { continue }
            for entry in entries {
                _ = try? AegisVault.mechanism(for: entry, now: Date(timeIntervalSince1970: 1_700_000_000))
            }
        }
    }

    /// An export file as `coffer import` reads it: recognised by content, then read as every
    /// format (with a password where one is asked for), and what reads imported into a memory
    /// store. Every imported mechanism must make a code. The finding is a crash, a hang, or an
    /// accepted mechanism that cannot make a code.
    public static func importFile(_ data: Data) throws(FuzzFinding) {
        _ = ImportFormat.detect(data)
        for format in ImportFormat.allCases where format != .image {
            guard let contents = try? format.read(data, password: { "fuzz" }) else { continue }
            let client = AuthenticatorClient(storage: MemoryStorageClient(), clock: { Date(timeIntervalSince1970: 1_700_000_000) })
            guard (try? client.importEntries(contents.entries, overwrite: true)) != nil else { continue }
            for mechanism in client.accounts().flatMap(\.mechanisms) where mechanism.type.generatesCodes {
                guard (try? client.code(for: mechanism)) != nil else {
                    throw FuzzFinding("an imported \(format.rawValue) mechanism cannot make a code: \(data.base64EncodedString())")
                }
            }
        }
    }

    /// An encryptor with one key of its own; made once.
    private static func encryptor() async throws -> AESGCMEncryptor {
        if let made = madeEncryptor.withLock({ $0 }) { return made }
        let keys = MemoryKeyStore()
        try await keys.createKey(for: "fuzz")
        let made = AESGCMEncryptor(keyAlias: "fuzz", keyStore: keys)
        madeEncryptor.withLock { $0 = made }
        return made
    }

    private static let madeEncryptor = Mutex<AESGCMEncryptor?>(nil)
}

/// An input that made a parser break one of its promises.
public struct FuzzFinding: Error, CustomStringConvertible {
    /// Which promise was broken, and the fuzzed input that broke it, so it can be replayed.
    public let description: String
    /// A finding described by `description`.
    public init(_ description: String) { self.description = description }
}

import Crypto
import Foundation

/// Where the key that opens a wrapped key ring comes from: the TPM (``TPMKeyStore``) or a
/// passphrase (``PassphraseKeyStore``). The ring is sealed with AES-256-GCM under that wrapping
/// key in a file of its own (``WrappedKeyRingStore``); the header says how to get the wrapping
/// key back, and is bound into the ring's sealing.
protocol KeyWrapping: Sendable {
    /// What the file keeps, in the clear, to get the wrapping key back.
    associatedtype Header: Codable & Equatable & Sendable

    /// The file's format name (`"format"` in the JSON) and extension.
    static var formatName: String { get }
    static var fileExtension: String { get }

    /// Why `header` is refused before any work (bounds), or `nil`.
    static func problem(with header: Header) -> String?

    /// The bytes of `header` bound into the ring's sealing.
    static func authenticatedData(_ header: Header) -> Data

    /// A new wrapping key for `alias`, and the header that gets it back.
    func newWrappingKey(alias: String) async throws -> (Header, SymmetricKey)

    /// The wrapping key `header` gets back.
    func wrappingKey(for header: Header, alias: String) async throws -> SymmetricKey

    /// Called once a wrapping key opened `header`'s ring (a passphrase store may keep it).
    func opened(_ header: Header, key: SymmetricKey, alias: String)

    /// Called once `header` no longer seals the ring (a new passphrase): what was kept for it
    /// goes.
    func retired(_ header: Header, alias: String)
}

extension KeyWrapping {
    func opened(_ header: Header, key: SymmetricKey, alias: String) {}
    func retired(_ header: Header, alias: String) {}
}

/// A wrapped key ring's file: JSON, versioned, every size bounded before use.
struct WrappedKeyRingFile<Header: Codable & Equatable & Sendable>: Codable, Equatable {
    var format: String
    var version: Int
    var header: Header
    /// The key ring, AES-256-GCM (nonce, ciphertext, tag) under the wrapping key.
    var ring: Data

    init(format: String, header: Header, ring: Data) {
        self.format = format
        version = 1
        self.header = header
        self.ring = ring
    }

    /// Reads a file, refusing anything out of bounds before any key work.
    init<Wrapping: KeyWrapping>(serialized data: Data, for _: Wrapping.Type) throws(KeyRingFormatError)
    where Wrapping.Header == Header {
        guard data.count <= 1 << 20 else { throw KeyRingFormatError(reason: "the file is larger than 1 MiB") }
        let decoded: Self
        do {
            decoded = try JSONDecoder().decode(Self.self, from: data)
        } catch {
            throw KeyRingFormatError(reason: "not a Coffer \(Wrapping.formatName) file (JSON does not match the format)")
        }
        guard decoded.format == Wrapping.formatName else { throw KeyRingFormatError(reason: "not a Coffer \(Wrapping.formatName) file") }
        guard decoded.version == 1 else {
            throw KeyRingFormatError(reason: "\(Wrapping.formatName) version \(decoded.version) is not known to this version of Coffer")
        }
        if let problem = Wrapping.problem(with: decoded.header) { throw KeyRingFormatError(reason: problem) }
        self = decoded
    }

    func serialized() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Integers, strings and Data always encode.
        return try! encoder.encode(self)
    }
}

import CofferStorage
import Crypto
import TestSupport
import Foundation
import Testing

/// A key printed, logged, debug-printed or dumped never shows its material.
@Suite("Keys never show their material")
struct KeyRedactionTests {
    /// The forms key bytes would take in text: hex, base64 and the decimal list `dump` prints.
    static func forms(of key: SymmetricKey) -> [String] {
        let bytes = key.withUnsafeBytes { Array($0) }
        return [bytes.map { String(format: "%02x", $0) }.joined(), Data(bytes).base64EncodedString(),
                bytes.prefix(4).map { "- \($0)" }.joined(separator: "\n")]
    }

    @Test("VersionedKey and KeyRing show ids, never key material")
    func keys() {
        var ring = KeyRing.fresh()
        _ = ring.rotate()
        for (value, key) in [(ring.primary as Any, ring.primary.key), (ring as Any, ring.key(id: 1)!.key)] {
            for text in renderings(of: value) {
                for form in Self.forms(of: key) { #expect(!text.contains(form), "\(text)") }
                #expect(!text.contains("bytes"), "\(text)")
            }
        }
    }
}

/// A storage dumped, or an error about a value it could not encode or decode, never shows the
/// value (the dictionary keys in a coding path are part of it).
@Suite("Storages never show their values")
struct StorageRedactionTests {
    private struct Counted: Codable { var count: Int }

    @Test("dump of a storage shows its strategy, never the value or its memory copy", arguments: CacheStrategy.allCases)
    func dumps(strategy: CacheStrategy) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let storages: [any Storage<String>] = [
            MemoryStorage<String>(cacheable: strategy == .cache),
            FileStorage<String>(fileName: "plain", directory: directory.url, cacheStrategy: strategy),
            EncryptedFileStorage<String>(fileName: "sealed", directory: directory.url, keyStore: MemoryKeyStore(), cacheStrategy: strategy),
        ]
        for storage in storages {
            try await storage.save(item: "SECRETSECRET")
            #expect(try await storage.get() == "SECRETSECRET")
            let text = dumped(storage)
            #expect(!text.contains("SECRETSECRET") && text.contains("cacheStrategy"), "\(text)")
        }
    }

    @Test("a dictionary key in the coding path of an encoding or decoding error is shown as <key>; a field name is shown")
    func codingPaths() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let sealed = EncryptedFileStorage<[String: Double]>(fileName: "numbers", directory: directory.url, keyStore: MemoryKeyStore())
        do {
            try await sealed.save(item: ["SECRETSECRET": .nan])
            Issue.record("NaN was encoded")
        } catch {
            #expect(error is StorageError)
            for text in renderings(of: error) + [(error as? LocalizedError)?.errorDescription ?? ""] {
                #expect(!text.contains("SECRETSECRET") && text.contains("<key>"), "\(text)")
            }
        }

        try await FileStorage<[String: String]>(fileName: "map", directory: directory.url).save(item: ["SECRETSECRET": "x"])
        await #expect { _ = try await FileStorage<[String: Int]>(fileName: "map", directory: directory.url).get() } throws: { error in
            "\(error)".contains("<key>") && !"\(error)".contains("SECRETSECRET")
        }
        try await FileStorage<[String: String]>(fileName: "counted", directory: directory.url).save(item: ["count": "x"])
        await #expect { _ = try await FileStorage<Counted>(fileName: "counted", directory: directory.url).get() } throws: { error in
            "\(error)".contains("at 'count'")
        }
    }
}

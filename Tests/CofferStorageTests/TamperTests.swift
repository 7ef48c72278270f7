import Foundation
import CofferStorage
import TestSupport
import Testing

/// R3: random damage to encrypted files — bit flips, truncations, extensions, replacements and
/// files swapped between stores. Every case must be detected with a typed error, and the file
/// left exactly as it was. `scripts/reliability` runs 10,000 cases; the suite runs 2,000.
@Suite("Tamper detection under random damage")
struct TamperTests {
    static let cases = Int(ProcessInfo.processInfo.environment["COFFER_TAMPER_CASES"] ?? "") ?? 2_000

    @Test("every random change to an encrypted file is a typed error and leaves the file as it was")
    func randomDamage() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let keys = MemoryKeyStore()
        let alice = EncryptedFileStorage<String>(fileName: "alice", keyAlias: "shared", directory: directory.url, keyStore: keys)
        let bob = EncryptedFileStorage<String>(fileName: "bob", keyAlias: "shared", directory: directory.url, keyStore: keys)
        try await alice.save(item: String(repeating: "alice's secret ", count: 20))
        try await bob.save(item: "bob's secret")
        let original = try Data(contentsOf: alice.fileURL)
        let swapped = try Data(contentsOf: bob.fileURL)

        var generator = SystemRandomNumberGenerator()
        var detected: [String: Int] = [:]
        for index in 0..<Self.cases {
            var damaged = original
            switch index % 5 {
            case 0:
                let bit = Int.random(in: 0..<(damaged.count * 8), using: &generator)
                damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            case 1:
                damaged = damaged.prefix(Int.random(in: 0..<damaged.count, using: &generator))
            case 2:
                damaged.append(contentsOf: (0..<Int.random(in: 1...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            case 3:
                damaged = Data((0..<Int.random(in: 0...original.count * 2, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            default:
                damaged = swapped
            }
            guard damaged != original else { continue }
            try damaged.write(to: alice.fileURL)
            do {
                _ = try await alice.get()
                Issue.record("case \(index): damaged data was accepted")
            } catch let error as StorageError {
                let kind = switch error {
                case .decryptionFailed: "decryptionFailed"
                case .identityMismatch: "identityMismatch"
                case .corrupted: "corrupted"
                default: "other: \(error)"
                }
                detected[kind, default: 0] += 1
            }
            #expect(try Data(contentsOf: alice.fileURL) == damaged, "case \(index): the damaged file must be left as it was")
        }
        #expect(detected.keys.allSatisfy { !$0.hasPrefix("other") }, "\(detected)")
        #expect(detected["identityMismatch"] ?? 0 > 0 && detected["decryptionFailed"] ?? 0 > 0)
        #expect(detected.values.reduce(0, +) >= Self.cases * 9 / 10)
        let total = detected.values.reduce(0, +)
        ReliabilityReport.record("R3", "bit flips, truncations, extensions, replacements, swaps: encrypted file",
                                 tried: "\(total) damaged files",
                                 outcome: detected.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + "; all left as they were")
    }
}

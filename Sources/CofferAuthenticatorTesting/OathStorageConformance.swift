import CofferStorageTesting
import CofferOath
import Foundation

/// A conformance suite for `OathStorage` implementations (Ping's Oath module's storage
/// protocol): the behaviours Ping's client relies on (reference §9), plus Coffer's promises
/// for its own storages. The project runs it against every built-in storage; run it against
/// yours:
///
/// ```swift
/// @Test func myStorageConforms() async throws {
///     try await OathStorageConformance(makeStorage: { MyOathStorage() }).run()
/// }
/// ```
///
/// The factory must return an empty storage that shares nothing with the others it makes.
public struct OathStorageConformance: Sendable {
    /// Makes a fresh, empty storage.
    public let makeStorage: @Sendable () async throws -> any OathStorage

    /// Creates the suite.
    public init(makeStorage: @escaping @Sendable () async throws -> any OathStorage) {
        self.makeStorage = makeStorage
    }

    /// Every check, in order. Stops at the first failure. Each check clears the storage it
    /// made when it passes, so a shared backend (a keyring) does not fill up.
    public func run() async throws {
        try await checkEmpty()
        try await checkRoundTrip()
        try await checkUpsert()
        try await checkRemoveAndClear()
        try await checkIdsByBytes()
        try await checkSecretNotInMetadata()
        try await checkConcurrentWriters()
        try await checkAtomicCounter()
    }

    static let secret = "JBSWY3DPEHPK3PXP"

    func credential(_ id: String, issuer: String = "Issuer", type: OathType = .hotp, createdAt: Date = Date(timeIntervalSince1970: 1_700_000_000)) -> OathCredential {
        OathCredential(
            id: id, userId: "user-\(id)", resourceId: "resource-\(id)", issuer: issuer, displayIssuer: "Shown \(issuer)",
            accountName: "alice-\(id)", displayAccountName: "Alice", oathType: type, oathAlgorithm: .sha256, digits: 8,
            period: 45, counter: 3, createdAt: createdAt, imageURL: "https://example.com/logo.png", backgroundColor: "112233",
            policies: "{\"deviceTampering\":{}}", lockingPolicy: nil, isLocked: false, secretKey: Self.secret)
    }

    /// A fresh storage is empty; a missing id reads as `nil`, removes as `false`; clearing an
    /// empty storage succeeds.
    public func checkEmpty() async throws {
        let storage = try await makeStorage()
        try expect(try await storage.getAllOathCredentials().isEmpty, "empty", "a fresh storage lists credentials")
        try expect(try await storage.retrieveOathCredential(credentialId: "nope") == nil, "empty", "a missing id reads as a credential")
        try expect(try await storage.removeOathCredential(credentialId: "nope") == false, "empty", "removing a missing id answered true")
        try await storage.clearOathCredentials()
    }

    /// Every field, the secret included, reads back as stored.
    public func checkRoundTrip() async throws {
        let storage = try await makeStorage()
        let stored = credential("round-trip")
        try await storage.storeOathCredential(stored)
        guard let read = try await storage.retrieveOathCredential(credentialId: stored.id) else {
            throw ConformanceFailure(check: "roundTrip", message: "a stored credential is not found")
        }
        try expect(Self.same(read, stored), "roundTrip", "the credential read back differs from the one stored")
        try expect(read.secret == Self.secret, "roundTrip", "the secret did not read back")
        let all = try await storage.getAllOathCredentials()
        try expect(all.count == 1 && Self.same(all[0], stored) && all[0].secret == Self.secret, "roundTrip", "getAll does not return the credential with its secret")
        try await storage.clearOathCredentials()
    }

    /// Storing a credential again with the same id replaces it (the client persists counters
    /// and locks that way).
    public func checkUpsert() async throws {
        let storage = try await makeStorage()
        var stored = credential("upsert")
        try await storage.storeOathCredential(stored)
        stored.counter = 99
        stored.lockCredential(policyName: "deviceTampering")
        stored.displayAccountName = "Renamed"
        try await storage.storeOathCredential(stored)
        let all = try await storage.getAllOathCredentials()
        try expect(all.count == 1, "upsert", "storing an existing id again added a credential (\(all.count))")
        let read = try await storage.retrieveOathCredential(credentialId: stored.id)
        try expect(read.map { Self.same($0, stored) } == true, "upsert", "the update did not replace the credential")
        try await storage.clearOathCredentials()
    }

    /// Removing takes the credential and its secret; clearing takes all.
    public func checkRemoveAndClear() async throws {
        let storage = try await makeStorage()
        for index in 0..<3 { try await storage.storeOathCredential(credential("remove-\(index)")) }
        try expect(try await storage.removeOathCredential(credentialId: "remove-1"), "remove", "removing a stored id answered false")
        try expect(try await storage.retrieveOathCredential(credentialId: "remove-1") == nil, "remove", "a removed credential reads back")
        try expect(try await storage.getAllOathCredentials().count == 2, "remove", "removing one credential removed another too, or none")
        try await storage.clearOathCredentials()
        try expect(try await storage.getAllOathCredentials().isEmpty, "clear", "clear left credentials")
    }

    /// Two ids that differ only in Unicode normalisation ("é" as one code point, and "e" with a
    /// combining accent) are two credentials, as SQLite and the keyring tell them apart: each
    /// is stored, read, listed and removed on its own, and ties in time list in byte order.
    public func checkIdsByBytes() async throws {
        let storage = try await makeStorage()
        let composed = credential("caf\u{E9}", issuer: "Composed")
        let decomposed = credential("cafe\u{301}", issuer: "Decomposed")
        try await storage.storeOathCredential(composed)
        try await storage.storeOathCredential(decomposed)
        let all = try await storage.getAllOathCredentials().map(\.issuer)
        try expect(all == ["Decomposed", "Composed"], "idsByBytes", "two ids that differ in normalisation are not two credentials in byte order: \(all)")
        try expect(try await storage.retrieveOathCredential(credentialId: composed.id)?.issuer == "Composed", "idsByBytes", "the composed id reads another credential")
        try expect(try await storage.retrieveOathCredential(credentialId: decomposed.id)?.issuer == "Decomposed", "idsByBytes", "the decomposed id reads another credential")
        try expect(try await storage.removeOathCredential(credentialId: composed.id), "idsByBytes", "removing the composed id answered false")
        let left = try await storage.getAllOathCredentials().map(\.issuer)
        try expect(left == ["Decomposed"], "idsByBytes", "removing one of the two ids removed the other too: \(left)")
        try await storage.clearOathCredentials()
    }

    /// The secret never appears in the credential's JSON, `description` or `dump`.
    public func checkSecretNotInMetadata() async throws {
        let storage = try await makeStorage()
        try await storage.storeOathCredential(credential("no-leak"))
        guard let read = try await storage.retrieveOathCredential(credentialId: "no-leak") else {
            throw ConformanceFailure(check: "noLeak", message: "a stored credential is not found")
        }
        var dumped = ""
        dump(read, to: &dumped)
        let json = String(decoding: try JSONEncoder().encode(read), as: UTF8.self)
        for (name, text) in [("JSON", json), ("description", read.description), ("dump", dumped), ("interpolation", "\(read)")] {
            try expect(!text.contains(Self.secret), "noLeak", "the secret appears in the credential's \(name)")
        }
        try await storage.clearOathCredentials()
    }

    /// Eight tasks storing 25 credentials each at once lose none.
    public func checkConcurrentWriters() async throws {
        let storage = try await makeStorage()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<25 { try await storage.storeOathCredential(credential("t\(task)-\(index)")) }
                }
            }
            try await group.waitForAll()
        }
        let count = try await storage.getAllOathCredentials().count
        try expect(count == 200, "concurrentWriters", "\(200 - count) of 200 credentials stored at once were lost")
        try await storage.clearOathCredentials()
    }

    /// For an `OathCounterStorage`: 4 tasks × 25 advances of one counter give 100 distinct
    /// counters and leave the counter 100 on.
    public func checkAtomicCounter() async throws {
        guard let storage = try await makeStorage() as? any OathCounterStorage else { return }
        let start = credential("counter")
        try await storage.storeOathCredential(start)
        let used = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var counters: [Int] = []
                    for _ in 0..<25 {
                        guard let read = try await storage.advanceOathCounter(credentialId: start.id, check: { _ in }) else { return counters }
                        counters.append(read.counter)
                    }
                    return counters
                }
            }
            return try await group.reduce(into: [Int]()) { $0 += $1 }
        }
        try expect(Set(used).count == 100, "atomicCounter", "100 advances gave \(Set(used).count) distinct counters")
        let final = try await storage.retrieveOathCredential(credentialId: start.id)?.counter
        try expect(final == start.counter + 100, "atomicCounter", "the counter ended at \(final.map(String.init) ?? "nothing"), not \(start.counter + 100)")
        try expect(try await storage.advanceOathCounter(credentialId: "missing", check: { _ in }) == nil, "atomicCounter", "advancing a missing id found a credential")
        try await storage.clearOathCredentials()
    }

    /// Every property of the two credentials is equal (credentials are not `Equatable`, as in Ping).
    public static func same(_ a: OathCredential, _ b: OathCredential) -> Bool {
        a.id == b.id && a.userId == b.userId && a.resourceId == b.resourceId && a.issuer == b.issuer
            && a.displayIssuer == b.displayIssuer && a.accountName == b.accountName && a.displayAccountName == b.displayAccountName
            && a.oathType == b.oathType && a.oathAlgorithm == b.oathAlgorithm && a.digits == b.digits && a.period == b.period
            && a.counter == b.counter && abs(a.createdAt.timeIntervalSince(b.createdAt)) < 0.001 && a.imageURL == b.imageURL
            && a.backgroundColor == b.backgroundColor && a.policies == b.policies && a.lockingPolicy == b.lockingPolicy
            && a.isLocked == b.isLocked && a.secret == b.secret
    }

    private func expect(_ condition: Bool, _ check: String, _ message: @autoclosure () -> String) throws {
        if !condition { throw ConformanceFailure(check: check, message: message()) }
    }
}

import CofferStorage

/// A conformance suite for any `Storage` implementation: the project runs it against
/// every built-in backend, and you can run it against yours.
///
/// It needs no test framework: each check throws a ``ConformanceFailure`` naming what broke, so it
/// works from Swift Testing, XCTest or a plain executable:
///
/// ```swift
/// @Test func myStorageConforms() async throws {
///     try await StorageConformance(makeStorage: { MyStorage<Sample>() }).run()
/// }
/// ```
///
/// The factory must return a storage that is empty and not shared with other storages created by
/// the factory (a fresh file name, a fresh keyring account). Every check deletes what it saved
/// when it ends, so a run against a real keyring or database leaves no values behind.
public struct StorageConformance: Sendable {
    /// Makes a fresh, empty storage.
    public let makeStorage: @Sendable () async throws -> any Storage<ConformanceSample>

    /// Creates the suite.
    public init(makeStorage: @escaping @Sendable () async throws -> any Storage<ConformanceSample>) {
        self.makeStorage = makeStorage
    }

    /// Every check, in order. Stops at the first failure.
    public func run() async throws {
        try await checkGetWhenEmpty()
        try await checkRoundTrip()
        try await checkOverwrite()
        try await checkDelete()
        try await checkDeleteWhenAbsent()
        try await checkConcurrentAccess()
    }

    /// `get()` on a fresh storage returns `nil`.
    public func checkGetWhenEmpty() async throws {
        try await withFreshStorage("getWhenEmpty") { storage in
            let value = try await storage.get()
            try expect(value == nil, "getWhenEmpty", "get() on a fresh storage returned a value instead of nil")
        }
    }

    /// A saved value comes back equal, including non-ASCII text, empty fields and large payloads.
    public func checkRoundTrip() async throws {
        for sample in [ConformanceSample.number(1), .unusual, .large] {
            try await withFreshStorage("roundTrip") { storage in
                try await storage.save(item: sample)
                let value = try await storage.get()
                try expect(value == sample, "roundTrip", "get() after save() returned \(describe(value)), expected \(sample)")
            }
        }
    }

    /// A second save replaces the first.
    public func checkOverwrite() async throws {
        try await withFreshStorage("overwrite") { storage in
            try await storage.save(item: .number(1))
            try await storage.save(item: .number(2))
            let value = try await storage.get()
            try expect(value == .number(2), "overwrite", "get() after two saves returned \(describe(value)), expected the second")
        }
    }

    /// After `delete()`, `get()` returns `nil`, and a new save works.
    public func checkDelete() async throws {
        try await withFreshStorage("delete") { storage in
            try await storage.save(item: .number(1))
            try await storage.delete()
            let afterDelete = try await storage.get()
            try expect(afterDelete == nil, "delete", "get() after delete() returned \(describe(afterDelete))")
            try await storage.save(item: .number(3))
            let afterSave = try await storage.get()
            try expect(afterSave == .number(3), "delete", "save() after delete() did not stick: \(describe(afterSave))")
        }
    }

    /// `delete()` of nothing succeeds, also twice in a row.
    public func checkDeleteWhenAbsent() async throws {
        try await withFreshStorage("deleteWhenAbsent") { storage in
            do {
                try await storage.delete()
                try await storage.save(item: .number(1))
                try await storage.delete()
                try await storage.delete()
            } catch {
                throw ConformanceFailure(check: "deleteWhenAbsent", message: "delete() of an absent value threw: \(error)")
            }
        }
    }

    /// `tasks` tasks save, read and overwrite one storage at once. No call fails, every read sees
    /// a value some task saved (never a torn or foreign one), and the storage is usable afterwards.
    public func checkConcurrentAccess(tasks: Int = 32, rounds: Int = 5) async throws {
        try await withFreshStorage("concurrentAccess") { storage in
            try await storage.save(item: .number(0))
            let written = Set((0...tasks * rounds).map(ConformanceSample.number))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<tasks {
                    group.addTask {
                        for round in 0..<rounds {
                            try await storage.save(item: .number(1 + task * rounds + round))
                            let seen = try await storage.get()
                            guard let seen, written.contains(seen) else {
                                throw ConformanceFailure(
                                    check: "concurrentAccess", message: "a concurrent get() returned \(describe(seen))")
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            try await storage.save(item: .number(-1))
            let final = try await storage.get()
            try expect(final == .number(-1), "concurrentAccess", "after concurrent use, save/get returned \(describe(final))")
        }
    }

    /// Makes a fresh storage, runs `body` on it and deletes what it holds afterwards, so the suite
    /// leaves nothing behind in a shared place such as the login keyring (whose daemon rewrites its
    /// whole file on every change: a quarter-megabyte sample left there slows every later write).
    /// After a failure the delete is still tried, but the failure is what is thrown.
    private func withFreshStorage(
        _ check: String, _ body: (any Storage<ConformanceSample>) async throws -> Void
    ) async throws {
        let storage = try await makeStorage()
        do {
            try await body(storage)
        } catch {
            // The check's own failure is the news; a delete failing after it would hide it.
            try? await storage.delete()
            throw error
        }
        do {
            try await storage.delete()
        } catch {
            throw ConformanceFailure(check: check, message: "delete() after the check threw: \(error)")
        }
    }

    private func expect(_ condition: Bool, _ check: String, _ message: @autoclosure () -> String) throws {
        if !condition { throw ConformanceFailure(check: check, message: message()) }
    }
}

private func describe(_ value: ConformanceSample?) -> String {
    value.map { "\($0)" } ?? "nil"
}

/// A check of ``StorageConformance`` (or of a kit of `CofferAuthenticatorTesting`) that did not hold.
public struct ConformanceFailure: Error, CustomStringConvertible, Sendable {
    /// The check's name.
    public let check: String
    /// What was observed.
    public let message: String

    /// Creates a failure.
    public init(check: String, message: String) {
        self.check = check
        self.message = message
    }

    /// `conformance check '<check>' failed: <message>`, as a test failure prints it.
    public var description: String { "conformance check '\(check)' failed: \(message)" }
}

/// The value the conformance suite stores: a record with the kinds of fields real values have.
public struct ConformanceSample: Codable, Sendable, Hashable, CustomStringConvertible {
    /// A number that tells samples apart.
    public var number: Int
    /// Text, including non-ASCII and empty strings.
    public var text: String
    /// An optional field.
    public var note: String?
    /// Binary data.
    public var bytes: [UInt8]

    /// Creates a sample.
    public init(number: Int, text: String, note: String?, bytes: [UInt8]) {
        self.number = number
        self.text = text
        self.note = note
        self.bytes = bytes
    }

    /// A small sample identified by `n`.
    public static func number(_ n: Int) -> ConformanceSample {
        ConformanceSample(number: n, text: "sample \(n)", note: n.isMultiple(of: 2) ? nil : "odd", bytes: [UInt8(truncatingIfNeeded: n)])
    }

    /// Text that trips naive encoders: quotes, escapes, control characters, emoji, empty note.
    public static let unusual = ConformanceSample(
        number: Int.max, text: "Grüße \"quoted\" \\ back\nslash\t😀 \u{0}", note: "", bytes: [0, 255, 10, 13])

    /// A payload of about 256 KiB.
    public static let large = ConformanceSample(
        number: -7, text: String(repeating: "0123456789abcdef", count: 8192), note: nil,
        bytes: (0..<131_072).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    /// The sample's number and sizes, without its text or bytes (the large one is 256 KiB).
    public var description: String { "Sample(\(number), \(text.count) chars, \(bytes.count) bytes)" }
}

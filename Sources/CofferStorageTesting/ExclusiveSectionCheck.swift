import CofferStorage

/// Checks that a storage's exclusive section (`ExclusiveSection`) excludes its
/// holders: `holders` storages on the same stored value each add one to a counter inside the
/// section, reading, pausing and writing; every addition must survive. Without the section
/// most are lost, as two refreshers of one token would race.
///
/// ```swift
/// @Test func mySectionExcludes() async throws {
///     try await ExclusiveSectionCheck(makeStorage: { MyStorage<Int>(key: "shared") }).run()
/// }
/// ```
///
/// The factory must return a new storage instance each time, all on the same stored value (as
/// separate processes would each make their own), empty before the first call.
public struct ExclusiveSectionCheck: Sendable {
    /// How many holders race.
    public let holders: Int
    /// Makes one holder's storage.
    public let makeStorage: @Sendable () async throws -> StorageDelegate<Int>

    /// A check with `holders` holders.
    public init(holders: Int = 8, makeStorage: @escaping @Sendable () async throws -> StorageDelegate<Int>) {
        self.holders = holders
        self.makeStorage = makeStorage
    }

    /// Races the holders; throws a ``ConformanceFailure`` naming how many additions were lost.
    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<holders {
                let storage = try await makeStorage()
                group.addTask {
                    try await storage.withExclusiveSection {
                        let seen = try await storage.get() ?? 0
                        try await Task.sleep(for: .milliseconds(20))
                        try await storage.save(item: seen + 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = try await makeStorage().get() ?? 0
        guard total == holders else {
            throw ConformanceFailure(check: "exclusiveSection", message: "\(holders - total) of \(holders) additions were lost: the section does not exclude its holders")
        }
    }
}

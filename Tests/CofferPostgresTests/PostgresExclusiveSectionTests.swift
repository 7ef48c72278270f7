import CofferPostgres
import CofferStorage
import CofferStorageTesting
import Foundation
import Synchronization
import TestSupport
import Testing

/// PostgresStorage's exclusive section: an advisory lock every replica takes.
@Suite("PostgresStorage's exclusive section", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct PostgresExclusiveSectionTests {
    @Test("eight holders of one value (four on each of two instances of the database), no addition lost")
    func eightHolders() async throws {
        try await TestPostgres.withDatabase { first, url in
            try await TestPostgres.running(try TestPostgres.database(url)) { second in
                let counter = Counter()
                try await ExclusiveSectionCheck(makeStorage: {
                    let database = counter.next() % 2 == 0 ? first : second
                    return PostgresStorage<Int>(database: database, namespace: "sections", key: "counter", cacheStrategy: .cache)
                }).run()
            }
        }
    }
}

private final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { count in defer { count += 1 }; return count } }
}

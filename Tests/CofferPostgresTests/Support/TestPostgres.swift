import CofferPostgres
import Foundation
import Logging
import TestSupport
import Testing

/// The throwaway PostgreSQL cluster `scripts/test` starts (scripts/with-postgres), and fresh
/// databases on it: each test gets a database of its own, so tests never see each other's rows.
enum TestPostgres {
    /// The cluster's admin URL, when there is a cluster.
    static let adminURL = ProcessInfo.processInfo.environment["COFFER_TEST_DATABASE_URL"]

    static var isRunning: Bool { adminURL != nil }

    static let skipReason: Comment = "needs the throwaway PostgreSQL cluster that scripts/test starts; run scripts/test"

    /// One key-encryption key for the tests that do not care which.
    static let kek = KeyEncryptionKey.random()

    /// The repository's root folder.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A new empty database on the cluster at `admin` (the shared one by default), and its URL.
    static func freshDatabase(admin: String? = adminURL) async throws -> String {
        guard let admin else { throw CocoaError(.featureUnsupported) }
        let name = "coffer_test_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
        let created = try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/psql"), [admin, "-Atqc", "CREATE DATABASE \(name)"])
        try #require(created.status == 0, "\(created.stderr)")
        return admin.replacingOccurrences(of: "@/postgres?", with: "@/\(name)?")
    }

    /// Runs `sql` with psql against `url` and returns what it prints.
    @discardableResult
    static func psql(_ url: String, _ sql: String) async throws -> String {
        let result = try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/psql"), [url, "-Atqc", sql])
        try #require(result.status == 0, "\(sql): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A database object for `url` (not running). Its operations get 30 s, not the default 10 s:
    /// the suite runs every test at once on two cores, beside the `coffer` processes some of them
    /// start, and what the tests check is what happens, not how fast (those that check a
    /// deadline set their own).
    static func database(_ url: String, kek: KeyEncryptionKey = kek, configure: (inout CofferDatabase.Configuration.Options) -> Void = { _ in }) throws -> CofferDatabase {
        var options = CofferDatabase.Configuration.Options()
        options.operationTimeout = .seconds(30)
        configure(&options)
        return try CofferDatabase(configuration: .init(url: try PostgresConnectionURL(url), keyEncryptionKey: kek, options: options),
                                    logger: Logger(label: "test.postgres"))
    }

    /// Runs `database` for the time of `body`, migrated first; cancels it afterwards.
    @discardableResult
    static func running<R: Sendable>(_ database: CofferDatabase, migrate: Bool = true, _ body: @Sendable (CofferDatabase) async throws -> R) async throws -> R {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await database.run() }
            defer { group.cancelAll() }
            if migrate { try await database.migrate() }
            return try await body(database)
        }
    }

    /// Waits until `database` listens for other instances' changes (10 s at most: a hang guard).
    static func untilListening(_ database: CofferDatabase) async throws {
        let start = ContinuousClock.now
        while !database.isListeningForChanges, ContinuousClock.now - start < .seconds(10) { try await Task.sleep(for: .milliseconds(5)) }
        try #require(database.isListeningForChanges, "the change listener connected")
    }

    /// A fresh database, running, for `body`.
    static func withDatabase<R: Sendable>(kek: KeyEncryptionKey = kek, _ body: @Sendable (CofferDatabase, String) async throws -> R) async throws -> R {
        let url = try await freshDatabase()
        return try await running(try database(url, kek: kek)) { try await body($0, url) }
    }
}

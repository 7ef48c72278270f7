@testable import CofferOidc
import CofferOrchestrate
import CofferPostgres
import CofferStorage
import Foundation
import Logging
import TestSupport
import Testing

/// Server replicas sharing one session in PostgreSQL (`PostgresStorage<Token>`): at expiry they
/// make one refresh between them, through the advisory lock of the session's exclusive section.
@Suite("Replicas on PostgreSQL share one refresh",
       .enabled(if: TestProvider.isRunning && ProcessInfo.processInfo.environment["COFFER_TEST_DATABASE_URL"] != nil,
                "needs the OpenID Provider and the PostgreSQL cluster that scripts/test starts"), .timeLimit(.minutes(3)))
struct PostgresReplicaTests {
    @Test("4 replicas (on 2 database instances) at expiry, the provider slowed to 2 s a refresh: one refresh, one token for all, the session lives on")
    func fourReplicas() async throws {
        let admin = try #require(ProcessInfo.processInfo.environment["COFFER_TEST_DATABASE_URL"])
        let name = "coffer_oidc_\(UUID().uuidString.prefix(8).lowercased())"
        let created = try await CofferProcess.run(executable: URL(fileURLWithPath: "/usr/bin/psql"), [admin, "-Atqc", "CREATE DATABASE \(name)"])
        try #require(created.status == 0, "\(created.stderr)")
        let url = admin.replacingOccurrences(of: "@/postgres?", with: "@/\(name)?")
        let kek = KeyEncryptionKey.random()
        func database() throws -> CofferDatabase {
            var options = CofferDatabase.Configuration.Options()
            options.operationTimeout = .seconds(30)
            return try CofferDatabase(configuration: .init(url: try PostgresConnectionURL(url), keyEncryptionKey: kek, options: options),
                                      logger: Logger(label: "test.postgres"))
        }
        let replicas = [try database(), try database()]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for replica in replicas { group.addTask { try await replica.run() } }
            defer { group.cancelAll() }
            for replica in replicas { try await replica.migrate() }

            let browser = Browser()
            defer { browser.remove() }
            let first = TestProvider.config(clientId: "coffer-replicas", browser: browser)
            first.storage = PostgresStorage<Token>(database: replicas[0], namespace: "sessions", key: "alice")
            let before = try await browser.signIn(OidcClient(config: first))

            // Access tokens live 600 s: six seconds on, one wanted valid 595 s more is expiring.
            try await Task.sleep(for: .seconds(6))
            let delay = URL(fileURLWithPath: TestProvider.environment["COFFER_TEST_OIDC_STATE"] ?? "/nonexistent").appendingPathComponent("delay-coffer-replicas")
            try "2".write(to: delay, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: delay) }
            let calls = delay.deletingLastPathComponent().appendingPathComponent("calls-coffer-replicas")
            try "".write(to: calls, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: calls) }
            let tokens = try await withThrowingTaskGroup(of: String.self) { replicasAtOnce in
                for index in 0..<4 {
                    let config = TestProvider.config(clientId: "coffer-replicas")
                    config.storage = PostgresStorage<Token>(database: replicas[index % 2], namespace: "sessions", key: "alice")
                    config.refreshThreshold = 595
                    replicasAtOnce.addTask { try await OidcClient(config: config).token().get().accessToken }
                }
                return try await replicasAtOnce.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1 && tokens.first != before.accessToken, "\(tokens.count) different tokens")
            // The provider saw one refresh (it lets concurrent ones through, each spending the
            // token, so counting them is the only proof).
            let refreshes = try String(contentsOf: calls, encoding: .utf8).split(separator: "\n")
            #expect(refreshes == ["refresh_token"], "the provider saw \(refreshes)")
            // No spent refresh token was presented: the provider still refreshes the session.
            try FileManager.default.removeItem(at: delay)
            let current = try #require(try await first.storage.get())
            #expect(current.accessToken == tokens.first)
            #expect(try await TestProvider.refreshes(try #require(current.refreshToken), clientId: "coffer-replicas"))
        }
    }
}

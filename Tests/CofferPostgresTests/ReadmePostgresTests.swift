import CofferAuthenticator
import CofferPostgres
import CofferPostgresAuthenticator
import CofferStorage
import Foundation
import Logging
import ServiceLifecycle
import TestSupport
import Testing

// The README's "Running on a server" example, verbatim (CofferStorageTests checks that every
// README example appears in a test file).

@Suite("README server example", .enabled(if: TestPostgres.isRunning, TestPostgres.skipReason))
struct ReadmePostgresTests {
    struct TokenSet: Codable, Sendable, Equatable {
        var accessToken: String
        var refreshToken: String
    }

    @Test("a ServiceGroup runs the database; token sets and authenticator records go through it")
    func server() async throws {
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let kekPath = temporary.appending("coffer.kek").path
        _ = try KeyEncryptionKey.create(atFile: kekPath)
        let databaseURL = try await TestPostgres.freshDatabase()
        let logger = Logger(label: "readme")
        let sessionID = "session-42", userID = "user-7"
        let mechanism = Mechanism(issuer: "Bank", accountName: "alice", type: .hotp, secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")

        let database = try CofferDatabase(configuration: .init(
            url: try PostgresConnectionURL(databaseURL),                // e.g. postgresql://coffer@/coffer?host=/run/postgresql
            keyEncryptionKey: try KeyEncryptionKey.load(fromFile: kekPath)))  // the same 0600 file on every instance

        try await withThrowingTaskGroup(of: Void.self) { group in
            let services = ServiceGroup(services: [database], gracefulShutdownSignals: [.sigterm], logger: logger)
            group.addTask { try await services.run() }
            try await database.migrate()                                 // every instance may call it at start

            // One token set per user session, sealed and bound to (namespace, key).
            let tokens = PostgresStorage<TokenSet>(database: database, namespace: "sessions", key: sessionID)
            try await tokens.save(item: TokenSet(accessToken: "at", refreshToken: "rt"))
            let current = try await tokens.get()

            // The authenticator's records of one user: the async API blocks no thread.
            let client = PostgresStorageClient(database: database, owner: userID)
            try await client.insert(mechanism)
            let claimed = try await client.advanceCounter(of: mechanism.mechanismUUID)  // no two instances get the same
            let code = try OathGenerator.hotp(secret: Base32.decode(claimed.secret), counter: claimed.counter)

            // Running on a server (the article): rotating the authenticator records' key.
            _ = try await database.keys.rotateKey(for: PostgresStorageClient.defaultKeyAlias)
            let next = try await client.advanceCounter(of: mechanism.mechanismUUID)      // re-sealed under the new key
            let nextCode = try OathGenerator.hotp(secret: Base32.decode(next.secret), counter: next.counter)
            #expect(try await database.keys.primaryKey(for: PostgresStorageClient.defaultKeyAlias)?.id == 2)

            await services.triggerGracefulShutdown()
            try await group.waitForAll()

            #expect(current == TokenSet(accessToken: "at", refreshToken: "rt"))
            #expect(code == "755224", "RFC 4226, counter 0")
            #expect(nextCode == "287082", "RFC 4226, counter 1, after the rotation")
        }
    }
}

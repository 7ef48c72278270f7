import CofferAuthenticator
import CofferAuthenticatorTesting
import CofferStorage
import Foundation
import Logging
import TestSupport
import Testing

/// `SQLiteStorageClient(connections: .single)`: one connection for a short-lived process (the
/// tool's commands), which opens a file that is already Coffer's without writing to it.
@Suite("SQLiteStorageClient with one connection")
struct SQLiteSingleConnectionTests {
    let keys = MemoryKeyStore()

    func client(_ path: String, _ connections: SQLiteStorageClient.Connections) throws -> SQLiteStorageClient {
        try SQLiteStorageClient(path: path, encryptor: AESGCMEncryptor(keyAlias: "authenticator", keyStore: keys),
                                logger: Logger(label: "test"), connections: connections)
    }

    /// A Coffer database at `path` holding one account with a TOTP mechanism, made by a pool.
    func made(_ path: String) throws {
        let pool = try client(path, .pool)
        pool.setAccount(account: Account(issuer: "Example", accountName: "alice"))
        pool.setMechanism(mechanism: Mechanism(mechanismUUID: "m", issuer: "Example", accountName: "alice", type: .totp, secret: "JBSWY3DPEHPK3PXP"))
    }

    @Test("conforms, on files that are already Coffer's (a new file is made by a pool)")
    func conforms() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await StorageClientConformance(makeClient: {
            let path = directory.appending("\(UUID().uuidString).sqlite").path
            _ = try client(path, .pool)
            return try client(path, .single)
        }).run()
    }

    @Test("a process that only reads leaves the file byte for byte as it was, and no WAL behind; a pool rewrites it")
    func readingWritesNothing() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("authenticator.sqlite").path
        try made(path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            let single = try client(path, .single)
            #expect(single.getAllAccounts().map(\.accountName) == ["alice"])
            #expect(single.getMechanismForUUID(uuid: "m")?.secret == "JBSWY3DPEHPK3PXP")
            #expect(try single.integrityCheck() == ["ok"])
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "reading through one connection changed the file")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal") && !FileManager.default.fileExists(atPath: path + "-shm"))
        // What .single saves: a pool's open writes (GRDB's WAL transaction), copied back at close.
        do {
            let pool = try client(path, .pool)
            #expect(pool.getAllAccounts().count == 1)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) != before, "a pool no longer writes at open: .single saves nothing")
    }

    @Test("one connection beside a pool on the same file: each sees the other's writes at once")
    func besideAPool() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("authenticator.sqlite").path
        try made(path)
        let pool = try client(path, .pool)
        let single = try client(path, .single)
        single.setAccount(account: Account(issuer: "Other", accountName: "bob"))
        #expect(Set(pool.getAllAccounts().map(\.accountName)) == ["alice", "bob"])
        #expect(pool.removeAccount(account: try #require(pool.getAllAccounts().first { $0.accountName == "bob" })))
        #expect(single.getAllAccounts().map(\.accountName) == ["alice"])
    }

    @Test("a file that is not Coffer's yet is opened as a pool opens it: a new one made, another program's refused")
    func notCoffersYet() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fresh = directory.appending("fresh.sqlite").path
        let made = try client(fresh, .single)
        made.setAccount(account: Account(issuer: "Example", accountName: "alice"))
        #expect(try client(fresh, .single).getAllAccounts().count == 1)
        let foreign = directory.appending("foreign.sqlite")
        try Data("not a database, but text of the same length as a header of sixteen bytes or more".utf8).write(to: foreign)
        #expect(throws: StorageError.self) { try client(foreign.path, .single) }
    }
}

import CofferPostgres
import CofferPostgresAuthenticator
import Foundation
import TestSupport
import Testing

/// `COFFER_DATABASE_URL` read as libpq reads its URLs, with what Coffer adds: unknown
/// parameters refused, TLS required over TCP unless the URL says otherwise, no password shown.
@Suite("PostgreSQL connection URLs")
struct PostgresConnectionURLTests {
    @Test("a Unix socket, given as host= or as a host that starts with /; the database defaults to the user")
    func sockets() throws {
        let query = try PostgresConnectionURL("postgresql://coffer@/vault?host=/run/postgresql")
        #expect(query.socketPath == "/run/postgresql/.s.PGSQL.5432" && query.database == "vault" && query.user == "coffer")
        #expect(query.sslMode == .disable)
        let encoded = try PostgresConnectionURL("postgres://coffer@%2Ftmp%2Fpg:5433")
        #expect(encoded.socketPath == "/tmp/pg/.s.PGSQL.5433" && encoded.database == "coffer")
        #expect(try PostgresConnectionURL("postgresql://coffer@").socketDirectory == "/var/run/postgresql", "libpq's default on Debian")
    }

    @Test("over TCP, TLS is required unless the URL says disable or prefer")
    func tls() throws {
        #expect(try PostgresConnectionURL("postgresql://coffer@db.example.com/vault").sslMode == .require)
        #expect(try PostgresConnectionURL("postgresql://coffer@db.example.com/vault?sslmode=prefer").sslMode == .prefer)
        #expect(try PostgresConnectionURL("postgresql://coffer@10.0.0.5:6432/vault?sslmode=disable&connect_timeout=3").connectTimeout == .seconds(3))
    }

    @Test("what Coffer cannot honour is refused, naming it; a password is never in a message or a description", arguments: [
        ("mysql://coffer@db/vault", "must look like"),
        ("postgresql://coffer:hunter2@db/vault?sslrootcert=/x", "does not know (parameter 1 of the query"),
        ("postgresql://coffer:hunter2@db/vault?sslmode=verify-full", "sslmode"),
        ("postgresql://coffer:hunter2@db:99999/vault", "port"),
        ("postgresql://coffer:hunter2@db/vault?connect_timeout=0", "connect_timeout"),
        ("postgresql://coffer:hunter2@db/vault?sslmode=require&sslmode=disable", "'sslmode' more than once"),
        ("postgresql://coffer:hunter2@db/vault#x", "'#' part"),
    ])
    func refused(url: String, names: String) {
        #expect { _ = try PostgresConnectionURL(url) } throws: { error in
            let message = "\(error)"
            return (error as? PostgresStorageError)?.code == .invalidConfiguration && message.contains(names) && !message.contains("hunter2")
        }
    }

    @Test("a password with an unencoded &, ?, / or @ is never quoted back, as a parameter or a database name", arguments: [
        "postgresql://alice@db.example/coffer?password=correct&SECRETPW&battery",
        "postgresql://alice@db.example/coffer?sslmode=require&password=Tr0ub4dor&SECRETPW",
        "postgresql://alice:12345?SECRETPW@db.example/coffer",
        "postgresql://alice:2024/SECRETPW@db.example/coffer",
    ])
    func unencodedPassword(url: String) {
        #expect { _ = try PostgresConnectionURL(url) } throws: { error in
            let message = "\(error)"
            return message.contains("percent-encode") && !message.contains("SECRETPW") && !message.contains("Tr0ub4dor")
        }
    }

    @Test("a percent-encoded password is read whole, and neither the URL nor a database, key store or client made from it shows it")
    func encodedPassword() throws {
        let url = try PostgresConnectionURL("postgresql://alice:p%26SECRET%2Fw%40rd@db.example:5433/coffer")
        #expect(url.password == "p&SECRET/w@rd" && url.host == "db.example" && url.port == 5433 && url.database == "coffer")
        let database = try CofferDatabase(configuration: .init(url: url, keyEncryptionKey: .random()))
        let client = PostgresStorageClient(database: database, owner: "user-1")
        let storage = PostgresStorage<String>(database: database, namespace: "sessions", key: "s-1")
        for value in [url as Any, database, database.keys, client, storage] {
            for text in renderings(of: value) {
                #expect(!text.contains("SECRET"), "\(text)")
            }
        }
    }

    @Test("description, debugDescription and dump leave the password out")
    func noPassword() throws {
        let url = try PostgresConnectionURL("postgresql://coffer:hunter2@db.example.com/vault?password=hunter2")
        #expect(url.password == "hunter2")
        for text in renderings(of: url) + [url.description, url.debugDescription] {
            #expect(!text.contains("hunter2"), "\(text)")
        }
    }
}

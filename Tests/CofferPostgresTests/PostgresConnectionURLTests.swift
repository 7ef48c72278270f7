import CofferPostgres
import Foundation
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
        ("postgresql://coffer:hunter2@db/vault?sslrootcert=/x", "'sslrootcert'"),
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

    @Test("description, debugDescription and dump leave the password out")
    func noPassword() throws {
        let url = try PostgresConnectionURL("postgresql://coffer:hunter2@db.example.com/vault?password=hunter2")
        #expect(url.password == "hunter2")
        var dumped = ""
        dump(url, to: &dumped)
        for text in [url.description, url.debugDescription, "\(url)", String(reflecting: url), dumped] {
            #expect(!text.contains("hunter2"), "\(text)")
        }
    }
}

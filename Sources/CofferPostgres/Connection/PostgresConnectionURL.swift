import Foundation
import CofferStorage
import PostgresNIO

/// A PostgreSQL connection string in libpq's URL form, as `COFFER_DATABASE_URL` takes it:
///
/// ```
/// postgresql://user@/db?host=/run/postgresql          (a Unix socket directory)
/// postgresql://user:password@db.example.com:5432/db?sslmode=require&connect_timeout=5
/// ```
///
/// Read: user, password, host (a name, or a socket directory given as `host=/path` or as a
/// host that starts with `/`), port (5432), database (the path; else the user), and the query
/// parameters `host`, `port`, `user`, `password`, `dbname`, `sslmode` (`disable`, `prefer` or
/// `require`; `disable` for sockets, `require` for TCP by default: nothing goes over a network
/// in the clear unless the URL says `sslmode=disable` or `prefer`) and `connect_timeout`
/// (seconds). Anything else is refused, naming it, rather than silently ignored.
public struct PostgresConnectionURL: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The database user to log in as.
    public var user: String
    /// The password, if the URL has one; ``description`` leaves it out, so it is never printed.
    public var password: String?
    /// A host name or address, for TCP; `nil` for a Unix socket.
    public var host: String?
    /// The port (5432 unless the URL says otherwise): over TCP, the port connected to; for a Unix
    /// socket, the number in the socket's name (`.s.PGSQL.5432`).
    public var port: Int
    /// The directory of the server's Unix socket, when connecting through one.
    public var socketDirectory: String?
    /// The database's name (the URL's path; the user's name when the path is empty).
    public var database: String
    /// How TLS is used over TCP (`sslmode`).
    public var sslMode: SSLMode
    /// How long connecting may take (`connect_timeout`, in seconds).
    public var connectTimeout: Duration
    /// The operating-system user the server runs as (`requirepeer`), for a Unix socket: a
    /// socket owned by anyone else is refused (``checkSocket()``). `nil`: the socket must
    /// belong to root, to you, or to `postgres`.
    public var requiredPeer: String?

    /// How TLS is used over TCP.
    public enum SSLMode: String, Sendable {
        /// Never TLS: for a Unix socket (the default there), or a network you trust.
        case disable
        /// TLS when the server offers it, else in the clear; libpq's default, but not Coffer's.
        case prefer
        /// TLS or no connection: the default over TCP.
        case require
    }

    /// Parses `text`.
    ///
    /// - Throws: ``PostgresStorageError`` (`.invalidConfiguration`) naming what is wrong; the
    ///   message never repeats a password.
    public init(_ text: String) throws(PostgresStorageError) {
        func invalid(_ reason: String) -> PostgresStorageError { .invalidConfiguration("the database URL \(reason)") }
        guard let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "postgresql" || scheme == "postgres" else {
            throw invalid("must look like postgresql://user@host/database or postgresql://user@/database?host=/run/postgresql")
        }
        guard components.fragment == nil else { throw invalid("has a '#' part, which means nothing to PostgreSQL") }
        // A part of the URL that is not where it belongs may be part of a password holding a
        // character it should have percent-encoded (`&`, `?`, `/`, `@`): never quoted.
        let encodeHint = "; if the password holds &, ?, #, / or @, percent-encode them (%26, %3F, %23, %2F, %40)"
        let known = ["host", "port", "user", "password", "dbname", "sslmode", "connect_timeout", "requirepeer"]
        var parameters: [String: String] = [:]
        for (index, item) in (components.queryItems ?? []).enumerated() {
            guard known.contains(item.name) else {
                throw invalid("has a parameter Coffer does not know (parameter \(index + 1) of the query; Coffer knows "
                    + "\(known.joined(separator: ", ")))\(encodeHint)")
            }
            // Given twice, which one counts is a guess (sslmode=require&sslmode=disable): refused.
            guard parameters[item.name] == nil else { throw invalid("gives '\(item.name)' more than once") }
            parameters[item.name] = item.value ?? ""
        }
        requiredPeer = parameters["requirepeer"]
        user = parameters["user"] ?? components.user ?? ProcessEnvironment.value("USER") ?? "postgres"
        password = parameters["password"] ?? components.password
        let hostText = parameters["host"] ?? components.host.flatMap { $0.isEmpty ? nil : $0.removingPercentEncoding }
        if let hostText, hostText.hasPrefix("/") {
            socketDirectory = hostText
            host = nil
        } else if let hostText {
            host = hostText
            socketDirectory = nil
        } else {
            // libpq's default: the socket in /var/run/postgresql (Debian's place for it).
            socketDirectory = "/var/run/postgresql"
            host = nil
        }
        let portText = parameters["port"] ?? components.port.map(String.init) ?? "5432"
        guard let port = Int(portText), (1...65_535).contains(port) else { throw invalid("has a port that is not a number from 1 to 65535") }
        self.port = port
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let rawPath = components.percentEncodedPath.drop { $0 == "/" }
        guard !rawPath.contains("@"), !rawPath.contains("/") else {
            throw invalid("has a database name with '@' or '/' in it\(encodeHint)")
        }
        database = parameters["dbname"] ?? (path.isEmpty ? user : path.removingPercentEncoding ?? path)
        let defaultMode: SSLMode = socketDirectory == nil ? .require : .disable
        guard let mode = parameters["sslmode"].map({ SSLMode(rawValue: $0) }) ?? defaultMode else {
            throw invalid("has an sslmode Coffer does not support (disable, prefer or require)")
        }
        sslMode = mode
        if let timeout = parameters["connect_timeout"] {
            guard let seconds = Int(timeout), seconds > 0 else { throw invalid("has a connect_timeout that is not a positive number of seconds") }
            connectTimeout = .seconds(seconds)
        } else {
            connectTimeout = .seconds(10)
        }
    }

    /// The path of the server's socket file, for a Unix socket connection.
    public var socketPath: String? {
        socketDirectory.map { "\($0)/.s.PGSQL.\(port)" }
    }

    /// Checks that the Unix socket, when there is one, belongs to the server's user (see
    /// ``requiredPeer``): in a directory others can write to (`/tmp`), another local user could
    /// otherwise put a server of theirs there first and receive the password and every write.
    /// A socket that is not there yet passes (there is nothing to check).
    public func checkSocket() throws(PostgresStorageError) {
        guard let socketPath else { return }
        var info = stat()
        guard lstat(socketPath, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw .invalidConfiguration("\(socketPath) is not a socket (a file or link is in its place); check host= in the database URL")
        }
        let allowed: Set<uid_t> = if let requiredPeer {
            Set([Self.uid(of: requiredPeer)].compactMap { $0 })
        } else {
            Set([0, geteuid(), Self.uid(of: "postgres")].compactMap { $0 })
        }
        guard allowed.contains(info.st_uid) else {
            let owner = getpwuid(info.st_uid).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "uid \(info.st_uid)"
            throw .invalidConfiguration("the socket \(socketPath) belongs to \(owner), not to the server's user "
                + "(\(requiredPeer ?? "root, postgres or you")): another user may be standing in for the server. "
                + "If \(owner) does run the server, say so with requirepeer=\(owner) in the database URL")
        }
    }

    private static func uid(of name: String) -> uid_t? {
        getpwnam(name).map { $0.pointee.pw_uid }
    }

    /// Where it connects, for messages: never the password.
    public var description: String {
        if let socketPath { return "\(user)@\(socketPath), database \(database)" }
        return "\(user)@\(host ?? "?"):\(port), database \(database)"
    }

    /// The same as ``description``: a password is never printed, not even by `debugPrint`.
    public var debugDescription: String { description }

    /// Only ``description``: `dump` and reflection never see the password.
    public var customMirror: Mirror { Mirror(self, children: ["description": description], displayStyle: .struct) }

    /// postgres-nio's client configuration. Package-only: it holds the password in the clear, and
    /// postgres-nio's type prints it.
    package func clientConfiguration() throws(PostgresStorageError) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketPath {
            configuration = .init(unixSocketPath: socketPath, username: user, password: password, database: database)
        } else {
            let tls: PostgresClient.Configuration.TLS
            switch sslMode {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(.makeClientConfiguration())
            case .require: tls = .require(.makeClientConfiguration())
            }
            configuration = .init(host: host ?? "localhost", port: port, username: user, password: password, database: database, tls: tls)
        }
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }

    /// The configuration of one connection outside the pool (the check at migration). Package-only
    /// for the same reason as ``clientConfiguration()``.
    package func connectionConfiguration() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let socketPath {
            configuration = .init(unixSocketPath: socketPath, username: user, password: password, database: database)
        } else {
            let tls: PostgresConnection.Configuration.TLS = switch sslMode {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            configuration = .init(host: host ?? "localhost", port: port, username: user, password: password, database: database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(connectTimeout.components.seconds)
        return configuration
    }
}

import CofferStorage
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// One PostgreSQL database that Coffer's server-side stores share: a postgres-nio
/// `PostgresClient` pool, the key ring kept in the database (``DatabaseKeyStore``) and the
/// channel on which instances tell each other what changed.
///
/// It is a swift-service-lifecycle `Service`: nothing connects until ``run()`` runs, in a
/// task of its own or a `ServiceGroup`, and cancelling it or a graceful shutdown closes the
/// pool. Initialising starts no task.
///
/// Named `CofferDatabase`, not `PostgresDatabase`: postgres-nio exports a protocol of that
/// name, and a server that imports both modules must not have to qualify either.
///
/// ```swift
/// let database = CofferDatabase(configuration: .init(
///     url: try PostgresConnectionURL("postgresql://coffer@/coffer?host=/run/postgresql"),
///     keyEncryptionKey: try KeyEncryptionKey.load(fromFile: "/etc/coffer/kek")))
/// let group = ServiceGroup(services: [database], logger: logger)
/// ```
///
/// Every operation has a deadline (``Configuration/Options/operationTimeout``, 10 s): a server
/// that is down or does not answer gives ``PostgresStorageError`` (`.unavailable`) then, never
/// a hang; after it is back, the next operation works.
public final class CofferDatabase: Service, CustomReflectable, Sendable {
    /// What the database needs: where it is, and the key-encryption key.
    public struct Configuration: Sendable {
        /// Where the server is, and how to reach it.
        public var url: PostgresConnectionURL
        /// The key that wraps the data keys in `coffer_keys`; every instance of a service holds the
        /// same one.
        public var keyEncryptionKey: KeyEncryptionKey
        /// Deadlines, caching and pool size.
        public var options: Options

        /// Tuning, each with its default.
        public struct Options: Sendable {
            /// How long one operation (leasing a connection included) may take before it fails
            /// with `.unavailable`. Default ``defaultOperationTimeout``.
            public var operationTimeout: Duration = Options.defaultOperationTimeout
            /// The whole number of seconds (1 to 3600) in the environment variable
            /// `COFFER_DATABASE_TIMEOUT`, else 10 seconds: what an operation gets when the code
            /// names no timeout, so an operator can give a loaded server longer without a rebuild.
            /// A value that is not such a number is ignored.
            public static let defaultOperationTimeout: Duration = EnvironmentTimeout.named("COFFER_DATABASE_TIMEOUT")
            /// How long ``CofferDatabase/migrate()`` may take once connected: it may wait for
            /// another instance's migration (under the advisory lock) and runs DDL, which a busy
            /// server does slowly. Default 2 minutes. Connecting is still under
            /// ``operationTimeout``, so a server that is not there fails as fast as any operation.
            public var migrationTimeout: Duration = .seconds(120)
            /// How long the primary key id is trusted without a notification. Default 1 s.
            public var keyCacheLifetime: Duration = .seconds(1)
            /// Whether to listen for other instances' changes (key rotations, writes to cached
            /// values). Default true.
            public var listensForChanges = true
            /// The most connections the pool opens. Default 20.
            public var maximumConnections = 20

            /// The defaults.
            public init() {}
        }

        /// A configuration; `options` default to ``Options/init()``.
        public init(url: PostgresConnectionURL, keyEncryptionKey: KeyEncryptionKey, options: Options = Options()) {
            self.url = url
            self.keyEncryptionKey = keyEncryptionKey
            self.options = options
        }
    }

    /// The channel of `NOTIFY`s between instances.
    static let changeChannel = "coffer_changes"

    /// What the database was made with.
    public let configuration: Configuration
    /// The connection pool. Its configuration holds the database password in the clear, and
    /// `dump(client)` prints it (postgres-nio's type): don't log or dump it. A `CofferDatabase`
    /// itself dumps only where it connects.
    public let client: PostgresClient
    /// The key ring shared by every instance, under the configuration's key-encryption key.
    public let keys: DatabaseKeyStore

    /// The key ring of `owner` alone, wrapped under `keyEncryptionKey`, which only that owner
    /// (or the instance acting for them) holds: `PostgresStorageClient(database:owner:keyEncryptionKey:)`
    /// seals with it. Someone with the owner's name and a database login but another
    /// key-encryption key opens nothing sealed under it (`.wrongKeyEncryptionKey`).
    public func keyStore(owner: String, keyEncryptionKey: KeyEncryptionKey) -> DatabaseKeyStore {
        DatabaseKeyStore(client: client, kek: keyEncryptionKey, ringOwner: owner, lifetime: configuration.options.keyCacheLifetime,
                         deadline: deadline, changes: changes, logger: logger)
    }
    package let logger: Logger
    let changes: ChangeHub
    /// The deadline of every operation on this database.
    let deadline: OperationDeadline

    /// Where it connects (``PostgresConnectionURL/description``, without the password) and the
    /// key-encryption key's fingerprint: `dump(_:)` and the debugger never reach the pool's
    /// configuration, which holds the password.
    public var customMirror: Mirror {
        Mirror(self, children: ["url": configuration.url.description,
                                "keyEncryptionKey": configuration.keyEncryptionKey.fingerprint], displayStyle: .class)
    }

    /// A database; nothing connects until ``run()``.
    public init(configuration: Configuration, logger: Logger = Logger(label: "org.coffer.postgres")) throws {
        try configuration.url.checkSocket()
        var clientConfiguration = try configuration.url.clientConfiguration()
        clientConfiguration.options.maximumConnections = configuration.options.maximumConnections
        self.configuration = configuration
        self.logger = logger
        client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        deadline = OperationDeadline(duration: configuration.options.operationTimeout, logger: logger)
        changes = ChangeHub(kek: configuration.keyEncryptionKey)
        keys = DatabaseKeyStore(client: client, kek: configuration.keyEncryptionKey, ringOwner: "", lifetime: configuration.options.keyCacheLifetime,
                                deadline: deadline, changes: changes, logger: logger)
    }

    /// Runs the pool, and the listener for other instances' changes, until cancelled or shut
    /// down gracefully.
    public func run() async throws {
        await withTaskExecutorPreference(OffPoolExecutor.shared) { await runPool() }
    }

    private func runPool() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            if configuration.options.listensForChanges {
                group.addTask { await cancelWhenGracefulShutdown { await self.listenForChanges() } }
            }
        }
    }

    /// Brings the schema to this version of Coffer's (every instance may call it at start:
    /// under an advisory lock, the first migrates and the others find nothing to do). Refuses
    /// a database a newer Coffer migrated (`.schemaTooNew`). Returns the versions applied.
    ///
    /// It first connects once outside the pool: a server that refuses the URL's password, role
    /// or database throws `.invalidConfiguration` at once, with the SQLSTATE, instead of the
    /// pool retrying until the operation deadline.
    @discardableResult
    public func migrate() async throws -> [Int] {
        try await deadline.run("connect to the database") { try await self.checkServerAccepts() }
        let migration = OperationDeadline(duration: configuration.options.migrationTimeout, logger: logger)
        return try await migration.run("migrate the schema") {
            // Up to date (every start but the first after an upgrade): a read, no lock.
            if try await PostgresSchema.version(self.client, logger: self.logger) == PostgresSchema.latest { return [] }
            return try await PostgresSchema.migrate(self.client, logger: self.logger)
        }
    }

    /// Connects once, outside the pool, so that a server refusing this user, password or database
    /// says so at once: the pool retries such a connection quietly until the deadline passes,
    /// which would report it as a server that does not answer. A server that cannot be reached is
    /// left to the deadline (it may be starting).
    ///
    /// - Throws: ``PostgresStorageError`` `.invalidConfiguration`, with the server's SQLSTATE,
    ///   naming what to check; never the password.
    private func checkServerAccepts() async throws {
        let url = configuration.url
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: try url.connectionConfiguration(), id: 0, logger: logger)
        } catch let error as PSQLError where error.code == .server {
            let state = error.serverInfo?[.sqlState] ?? "?"
            let what = switch state {
            case "28P01": "the server refused the password of user '\(url.user)'"
            case "28000": "the server does not let user '\(url.user)' connect (no such role, or no pg_hba.conf entry for it)"
            case "3D000": "the server has no database '\(url.database)'"
            default: "the server refused the connection (SQLSTATE \(state))"
            }
            throw PostgresStorageError(.invalidConfiguration, "Connecting to \(url): \(what). Check the user, password and database in "
                + "the database URL (COFFER_DATABASE_URL for the tool), or the server's pg_hba.conf.", sqlState: state)
        } catch {
            return  // Not reached, or not answering: the operation's deadline says so.
        }
        try? await connection.close()
    }

    /// The schema version of the database, and the newest this Coffer knows.
    public func schemaVersion() async throws -> (database: Int, known: Int) {
        (try await deadline.run("read the schema version") { try await PostgresSchema.version(self.client, logger: self.logger) }, PostgresSchema.latest)
    }

    // MARK: - Changes between instances

    /// Whether this instance is listening for other instances' changes right now. While it is
    /// not (before ``run()`` has connected, or while the listening connection is being made
    /// again), cached ``PostgresStorage`` values are read from the database on every `get`, and
    /// when listening starts again every memory copy is forgotten, since announcements may have
    /// been missed.
    public var isListeningForChanges: Bool { changes.isListening }

    /// Keeps a connection listening on ``changeChannel``; reconnects after a failure.
    private func listenForChanges() async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: Self.changeChannel) { notifications in
                        // Listening from here on; what was announced before is unknown (the key
                        // stores forget their primary ids when told `nil`).
                        await changes.listening(true)
                        for try await notification in notifications {
                            await changes.deliver(tag: notification.payload)
                        }
                    }
                }
            } catch {
                await changes.listening(false)
                if Task.isCancelled { return }
                logger.debug("the change listener lost its connection; reconnecting", metadata: ["error": "\(type(of: error))"])
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }
}

/// What one instance tells the others: what changed, sent as a tag only
/// (``KeyEncryptionKey/changeTag(_:)``), never the names. `LISTEN` needs no right on the
/// tables, so any role that can connect hears every notification: it learns that something
/// changed and when, but not which namespace, key, owner or alias.
enum ChangeNotice: Sendable, Equatable {
    /// The key ring `alias` of `owner` (`""`: the shared ring) changed (rotated, deleted).
    case keys(owner: String, alias: String)
    /// The value at (namespace, key) was saved or deleted.
    case value(namespace: String, key: String)

    /// The payload of the notification: the tag under `kek`.
    func tag(_ kek: KeyEncryptionKey) -> String {
        switch self {
        case let .keys(owner, alias): kek.changeTag(["keys", owner, alias])
        case let .value(namespace, key): kek.changeTag(["value", namespace, key])
        }
    }
}

/// Who wants to hear which changes: cached storages register by (namespace, key), key stores
/// for every tag (they compare it with their key rings'). When the listening connection
/// starts or stops, every listener is called (key stores with `nil`): what happened in between
/// is unknown.
final class ChangeHub: Sendable {
    typealias Listener = @Sendable (ChangeNotice) async -> Void
    typealias TagListener = @Sendable (String?) -> Void
    private let kek: KeyEncryptionKey
    private let listeners = Mutex<[UUID: (tag: String, notice: ChangeNotice, call: Listener)]>([:])
    private let tagListeners = Mutex<[UUID: TagListener]>([:])
    private let listeningNow = Mutex(false)

    /// A hub matching notifications tagged under `kek`, the database's key-encryption key.
    init(kek: KeyEncryptionKey) {
        self.kek = kek
    }

    var isListening: Bool { listeningNow.withLock { $0 } }

    /// Records whether notifications arrive, and calls every listener.
    func listening(_ now: Bool) async {
        listeningNow.withLock { $0 = now }
        for call in tagListeners.withLock({ Array($0.values) }) { call(nil) }
        let everyone = listeners.withLock { $0.values.map { ($0.notice, $0.call) } }
        for (notice, call) in everyone { await call(notice) }
    }

    /// Calls `listener` whenever `notice` arrives, until `unsubscribe` of the returned token.
    func subscribe(to notice: ChangeNotice, _ listener: @escaping Listener) -> UUID {
        let token = UUID()
        let tag = notice.tag(kek)
        listeners.withLock { $0[token] = (tag, notice, listener) }
        return token
    }

    /// Calls `listener` with the tag of every notification, and with `nil` when listening
    /// starts or stops.
    func subscribeToTags(_ listener: @escaping TagListener) -> UUID {
        let token = UUID()
        tagListeners.withLock { $0[token] = listener }
        return token
    }

    func unsubscribe(_ token: UUID) {
        listeners.withLock { $0[token] = nil }
        tagListeners.withLock { $0[token] = nil }
    }

    /// Delivers a notification's payload (a tag) to whoever it concerns.
    func deliver(tag: String) async {
        for call in tagListeners.withLock({ Array($0.values) }) { call(tag) }
        let calls = listeners.withLock { $0.values.filter { $0.tag == tag }.map { ($0.notice, $0.call) } }
        for (notice, call) in calls { await call(notice) }
    }
}

// coffer-stress: a helper the tests start as separate processes, to hammer one store from
// several processes or to use the keyring from a D-Bus session of its own.
//
//   coffer-stress write DIR NAME WRITER COUNT      saves COUNT self-checking values to a file store
//                                                 (`%p` in NAME: the pid; COFFER_STRESS_KEY_ALIAS: the key alias)
//   coffer-stress read  DIR NAME COUNT             reads COUNT times, checks every value
//   coffer-stress keychain-write ACCOUNT COUNT     saves COUNT values to a keyring item; prints errors
//   coffer-stress keychain-get ACCOUNT TIMEOUT_MS  one keyring read; prints "ok", "nil" or the error
//   coffer-stress keychain-lock                    locks the default collection
//   coffer-stress keyring-create-key ALIAS         creates ALIAS's key in the keyring (SecretServiceKeyStore)
//   coffer-stress secured-probe [seal]             prints "available keyring|tpm" or "nil" for SecuredKeyEncryptor()
//                                                  (with seal: and whether a value seals and opens)
//   coffer-stress strongbox DIR                    saves with strongBoxPreferred; prints the key store used
//   coffer-stress sqlite-add DB KEYS WRITER COUNT  adds COUNT accounts (a TOTP mechanism each) to a SQLite store
//   coffer-stress keychain-client-probe            tries KeychainStorageClient().setAccount; prints the outcome
//   coffer-stress keychain-client-add PREFIX ISSUER NAME UUID TYPE  stores a mechanism (and its account) through
//                                                         KeychainStorageClient(servicePrefix: PREFIX)
//   coffer-stress keychain-client-list PREFIX       lists PREFIX's accounts; prints "accounts N unreadable M"
//   coffer-stress keychain-client-list-paused PREFIX FILE  the same, but its first listing stops after asking for
//                                                         the provider: it makes FILE.paused and waits for FILE.go
//   coffer-stress keychain-client-churn PREFIX COUNT  adds COUNT accounts (named after this process), listing after
//                                                         each; fails when a listing misses one added
//   coffer-stress crash-writer file|encrypted|sqlite DIR   saves increasing values until killed
//   coffer-stress postgres-add URL KEK OWNER WRITER COUNT  adds COUNT accounts (a TOTP mechanism each) for OWNER
//   coffer-stress postgres-hotp URL KEK OWNER UUID COUNT   claims COUNT HOTP counters; prints each
//   coffer-stress oath-hotp-keychain SERVICE ID COUNT  COUNT HOTP codes of credential ID through OathClient on
//                                                         OathKeychainStorage(service:); prints each code's counter
//   coffer-stress oath-keychain-store SERVICE COUNT  stores COUNT credentials (ids named after this process) in
//                                                         OathKeychainStorage(service:), then prints how many it lists
//   coffer-stress oath-keychain-read SERVICE KILL_AT  lists OathKeychainStorage(service:)'s credentials, killing itself
//                                                         (SIGKILL) just before its KILL_AT-th keyring write (0: never); prints how many
//   coffer-stress oath-hotp-sqlite DB KEYS ID COUNT   the same on SQLiteOathStorage(path: DB) sealed with keys in KEYS
//   coffer-stress oath-hotp-postgres URL KEK OWNER ID COUNT  the same on PostgresOathStorage(owner: OWNER)
//   coffer-stress platform-default DIR ACCOUNT      saves and reads a value through PlatformDefaultStorage (file
//                                                         "tokens" in DIR, or the keyring account); prints where, then "ok"
//   coffer-stress cookie-receive DIR COUNT         keeps COUNT cookies (named after this process) one answer at a
//                                                         time through a CookieModule on DIR/cookies; prints each name
//   coffer-stress push-keychain-store PREFIX CREDENTIAL COUNT  stores COUNT notifications of CREDENTIAL (ids named after
//                                                         this process) in PushKeychainStorage under PREFIX's services
//   coffer-stress push-keychain-read PREFIX KILL_AT  lists PREFIX's notifications, killing itself (SIGKILL) just before
//                                                         its KILL_AT-th keyring write (0: never); prints how many
//   coffer-stress push-keychain-move PREFIX ID CREDENTIAL KILL_AT  stores notification ID (already stored under another
//                                                         credential) under CREDENTIAL, killing itself before its KILL_AT-th keyring write
//   coffer-stress postgres-save URL KEK WRITER COUNT       saves COUNT values; prints "ack N" once each is
//                                                         acknowledged, retrying (while the server is down) until it is
//
// Exit status 0 when every operation succeeded; otherwise problems go to stderr and the status
// is 1.
import CofferAuthenticator
import CofferOath
import CofferOrchestrate
import CofferPostgres
import CofferPostgresAuthenticator
import CofferPush
import CofferStorage
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A value whose body can be checked against its header: `w<writer>r<round>:` then the
/// writer's digit repeated a round-dependent number of times.
enum StressValue {
    static func make(writer: Int, round: Int) -> String {
        "w\(writer)r\(round):" + String(repeating: String(writer % 10), count: 8_000 + round % 97)
    }

    static func isWhole(_ value: String) -> Bool {
        guard value != "initial" else { return true }
        guard let colon = value.firstIndex(of: ":"), value.hasPrefix("w") else { return false }
        let header = value[value.index(after: value.startIndex)..<colon].split(separator: "r")
        guard header.count == 2, let writer = Int(header[0]), let round = Int(header[1]) else { return false }
        return value == make(writer: writer, round: round)
    }
}

func fail(_ problems: [String]) -> Never {
    FileHandle.standardError.write(Data((problems.prefix(5) + ["\(problems.count) problems"]).joined(separator: "\n").utf8) + Data("\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = "usage: coffer-stress write|read|keychain-write|keychain-get|keychain-lock|secured-probe|strongbox ..."
guard let mode = arguments.first else { fail([usage]) }
let keychainService = "org.coffer.tests.stress"

switch mode {
case "platform-default":
    guard arguments.count == 3 else { fail([usage]) }
    let directory = URL(fileURLWithPath: arguments[1])
    do {
        print(try PlatformDefaultStorage.choice(account: arguments[2], fileName: "tokens", directory: directory).rawValue)
    } catch {
        fail(["choice: \(error)"])
    }
    let storage: StorageDelegate<String> = PlatformDefaultStorage.make(account: arguments[2], fileName: "tokens", directory: directory)
    do {
        try await storage.save(item: "value-\(arguments[2])")
        guard try await storage.get() == "value-\(arguments[2])" else { fail(["read back a different value"]) }
        print("ok")
    } catch {
        fail(["platform default: \(error)"])
    }

case "cookie-receive":
    guard arguments.count == 3, let count = Int(arguments[2]) else { fail([usage]) }
    let names = (0..<count).map { "p\(getpid())c\($0)" }
    let config = CookieConfig()
    config.persist = names
    config.cookieStorage = EncryptedFileStorage<[Cookie]>(fileName: "cookies", directory: URL(fileURLWithPath: arguments[1]))
    let module = CookieModule(config: config)
    for name in names {
        let answer = HTTPURLResponse(url: URL(string: "https://am.example.com/")!, statusCode: 200, httpVersion: "HTTP/1.1",
                                     headerFields: ["Set-Cookie": "\(name)=v; Path=/"])!
        do {
            try await module.receive(answer)
            print(name)
        } catch {
            fail(["\(name): \(error)"])
        }
    }
case "write", "read":
    guard arguments.count >= 4, let count = Int(arguments.last!) else { fail([usage]) }
    // `%p` in the file name stands for this process's id (siblings sharing one key alias, which
    // COFFER_STRESS_KEY_ALIAS names; the file name by default).
    let storage = EncryptedFileStorage<String>(fileName: arguments[2].replacingOccurrences(of: "%p", with: String(getpid())),
                                               keyAlias: ProcessInfo.processInfo.environment["COFFER_STRESS_KEY_ALIAS"],
                                               directory: URL(fileURLWithPath: arguments[1]))
    var problems: [String] = []
    for round in 0..<count {
        do {
            if mode == "write" {
                try await storage.save(item: StressValue.make(writer: Int(arguments[3]) ?? 0, round: round))
            } else {
                guard let value = try await storage.get() else { problems.append("read \(round): value missing"); continue }
                if !StressValue.isWhole(value) { problems.append("read \(round): torn value (\(value.utf8.count) bytes)") }
            }
        } catch {
            problems.append("\(mode) \(round): \(error)")
        }
    }
    if !problems.isEmpty { fail(problems) }

case "keychain-write":
    guard arguments.count == 3, let count = Int(arguments[2]) else { fail([usage]) }
    let storage = KeychainStorage<String>(account: arguments[1], service: keychainService, cacheStrategy: .noCache, timeout: .seconds(3))
    var problems: [String] = []
    for round in 0..<count {
        do { try await storage.save(item: "round \(round)") } catch { problems.append("save \(round): \(error)") }
    }
    if !problems.isEmpty { fail(problems) }

case "keychain-get":
    guard arguments.count == 3, let milliseconds = Int(arguments[2]) else { fail([usage]) }
    let storage = KeychainStorage<String>(
        account: arguments[1], service: keychainService, cacheStrategy: .noCache, timeout: .milliseconds(milliseconds))
    do {
        print(try await storage.get() == nil ? "nil" : "ok")
    } catch {
        print("error: \(error)")
        exit(1)
    }

case "keychain-lock":
    do { try await SecretService().lockDefaultCollection() } catch { fail(["lock: \(error)"]) }

case "keyring-create-key":
    guard arguments.count == 2 else { fail([usage]) }
    do { try await SecretServiceKeyStore().createKey(for: arguments[1]) } catch { fail(["create key: \(error)"]) }

case "secured-probe":
    let secured = SecuredKeyEncryptor()
    print(secured.map { "available \($0.backing)" } ?? "nil")
    if arguments.count == 2, let secured {
        // secured-probe seal: seals and opens a value, printing the outcome.
        do {
            let opened = try await secured.decrypt(data: try await secured.encrypt(data: Data("probe".utf8)))
            print("roundtrip \(String(decoding: opened, as: UTF8.self))")
        } catch {
            print("roundtrip failed: \(error)")
        }
    }
    if let problem = SecretService(timeout: .seconds(3)).usabilityProblem() { print("reason: \(problem)") }

case "strongbox":
    guard arguments.count == 2 else { fail([usage]) }
    let directory = URL(fileURLWithPath: arguments[1])
    let storage = EncryptedFileStorage<String>(fileName: "strongbox", directory: directory, strongBoxPreferred: true)
    do {
        try await storage.save(item: "value")
        guard try await storage.get() == "value" else { fail(["read back a different value"]) }
        let keyFile = directory.appendingPathComponent("keys/strongbox.key").path
        print(storage.encryptor.keyStore is SecretServiceKeyStore ? "keyring" : "file")
        print(FileManager.default.fileExists(atPath: keyFile) ? "key file present" : "no key file")
    } catch {
        fail(["strongbox: \(error)"])
    }

case "keychain-client-add":
    guard arguments.count == 6, let type = MechanismType(rawValue: arguments[5]) else { fail(["usage: keychain-client-add PREFIX ISSUER NAME UUID TYPE"]) }
    let client = try KeychainStorageClient.make(servicePrefix: arguments[1])
    let mechanism = Mechanism(mechanismUUID: arguments[4], issuer: arguments[2], accountName: arguments[3], type: type, secret: "JBSWY3DPEHPK3PXP")
    guard client.setMechanism(mechanism: mechanism) else { fail(["setMechanism: \(client.lastError.map { "\($0)" } ?? "?")"]) }

case "keychain-client-list":
    guard arguments.count == 2 else { fail(["usage: keychain-client-list PREFIX"]) }
    let client = try KeychainStorageClient.make(servicePrefix: arguments[1])
    let accounts = client.getAllAccounts()
    print("accounts \(accounts.count) unreadable \(client.unreadableRecordCount)")

case "keychain-client-list-paused":
    guard arguments.count == 3 else { fail(["usage: keychain-client-list-paused PREFIX FILE"]) }
    let client = try KeychainStorageClient.make(servicePrefix: arguments[1])
    let file = arguments[2]
    KeychainListingFaults.afterProviderCheck.withLock {
        $0 = {
            KeychainListingFaults.afterProviderCheck.withLock { $0 = nil }  // once
            _ = FileManager.default.createFile(atPath: file + ".paused", contents: nil)
            while !FileManager.default.fileExists(atPath: file + ".go") { usleep(10_000) }
            // A restarted daemon: the first call fails on the old connection and reconnects, so
            // the listing goes on with the new daemon (what the review's gdb session saw).
            for _ in 0..<2 { _ = try? SyncBridge.run { try await SecretService().count(["service": "org.coffer.tests.none"]) } }
        }
    }
    let accounts = client.getAllAccounts()
    print("accounts \(accounts.count) unreadable \(client.unreadableRecordCount)")

case "keychain-client-churn":
    guard arguments.count == 3, let count = Int(arguments[2]) else { fail(["usage: keychain-client-churn PREFIX COUNT"]) }
    let client = try KeychainStorageClient.make(servicePrefix: arguments[1])
    let me = ProcessInfo.processInfo.processIdentifier
    var problems: [String] = []
    for round in 0..<count {
        let mechanism = Mechanism(mechanismUUID: "\(me)-\(round)", issuer: "P\(me)", accountName: "a\(round)", type: .totp, secret: "JBSWY3DPEHPK3PXP")
        if !client.setMechanism(mechanism: mechanism) { problems.append("setMechanism: \(client.lastError.map { "\($0)" } ?? "?")") }
        let mine = client.getAllAccounts().filter { $0.issuer == "P\(me)" }.count
        if mine != round + 1 { problems.append("listed \(mine) of my \(round + 1) accounts") }
    }
    if client.unreadableRecordCount > 0 { problems.append("unreadable: \(client.unreadableRecords)") }
    if !problems.isEmpty { fail(problems) }

case "keychain-client-probe":
    let client = KeychainStorageClient()
    print("setAccount=\(client.setAccount(account: Account(issuer: "I", accountName: "a")))")
    // The keyring's lock is taken first (a write holds it), so its error can come before the
    // encryptor's.
    if case .failedToEncrypt(let cause)? = client.lastError as? EncryptorError, case .unavailable? = cause as? KeychainError {
        print("lastError=unavailable")
    } else if case .unavailable? = client.lastError as? KeychainError {
        print("lastError=unavailable")
    } else {
        print("lastError=\(client.lastError.map { "\($0)" } ?? "nil")")
    }

case "crash-writer":
    guard arguments.count == 3 else { fail([usage]) }
    let directory = URL(fileURLWithPath: arguments[2])
    switch arguments[1] {
    case "file", "encrypted":
        let storage: StorageDelegate<String> = arguments[1] == "file"
            ? FileStorage<String>(fileName: "crash", directory: directory)
            : EncryptedFileStorage<String>(fileName: "crash", directory: directory)
        var round = 0
        while true {
            do { try await storage.save(item: StressValue.make(writer: 1, round: round)) } catch { fail(["save \(round): \(error)"]) }
            round += 1
        }
    default:
        do {
            let client = try SQLiteStorageClient(
                path: directory.appendingPathComponent("crash.sqlite").path,
                encryptor: AESGCMEncryptor(keyAlias: "crash", keyStore: FileKeyStore(directory: directory.appendingPathComponent("keys"))))
            var round: UInt64 = 0
            while true {
                let mechanism = Mechanism(mechanismUUID: "crash", issuer: "Crash", accountName: "test", type: .hotp,
                                          secret: "JBSWY3DPEHPK3PXP", counter: round)
                if !client.setMechanism(mechanism: mechanism) { fail(["set \(round): \(client.lastError.map { "\($0)" } ?? "?")"]) }
                round += 1
            }
        } catch {
            fail(["open: \(error)"])
        }
    }

case "sqlite-add":
    guard arguments.count == 5, let count = Int(arguments[4]) else { fail([usage]) }
    do {
        let client = try SQLiteStorageClient(
            path: arguments[1],
            encryptor: AESGCMEncryptor(keyAlias: "authenticator", keyStore: FileKeyStore(directory: URL(fileURLWithPath: arguments[2]))))
        var problems: [String] = []
        for index in 0..<count {
            let mechanism = Mechanism(mechanismUUID: "w\(arguments[3])-\(index)", issuer: "Writer \(arguments[3])",
                                      accountName: "user \(index)", type: .totp, secret: "JBSWY3DPEHPK3PXP")
            if !client.setMechanism(mechanism: mechanism) { problems.append("add \(index): \(client.lastError.map { "\($0)" } ?? "?")") }
        }
        if !problems.isEmpty { fail(problems) }
    } catch {
        fail(["open: \(error)"])
    }

case "push-keychain-store", "push-keychain-read":
    guard arguments.count == 4 || arguments.count == 3 else { fail([usage]) }
    let prefix = arguments[1]
    let storage = PushKeychainStorage(credentialService: prefix + ".credentials", notificationService: prefix + ".notifications",
                                      tokenService: prefix + ".tokens", timeout: .seconds(60))
    do {
        if mode == "push-keychain-store", let count = Int(arguments[3]) {
            for index in 0..<count {
                try await storage.storePushNotification(PushNotification(
                    id: "p\(getpid())-\(index)", credentialId: arguments[2], ttl: 120, messageId: "m\(getpid())-\(index)",
                    challenge: "Y2hhbGxlbmdl", pushType: .challenge))
            }
        } else if let killAt = Int(arguments[2]) {
            let writes = Mutex(0)
            let listed = try await KeyringFaults.$beforeWrite.withValue({ _, _ in
                if writes.withLock({ $0 += 1; return $0 }) == killAt { kill(getpid(), SIGKILL) }
            }) { try await storage.getAllPushNotifications() }
            print(listed.count)
        } else {
            fail([usage])
        }
    } catch {
        fail(["\(mode): \(error)"])
    }

case "push-keychain-move":
    guard arguments.count == 5, let killAt = Int(arguments[4]) else { fail([usage]) }
    let prefix = arguments[1]
    let storage = PushKeychainStorage(credentialService: prefix + ".credentials", notificationService: prefix + ".notifications",
                                      tokenService: prefix + ".tokens", timeout: .seconds(60))
    let writes = Mutex(0)
    do {
        try await KeyringFaults.$beforeWrite.withValue({ _, _ in
            if writes.withLock({ $0 += 1; return $0 }) == killAt { kill(getpid(), SIGKILL) }
        }) {
            try await storage.storePushNotification(PushNotification(
                id: arguments[2], credentialId: arguments[3], ttl: 120, messageId: "m-" + arguments[2], challenge: "Y2hhbGxlbmdl", pushType: .challenge))
        }
    } catch {
        fail(["push-keychain-move: \(error)"])
    }

case "oath-hotp-keychain":
    guard arguments.count == 4, let count = Int(arguments[3]) else { fail([usage]) }
    do {
        let client = try await OathClient.createClient { $0.storage = OathKeychainStorage(service: arguments[1], timeout: .seconds(60)) }
        for _ in 0..<count { print(try await client.generateCodeWithValidity(arguments[2]).counter) }
    } catch {
        fail(["oath-hotp-keychain: \(error)"])
    }

case "oath-keychain-store":
    guard arguments.count == 3, let count = Int(arguments[2]) else { fail([usage]) }
    do {
        let storage = OathKeychainStorage(service: arguments[1], timeout: .seconds(60))
        for index in 0..<count {
            try await storage.storeOathCredential(OathCredential(
                id: "p\(getpid())-\(index)", issuer: "Stress", accountName: "p\(getpid())-\(index)", oathType: .totp, secretKey: "JBSWY3DPEHPK3PXP"))
        }
        print(try await storage.getAllOathCredentials().count)
    } catch {
        fail(["oath-keychain-store: \(error)"])
    }

case "oath-keychain-read":
    guard arguments.count == 3, let killAt = Int(arguments[2]) else { fail([usage]) }
    do {
        let storage = OathKeychainStorage(service: arguments[1], timeout: .seconds(60))
        let writes = Mutex(0)
        let listed = try await KeyringFaults.$beforeWrite.withValue({ _, _ in
            if writes.withLock({ $0 += 1; return $0 }) == killAt { kill(getpid(), SIGKILL) }
        }) { try await storage.getAllOathCredentials() }
        print(listed.count)
    } catch {
        fail(["oath-keychain-read: \(error)"])
    }

case "oath-hotp-sqlite":
    guard arguments.count == 5, let count = Int(arguments[4]) else { fail([usage]) }
    do {
        let storage = try SQLiteOathStorage(
            path: arguments[1], encryptor: AESGCMEncryptor(keyAlias: "oath", keyStore: FileKeyStore(directory: URL(fileURLWithPath: arguments[2]))))
        let client = try await OathClient.createClient { $0.storage = storage }
        for _ in 0..<count {
            print(try await client.generateCodeWithValidity(arguments[3]).counter)
            fflush(nil)  // each code as it is issued: a test kills this process halfway
        }
    } catch {
        fail(["oath-hotp-sqlite: \(error)"])
    }

case "postgres-add", "postgres-hotp", "postgres-save", "oath-hotp-postgres":
    guard arguments.count >= 5, let count = Int(arguments.last!) else { fail([usage]) }
    do {
        var options = CofferDatabase.Configuration.Options()
        options.listensForChanges = false
        options.operationTimeout = .seconds(30)  // generous: several of these run at once beside the suite
        let database = try CofferDatabase(configuration: .init(
            url: try PostgresConnectionURL(arguments[1]), keyEncryptionKey: try KeyEncryptionKey.load(fromFile: arguments[2]), options: options))
        let running = Task { try await database.run() }
        defer { running.cancel() }
        // The tests kill the server at moments of their choosing, start-up included: a writer
        // that starts while it is down waits for it, as a service would.
        let started = ContinuousClock.now
        while true {
            do {
                try await database.migrate()
                break
            } catch where ContinuousClock.now - started < .seconds(120) {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        switch mode {
        case "postgres-add":
            let client = PostgresStorageClient(database: database, owner: arguments[3])
            var problems: [String] = []
            for index in 0..<count {
                do {
                    try await client.insert(Mechanism(mechanismUUID: "w\(arguments[4])-\(index)", issuer: "Writer \(arguments[4])",
                                                      accountName: "user \(index)", type: .totp, secret: "JBSWY3DPEHPK3PXP"))
                } catch {
                    problems.append("add \(index): \(error)")
                }
            }
            if !problems.isEmpty { fail(problems) }
        case "oath-hotp-postgres":
            let storage = PostgresOathStorage(database: database, owner: arguments[3])
            let client = try await OathClient.createClient { $0.storage = storage }
            for _ in 0..<count { print(try await client.generateCodeWithValidity(arguments[4]).counter) }
        case "postgres-hotp":
            let client = PostgresStorageClient(database: database, owner: arguments[3])
            for _ in 0..<count { print(try await client.advanceCounter(of: arguments[4]).counter) }
        default:
            // Each value is retried until acknowledged; "ack N" is printed (and flushed) only after
            // the server said the write committed.
            let writer = Int(arguments[3]) ?? 0
            let deadline = ContinuousClock.now + .seconds(120)
            for index in 0..<count {
                let storage = PostgresStorage<String>(database: database, namespace: "w\(writer)", key: "k\(index)")
                while true {
                    do {
                        try await storage.save(item: StressValue.make(writer: writer, round: index))
                        print("ack \(index)")
                        fflush(nil)  // every stream: stdout is a C global Swift 6 will not touch from here
                        break
                    } catch {
                        guard ContinuousClock.now < deadline else { fail(["save \(index): still failing: \(error)"]) }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
            }
        }
    } catch {
        fail(["\(mode): \(error)"])
    }

default:
    fail([usage])
}

import ArgumentParser
import Foundation

/// Runs Coffer's benchmarks and prints one table: each figure beside the reference measured in
/// the same run, their ratio, and the target it should reach. `scripts/bench` builds the
/// helpers and runs this inside a throwaway keyring.
@main
struct CofferBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer-bench",
        abstract: "Measure Coffer against the floor and its peers.",
        discussion: """
            P1 keyring save+get vs a C loop of the same libsecret calls and vs Python keyring;
            P2 encrypted durable save vs write+fsync+rename+directory fsync; P3 encrypted get vs
            read + AES-GCM open; P4 cached get vs a mutex-guarded read; P5 SQLite and keychain
            authenticator stores at scale; P6 `coffer code` cold start vs oathtool; P7 PostgresStorage
            throughput (64 tasks) vs the same SQL through a bare PostgresClient; P8 the PostgreSQL backends
            at 1M values and 10k accounts / 30k mechanisms / 1M notifications; P9 SQLiteOathStorage at
            10k credentials vs a bare GRDB read + AES-GCM open (OathKeychainStorage at --keychain-credentials); P10 Ping's push storages at 1M notifications
            (SQLite, PostgreSQL with --postgres; the keychain one at --keychain-notifications); P11 a TPM-sealed
            key: `coffer code` unsealing it in a new process vs tpm2-tools' unseal of the same object and vs a key
            file, and a warm EncryptedFileStorage get with TPMKeyStore vs FileKeyStore (a software TPM of its own);
            P12 OidcClient.token() with a valid stored token vs the storage's own get(), cached and not;
            P13 `coffer token` (new process) vs Debian's `oidc-token` asking oidc-agent, same provider.
            """)

    @Option(help: ArgumentHelp("Where to put the stores (on the disk you want measured).", valueName: "dir"))
    var data: String

    @Option(help: "Which benchmarks to run, by id.")
    var only: [String] = ["P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P9", "P10", "P11", "P12", "P13"]

    @Flag(help: "Small sizes and few samples: checks that every benchmark runs, in about a minute.")
    var quick = false

    @Option(help: ArgumentHelp("The C libsecret loop (P1 floor).", valueName: "path"))
    var libsecretFloor: String?

    @Option(help: ArgumentHelp("A Python with `keyring` installed (P1 peer).", valueName: "path"))
    var python: String?

    @Option(help: ArgumentHelp("The Python keyring loop (P1 peer).", valueName: "path"))
    var pythonScript: String?

    @Option(help: ArgumentHelp("A release build of coffer (P6).", valueName: "path"))
    var coffer: String?

    @Option(help: ArgumentHelp(
        "Mechanism counts for the keychain client (P5). gnome-keyring rewrites its whole keyring file on every change, so loading grows with the square of the count: 1,000 takes about two minutes, 10,000 would take hours.",
        valueName: "n,n"))
    var keychainMechanisms: String = "300,1000"

    @Flag(help: "P5: only the keychain client's rows (skips loading the SQLite store at 10k accounts).")
    var p5KeychainOnly = false

    @Option(help: ArgumentHelp("A PostgreSQL server's maintenance database URL (P7, P8); the benchmark makes a database of its own there.",
                               valueName: "url"))
    var postgres: String?

    @Option(help: ArgumentHelp("How many notifications PushKeychainStorage holds for P10 (0: not measured; it needs a keyring).",
                               valueName: "n"))
    var keychainNotifications = 1_000

    @Option(help: ArgumentHelp("How many credentials OathKeychainStorage holds for P9 (0: not measured; it needs a keyring).",
                               valueName: "n"))
    var keychainCredentials = 1_000

    @Option(help: ArgumentHelp("Also write the rows as JSON lines here.", valueName: "path"))
    var json: String?

    func run() async throws {
        let directory = URL(fileURLWithPath: data)
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let report = Report()
        let wanted = Set(only.flatMap { $0.split(separator: ",").map { $0.uppercased() } })

        if wanted.contains("P1") {
            guard let libsecretFloor, let pythonScript else { throw ValidationError("P1 needs --libsecret-floor and --python-script") }
            try await KeyringBenchmark(libsecretFloor: libsecretFloor, python: python, pythonScript: pythonScript,
                                       operations: quick ? 20 : 200, rounds: quick ? 1 : 3).run(into: report)
        }
        if !wanted.isDisjoint(with: ["P2", "P3", "P4"]) {
            let plan = quick ? SamplePlan(warmup: 5, samples: 20, batch: 1) : SamplePlan(warmup: 50, samples: 400, batch: 1)
            let cached = quick ? SamplePlan(warmup: 100, samples: 50, batch: 100) : SamplePlan(warmup: 10_000, samples: 400, batch: 1_000)
            try await FileBenchmarks(directory: directory.appendingPathComponent("files"), plan: plan, cachedPlan: cached, wanted: wanted)
                .run(into: report)
        }
        if wanted.contains("P5") {
            let scale = ScaleBenchmark(directory: directory, accounts: quick ? 500 : 10_000,
                                       notificationsPerPush: quick ? 10 : 100, lookups: quick ? 50 : 500)
            if !p5KeychainOnly { try scale.runSQLite(into: report) }
            for mechanisms in keychainMechanisms.split(separator: ",").compactMap({ Int($0) }) {
                let size = quick ? max(mechanisms / 20, 30) : mechanisms
                try ScaleBenchmark(directory: directory, accounts: size / 3, notificationsPerPush: 3,
                                   lookups: quick ? 20 : 100).runKeychain(into: report)
            }
        }
        if wanted.contains("P6") {
            guard let coffer else { throw ValidationError("P6 needs --coffer") }
            guard let oathtool = Subprocess.find("oathtool") else { throw ValidationError("P6 needs oathtool on PATH") }
            try ColdStartBenchmark(coffer: coffer, oathtool: oathtool, directory: directory, accounts: 1_000,
                                   runs: quick ? 5 : 40).run(into: report)
        }

        if !wanted.isDisjoint(with: ["P7", "P8"]) {
            guard let postgres else { throw ValidationError("P7 and P8 need --postgres") }
            try await PostgresBenchmark(adminURL: postgres, quick: quick, wanted: wanted).run(into: report)
        }

        if !wanted.isDisjoint(with: ["P9", "P10"]) {
            let ping = PingStorageBenchmark(directory: directory, quick: quick, postgres: postgres,
                                            keychainNotifications: keychainNotifications > 0 ? (quick ? 30 : keychainNotifications) : nil,
                                            keychainCredentials: keychainCredentials > 0 ? (quick ? 30 : keychainCredentials) : nil)
            if wanted.contains("P9") { try await ping.runOath(into: report) }
            if wanted.contains("P10") { try await ping.runPush(into: report) }
        }

        if wanted.contains("P11") {
            guard let coffer else { throw ValidationError("P11 needs --coffer") }
            let plan = quick ? SamplePlan(warmup: 5, samples: 20, batch: 1) : SamplePlan(warmup: 50, samples: 400, batch: 1)
            try await TPMBenchmark(coffer: coffer, directory: directory, runs: quick ? 3 : 30, plan: plan).run(into: report)
        }

        if wanted.contains("P12") {
            let plan = quick ? SamplePlan(warmup: 5, samples: 20, batch: 1) : SamplePlan(warmup: 50, samples: 400, batch: 1)
            let cached = quick ? SamplePlan(warmup: 100, samples: 50, batch: 100) : SamplePlan(warmup: 10_000, samples: 400, batch: 1_000)
            try await OidcBenchmark(directory: directory.appendingPathComponent("oidc"), plan: plan, cachedPlan: cached).run(into: report)
        }

        if wanted.contains("P13") {
            guard let coffer else { throw ValidationError("P13 needs --coffer") }
            guard ProcessInfo.processInfo.environment["COFFER_TEST_OIDC_ISSUER"] != nil else {
                throw ValidationError("P13 needs the provider scripts/with-oidc-provider runs (scripts/bench starts it)")
            }
            try TokenToolBenchmark(coffer: coffer, directory: directory, runs: quick ? 3 : 40).run(into: report)
        }

        print(report.table())
        if let json { try report.json().write(toFile: json, atomically: true, encoding: .utf8) }
    }
}

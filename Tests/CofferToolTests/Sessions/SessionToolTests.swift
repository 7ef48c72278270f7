import Foundation
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import Testing

/// `coffer login`, `token`, `sessions` and `logout` as a person and their scripts use them,
/// against the real OpenID Provider scripts/test starts, the browser's part played by
/// scripts/oidc-provider/browser.py (as `$BROWSER`).
/// The provider's issuer, when scripts/test started one.
private let providerIssuer = ProcessInfo.processInfo.environment["COFFER_TEST_OIDC_ISSUER"]

@Suite("Signing in with coffer", .enabled(if: providerIssuer != nil, "needs the OpenID Provider that scripts/test starts"), .serialized, .timeLimit(.minutes(3)))
struct SessionToolTests {
    static let issuer = providerIssuer
    static let browser = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/oidc-provider/browser.py").path

    /// A data directory, and the environment a person with a browser has.
    static func person() -> (TemporaryDirectory, CofferProcess, [String: String]) {
        let home = TemporaryDirectory("sessions")
        let environment = ["BROWSER": browser, "COFFER_TEST_BROWSER_JAR": home.appending("cookies").path,
                           "COFFER_TEST_BROWSER_LOG": home.appending("browser.log").path]
        return (home, CofferProcess(dataDirectory: home.url), environment)
    }

    /// A file in the provider's state directory that makes it misbehave for coffer-slow
    /// (`delay`: seconds before each token answer; `calls`: a line per token request), written
    /// with `value`; the caller removes it.
    static func providerFault(_ kind: String, _ value: String) throws -> URL {
        let state = try #require(ProcessInfo.processInfo.environment["COFFER_TEST_OIDC_STATE"])
        let file = URL(fileURLWithPath: state).appendingPathComponent("\(kind)-coffer-slow")
        try value.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    static func login(_ coffer: CofferProcess, _ environment: [String: String], name: String = "work", client: String = "coffer-public") async throws {
        let result = try await coffer.run(["login", name, "--issuer", try #require(issuer), "--client-id", client, "--scope", "email"], environment: environment)
        try #require(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty && result.stderr.contains("signed in") && result.stderr.contains("alice@example.test"))
    }

    @Test("login through the browser, token for curl, sessions without a token, logout revokes; a gone session exits 2")
    func lifecycle() async throws {
        let (home, coffer, environment) = Self.person()
        defer { home.remove() }
        try await Self.login(coffer, environment)
        let token = try await coffer.run(["token", "work"])
        #expect(token.status == 0 && token.stdout.hasSuffix("\n") && token.stdout.count > 20 && token.stderr.isEmpty)
        let accessToken = token.stdout.trimmingCharacters(in: .newlines)
        let json = try await coffer.run(["token", "work", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["access_token"] as? String == accessToken && object["token_type"] as? String == "Bearer" && object["expires_at"] is Int)
        let listed = try await coffer.run(["sessions"])
        #expect(listed.status == 0 && listed.stdout.hasPrefix("work\t") && !listed.stdout.contains(accessToken))
        let listedJSON = try await coffer.run(["sessions", "--json"])
        #expect(listedJSON.stdout.contains("\"canRefresh\" : true") && !listedJSON.stdout.contains(accessToken))
        // Nothing on disk shows a token.
        for file in try FileManager.default.contentsOfDirectory(atPath: home.appending("sessions").path) {
            let data = (try? Data(contentsOf: home.appending("sessions/" + file))) ?? Data()
            #expect(!String(decoding: data, as: UTF8.self).contains(accessToken), "\(file)")
            if !file.hasPrefix("."), file != "keys" { #expect(try permissions(of: home.appending("sessions/" + file)) == 0o600) }
        }
        let out = try await coffer.run(["logout", "work"])
        #expect(out.status == 0, "\(out.stderr)")
        let gone = try await coffer.run(["token", "work"])
        #expect(gone.status == 2 && gone.stderr.contains("no session 'work'"))
        // The provider no longer takes the token.
        var request = URLRequest(url: URL(string: try #require(Self.issuer) + "/userinfo/")!)
        request.setValue("Bearer " + accessToken, forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession(configuration: .ephemeral).data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
    }

    @Test("8 processes ask for a token at expiry at once: one refresh, all 8 print its token, the session lives on")
    func eightProcesses() async throws {
        let (home, coffer, environment) = Self.person()
        defer { home.remove() }
        try await Self.login(coffer, environment, client: "coffer-slow")
        let before = try await coffer.run(["token", "work"]).stdout
        // Access tokens live 600 s here. Six seconds on, a token wanted valid 595 s more is
        // expiring; the refreshed one (600 s) is not. The provider takes 2 s to refresh, so
        // refreshers that did not wait for each other would overlap.
        try await Task.sleep(for: .seconds(6))
        let delay = try Self.providerFault("delay", "2")
        defer { try? FileManager.default.removeItem(at: delay) }
        let calls = try Self.providerFault("calls", "")
        defer { try? FileManager.default.removeItem(at: calls) }
        let results = try await withThrowingTaskGroup(of: CofferProcess.Result.self) { group in
            for _ in 0..<8 { group.addTask { try await coffer.run(["token", "work", "--min-valid", "595"]) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        let printed = Set(results.map(\.stdout))
        #expect(printed.count == 1 && printed.first != before, "one refresh, one new token: \(printed.count) different tokens")
        #expect(try String(contentsOf: calls, encoding: .utf8) == "refresh_token\n", "the provider saw one refresh")
        // A second refresh still works: no spent refresh token was presented (the provider would
        // have revoked the whole chain).
        let again = try await coffer.run(["token", "work", "--min-valid", "700"])
        #expect(again.status == 0 && again.stdout != printed.first, "\(again.stderr)")
    }

    @Test("logout while a refresh is in flight: the refresh finishes first, its tokens are the ones revoked, nothing is left on disk")
    func logoutDuringRefresh() async throws {
        let (home, coffer, environment) = Self.person()
        defer { home.remove() }
        try await Self.login(coffer, environment, client: "coffer-slow")
        let delay = try Self.providerFault("delay", "2")
        defer { try? FileManager.default.removeItem(at: delay) }
        let refresh = Task { try await coffer.run(["token", "work", "--min-valid", "86400"]) }
        try await Task.sleep(for: .milliseconds(700))
        let out = try await coffer.run(["logout", "work"])
        let refreshed = try await refresh.value
        #expect(out.status == 0, "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.appending("sessions/work.token").path))
        #expect(try await coffer.run(["token", "work"]).status == 2)
        if refreshed.status == 0 {
            var request = URLRequest(url: URL(string: try #require(Self.issuer) + "/userinfo/")!)
            request.setValue("Bearer " + refreshed.stdout.trimmingCharacters(in: .newlines), forHTTPHeaderField: "Authorization")
            let (_, response) = try await URLSession(configuration: .ephemeral).data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 401, "the refreshed token was revoked")
        }
    }

    /// Starts `coffer token work --min-valid 86400` (a refresh) in the background; its pid.
    static func startRefresh(_ home: TemporaryDirectory, _ label: String) async throws -> (Task<CofferProcess.Result, any Error>, URL) {
        let pidFile = home.appending("\(label).pid")
        let executable = try CofferProcess.executable.path
        let task = Task {
            try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/sh"),
                ["-c", "\"$0\" token work --min-valid 86400 & echo $! > \"$1\"; wait $!", executable, pidFile.path],
                environment: ["COFFER_HOME": home.url.path])
        }
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: pidFile.path) { try await Task.sleep(for: .milliseconds(10)) }
        return (task, pidFile)
    }

    static func kill(_ pidFile: URL) throws {
        let pid = try #require(Int32(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(Glibc.kill(pid, SIGKILL) == 0)
    }

    @Test("killed while waiting for another's refresh: the refresh completes, and the next token is its token")
    func waiterKilled() async throws {
        let (home, coffer, environment) = Self.person()
        defer { home.remove() }
        try await Self.login(coffer, environment, client: "coffer-slow")
        let delay = try Self.providerFault("delay", "2")
        defer { try? FileManager.default.removeItem(at: delay) }
        let (holder, _) = try await Self.startRefresh(home, "holder")
        try await Task.sleep(for: .milliseconds(500))
        let (waiter, waiterPid) = try await Self.startRefresh(home, "waiter")
        try await Task.sleep(for: .milliseconds(300))
        try Self.kill(waiterPid)
        let refreshed = try await holder.value
        _ = try await waiter.value
        #expect(refreshed.status == 0, "\(refreshed.stderr)")
        let next = try await coffer.run(["token", "work"])
        #expect(next.status == 0 && next.stdout == refreshed.stdout, "\(next.stderr)")
    }

    @Test("killed mid-refresh after the provider got it: the session is kept whole, and the next token says to sign in again (never deletes)")
    func holderKilled() async throws {
        let (home, coffer, environment) = Self.person()
        defer { home.remove() }
        try await Self.login(coffer, environment, client: "coffer-slow")
        let before = try Data(contentsOf: home.appending("sessions/work.token"))
        let delay = try Self.providerFault("delay", "1")
        let (holder, holderPid) = try await Self.startRefresh(home, "holder")
        try await Task.sleep(for: .milliseconds(500))
        try Self.kill(holderPid)
        _ = try await holder.value
        // The provider finishes the refresh nobody reads, and has spent the stored token.
        try await Task.sleep(for: .seconds(1))
        try? FileManager.default.removeItem(at: delay)
        #expect(try Data(contentsOf: home.appending("sessions/work.token")) == before, "the stored session is as it was")
        let next = try await coffer.run(["token", "work", "--min-valid", "86400"])
        #expect(next.status == 1 && next.stderr.contains("coffer login work"), "\(next.stderr)")
        #expect(FileManager.default.fileExists(atPath: home.appending("sessions/work.token").path), "nothing deleted")
        #expect(try await coffer.run(["sessions"]).stdout.hasPrefix("work\t"))
        // Signing in again mends it.
        try await Self.login(coffer, environment, client: "coffer-slow")
        #expect(try await coffer.run(["token", "work"]).status == 0)
    }

    @Test("login refuses an issuer over plain http to another machine, or carrying a password (status 64)")
    func unsafeIssuer() async throws {
        let (home, coffer, environment) = Self.person()
        defer { home.remove() }
        for issuer in ["http://192.0.2.2/o", "https://alice:hunter2@id.example/o"] {
            let result = try await coffer.run(["login", "x", "--issuer", issuer, "--client-id", "c"], environment: environment)
            #expect(result.status == 64 && result.stderr.contains("https") && !result.stderr.contains("hunter2"), "\(issuer): \(result.stderr)")
        }
    }

    @Test("a session's token file swapped for another session's is refused (bound to its name), not used")
    func swapped() async throws {
        let (home, coffer, environment) = Self.person()
        defer { home.remove() }
        try await Self.login(coffer, environment, name: "work")
        try await Self.login(coffer, environment, name: "play")
        let sessions = home.appending("sessions")
        let played = try await coffer.run(["token", "play"]).stdout
        try FileManager.default.removeItem(at: sessions.appendingPathComponent("work.token"))
        try FileManager.default.copyItem(at: sessions.appendingPathComponent("play.token"), to: sessions.appendingPathComponent("work.token"))
        let result = try await coffer.run(["token", "work"])
        #expect(result.status == 1 && !result.stdout.contains(played.trimmingCharacters(in: .newlines)), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("work.token"), "\(result.stderr)")
        // doctor names the session that can no longer give a token, and the command that mends it.
        let doctor = try await coffer.run(["doctor"])
        #expect(doctor.stdout.contains("FAIL  session work: its files cannot be read") && doctor.stdout.contains("coffer login work"), "\(doctor.stdout)")
        #expect(!doctor.stdout.contains("session play"), "\(doctor.stdout)")
    }

    @Test("the device grant from the command line: the address and code on standard error, the session kept once approved")
    func device() async throws {
        let (home, coffer, environment) = Self.person()
        defer { home.remove() }
        let errors = home.appending("login.err")
        var variables = environment
        variables["BROWSER"] = nil
        variables["COFFER_HOME"] = home.url.path
        let executable = try CofferProcess.executable.path
        let login = Task {
            try await CofferProcess.run(executable: URL(fileURLWithPath: "/bin/sh"),
                ["-c", "exec \"$0\" login tv --issuer \"$1\" --client-id coffer-device --device 2> \"$2\"", executable, try #require(Self.issuer), errors.path],
                environment: variables)
        }
        var prompt = ""
        for _ in 0..<400 where !prompt.contains("enter the code") {
            try await Task.sleep(for: .milliseconds(25))
            prompt = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        }
        let words = prompt.split(whereSeparator: \.isWhitespace).map(String.init)
        let uri = try #require(words.firstIndex(of: "visit").map { words[$0 + 1] })
        let code = try #require(words.firstIndex(of: "code").map { words[$0 + 1] })
        let approved = try await CofferProcess.run(executable: URL(fileURLWithPath: Self.browser), ["--device", uri, code], environment: environment)
        #expect(approved.status == 0, "\(approved.stderr)")
        let result = try await login.value
        #expect(result.status == 0, "\(prompt)")
        #expect(try await coffer.run(["token", "tv"]).status == 0)
    }
}

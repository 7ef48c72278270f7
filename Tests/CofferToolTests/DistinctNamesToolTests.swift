import Foundation
import TestSupport
import Testing

/// Issue 33, points 3 and 4: names stay distinct, and a query finds the account meant.
@Suite("coffer keeps accounts' names distinct and finds the one meant")
struct DistinctNamesToolTests {
    static func run(_ script: String, scratch: TemporaryDirectory) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", """
                set -u
                for uri in 'otpauth://totp/GitHub:alice?secret=JBSWY3DPEHPK3PXP&issuer=GitHub' \\
                           'otpauth://totp/GitHub:bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub' \\
                           'otpauth://totp/Google:me?secret=MFRGGZDFMZTWQ2LK&issuer=Google' \\
                           'otpauth://totp/Google%20Cloud:me?secret=MZXW6YTBOI======&issuer=Google%20Cloud'; do
                  echo "$uri" | "$COFFER" add - > /dev/null 2>&1 || exit 10
                done

                """ + script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
    }

    static func part(_ out: String, _ name: String) -> String {
        out.components(separatedBy: "--- \(name)\n").dropFirst().first?.components(separatedBy: "--- ")[0] ?? ""
    }

    @Test("rename onto a name another account shows is refused, and so is adding an account under a renamed one's names")
    func renameAndAddRefuseListedAlike() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo '--- onto'; "$COFFER" rename 'GitHub: bob' --account alice 2>&1; echo "status=$?"
            echo '--- list'; "$COFFER" list | grep -c 'GitHub: alice'
            echo '--- away'; "$COFFER" rename 'GitHub: alice' --account work > /dev/null 2>&1; echo "status=$?"
            echo '--- add'; echo 'otpauth://totp/GitHub:work?secret=MFRGGZDFMZTWQ2LK&issuer=GitHub' | "$COFFER" add - 2>&1; echo "status=$?"
            echo '--- back'; "$COFFER" rename 'GitHub: work' --account alice > /dev/null 2>&1; echo "status=$?"
            """, scratch: scratch)
        let out = result.stdout
        #expect(Self.part(out, "onto").contains("another account is already listed as 'GitHub: alice'; choose another name, or rename that one first")
                && Self.part(out, "onto").contains("status=1"), "\(out)")
        #expect(Self.part(out, "list").hasPrefix("1\n"), "\(out)")
        #expect(Self.part(out, "away").hasPrefix("status=0"), "\(out)")
        #expect(Self.part(out, "add").contains("another account is already listed as 'GitHub: work'") && Self.part(out, "add").contains("status=1"),
                "\(out)")
        #expect(Self.part(out, "back").hasPrefix("status=0"), "renaming back to its own names is fine: \(out)")
    }

    @Test("two accounts listed alike (an older store) make a query ambiguous, never answered for one of them",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs sqlite3 to make the older store"))
    func listedAlikeIsAmbiguous() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            sqlite3 "$COFFER_HOME/authenticator.sqlite" "UPDATE account SET displayAccountName = 'alice' WHERE accountName = 'bob'"
            echo '--- code'; "$COFFER" code 'GitHub: alice' --raw 2>&1; echo "status=$?"
            echo '--- exact'; "$COFFER" code 'GitHub:bob' --raw > /dev/null 2>&1; echo "status=$?"
            """, scratch: scratch)
        let out = result.stdout
        #expect(Self.part(out, "code").contains("status=3") && Self.part(out, "code").contains("matches 2 accounts"), "\(out)")
        #expect(Self.part(out, "exact").hasPrefix("status=0"), "the name its issuer gave still finds one: \(out)")
    }

    @Test("a whole issuer or account name wins over names that merely contain the query")
    func exactWins() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo '--- google'; "$COFFER" code google --json 2>&1; echo "status=$?"
            echo '--- goo'; "$COFFER" code goo --raw 2>&1 >/dev/null; echo "status=$?"
            echo '--- bob'; "$COFFER" code BOB --json; echo "status=$?"
            """, scratch: scratch)
        let out = result.stdout
        #expect(Self.part(out, "google").contains(#""issuer" : "Google""#) && !Self.part(out, "google").contains("Google Cloud")
                && Self.part(out, "google").contains("status=0"), "\(out)")
        #expect(Self.part(out, "goo").contains("status=3"), "a part of two names is still ambiguous: \(out)")
        #expect(Self.part(out, "bob").contains(#""accountName" : "bob""#) && Self.part(out, "bob").contains("status=0"), "\(out)")
    }

    @Test("review: names that differ only in case are listed alike; add --replace and restore refuse a name another account is listed as")
    func caseReplaceAndRestore() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            echo '--- case'; "$COFFER" rename 'GitHub: bob' --issuer github --account ALICE 2>&1; echo "status=$?"
            echo '--- addcase'; echo 'otpauth://totp/GITHUB:Alice?secret=KRSXG5CTMVRXEZLU' | "$COFFER" add - 2>&1; echo "status=$?"
            echo '--- replace'; "$COFFER" rename 'GitHub: alice' --issuer Example > /dev/null
            echo 'otpauth://totp/Example:alice?secret=KRSXG5CTMVRXEZLU' | "$COFFER" add --replace - 2>&1; echo "status=$?"
            echo '--- restore'; "$COFFER" rm 'Google: me' -f > /dev/null; "$COFFER" rename 'GitHub: bob' --issuer Google --account me > /dev/null
            "$COFFER" restore google 2>&1; echo "status=$?"
            echo '--- count'; "$COFFER" list | grep -ci 'google: me'
            """, scratch: scratch)
        let out = result.stdout
        #expect(Self.part(out, "case").contains("already listed as 'GitHub: alice'") && Self.part(out, "case").contains("status=1"), "\(out)")
        #expect(Self.part(out, "addcase").contains("already listed as 'GitHub: alice'") && Self.part(out, "addcase").contains("status=1"), "\(out)")
        #expect(Self.part(out, "replace").contains("already listed as 'Example: alice'") && Self.part(out, "replace").contains("status=1"), "\(out)")
        #expect(Self.part(out, "restore").contains("already listed as 'Google: me'") && Self.part(out, "restore").contains("status=1"), "\(out)")
        #expect(Self.part(out, "count").hasPrefix("1"), "\(out)")
    }

    @Test("review: renames to one name from three processes at once: exactly one wins, under the store's names lock")
    func concurrentRenames() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            for round in 1 2 3; do
              "$COFFER" rename 'GitHub: alice' --issuer A$round --account a$round > /dev/null 2>&1 &
              "$COFFER" rename 'GitHub: bob' --issuer A$round --account a$round > /dev/null 2>&1 &
              "$COFFER" rename 'Google: me' --issuer A$round --account a$round > /dev/null 2>&1 &
              wait
              echo "round $round: $("$COFFER" list | grep -c "^A$round: a$round ")"
            done
            """, scratch: scratch)
        #expect(result.stdout == "round 1: 1\nround 2: 1\nround 3: 1\n", "\(result.stdout) \(result.stderr)")
    }
}

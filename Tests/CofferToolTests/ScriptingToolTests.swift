import Foundation
import TestSupport
import Testing

/// Issue 23, point 4: what scripts rely on: `code --json`'s fields, `--next`, `--at`, `verify`,
/// `list QUERY`, checked against oathtool where it computes the same thing.
@Suite("coffer for scripts: code --json, --next, --at, verify")
struct ScriptingToolTests {
    /// RFC 4226's test secret (HOTP counter 0…9: 755224 287082 359152 969429 338314 254676 …).
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    static func run(_ script: String, scratch: TemporaryDirectory) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", """
                set -u
                echo 'otpauth://totp/Deno:Ada?secret=\(secret)&issuer=Deno' | "$COFFER" add - > /dev/null || exit 10
                echo 'otpauth://hotp/Bank:bob?secret=\(secret)&issuer=Bank&counter=0' | "$COFFER" add - > /dev/null || exit 11

                """ + script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
    }

    @Test("code --json carries id, code, period, digits, validFrom/validUntil (ISO 8601) and the HOTP counter; --raw with --json is refused")
    func codeJSON() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            "$COFFER" code ada --json > "$SCRATCH/totp.json" || exit 12
            "$COFFER" code bank --json > "$SCRATCH/hotp.json" || exit 13
            "$COFFER" code bank --json > "$SCRATCH/hotp2.json" || exit 14
            "$COFFER" list ada --json > "$SCRATCH/list.json" || exit 15
            "$COFFER" code ada --raw --json 2>&1; echo "both=$?"
            """, scratch: scratch)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        func object(_ name: String) throws -> [String: Any] {
            let array = try JSONSerialization.jsonObject(with: Data(contentsOf: scratch.appending(name))) as? [[String: Any]]
            return array?.first ?? [:]
        }
        let totp = try object("totp.json")
        #expect(totp["issuer"] as? String == "Deno" && totp["accountName"] as? String == "Ada" && totp["type"] as? String == "totp")
        #expect(totp["period"] as? Int == 30 && totp["digits"] as? Int == 6 && (totp["code"] as? String)?.count == 6)
        let iso = Date.ISO8601FormatStyle()
        let from = try iso.parse(totp["validFrom"] as? String ?? ""), until = try iso.parse(totp["validUntil"] as? String ?? "")
        #expect(until.timeIntervalSince(from) == 30 && Int(from.timeIntervalSince1970) % 30 == 0, "\(totp)")
        #expect(totp["counter"] == nil)
        let listed = try object("list.json")
        let mechanisms = listed["mechanisms"] as? [[String: Any]]
        #expect(totp["id"] as? String == mechanisms?.first?["uuid"] as? String && (totp["id"] as? String)?.isEmpty == false,
                "the id is the mechanism's, as list --json shows it")
        let first = try object("hotp.json"), second = try object("hotp2.json")
        #expect(first["counter"] as? Int == 0 && first["code"] as? String == "755224", "\(first)")
        #expect(second["counter"] as? Int == 1 && second["code"] as? String == "287082", "\(second)")
        #expect(first["period"] == nil && first["validUntil"] == nil && first["digits"] as? Int == 6)
        #expect(result.stdout.contains("choose one of --raw and --json") && result.stdout.contains("both=64"), "\(result.stdout)")
    }

    @Test("code --next and --at give oathtool's codes for those times; HOTP codes are not issued for them")
    func nextAndAt() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            for at in @0 @59 @1111111109 @2000000000; do
              ours=$("$COFFER" code ada --at "$at" --raw) || exit 12
              theirs=$(oathtool --totp -b -N "$at" \(Self.secret))
              [ "$ours" = "$theirs" ] && echo "at $at same" || echo "at $at: $ours vs $theirs"
            done
            [ "$("$COFFER" code ada --at '2009-02-13 23:31:30' --raw)" = "$(oathtool --totp -b -N @1234567890 \(Self.secret))" ] && echo "utc same"
            # --next: the code of the step after now, as oathtool gives it for now + 30 s. Retried
            # when the step turned between the two commands.
            for try in 1 2 3; do
              start=$(date +%s)
              ours=$("$COFFER" code ada --next --raw)
              theirs=$(oathtool --totp -b -N "@$(( start / 30 * 30 + 30 ))" \(Self.secret))
              [ $(( $(date +%s) / 30 )) -eq $(( start / 30 )) ] && break
            done
            [ "$ours" = "$theirs" ] && echo "next same" || echo "next: $ours vs $theirs"
            "$COFFER" code bank --next 2>&1
            "$COFFER" list bank --json | grep '"counter"'
            "$COFFER" code --at yesterday 2>&1; echo "bad-time=$?"
            """, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        for at in ["@0", "@59", "@1111111109", "@2000000000"] { #expect(out.contains("at \(at) same"), "\(out)") }
        #expect(out.contains("utc same") && out.contains("next same"), "\(out)")
        #expect(out.contains("Bank: bob  (HOTP codes are not tied to a time)") && out.contains("\"counter\" : 0"), "nothing issued: \(out)")
        #expect(out.contains("bad-time=64"), "\(out)")
    }

    @Test("verify: TOTP within a window; HOTP ahead of the counter, which only --resync moves, and never back")
    func verify() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            now=$(date +%s)
            "$COFFER" verify "$(oathtool --totp -b -N "@$now" \(Self.secret))" ada --at "@$now"; echo "current=$?"
            "$COFFER" verify "$(oathtool --totp -b -N "@$(( now - 30 ))" \(Self.secret))" ada --at "@$now" 2>&1; echo "previous=$?"
            "$COFFER" verify "$(oathtool --totp -b -N "@$(( now - 30 ))" \(Self.secret))" ada --at "@$now" --window 1; echo "window=$?"
            "$COFFER" verify 359152 bank 2>&1; echo "hotp-ahead=$?"
            "$COFFER" verify 359152 bank --window 2; echo "hotp-window=$?"
            "$COFFER" list bank --json | grep '"counter"'
            "$COFFER" verify 359152 bank --window 2 --resync; echo "resync=$?"
            "$COFFER" list bank --json | grep '"counter"'
            "$COFFER" verify 287082 bank --window 5 --resync 2>&1; echo "behind=$?"
            "$COFFER" list bank --json | grep '"counter"'
            [ "$("$COFFER" code bank --raw)" = 969429 ] && echo "next-code-after-resync"
            "$COFFER" verify 123456 nothing 2>&1; echo "nomatch=$?"
            "$COFFER" verify 12 ada --window 5000 2>&1; echo "usage=$?"
            """, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        #expect(out.contains("Valid: the code of Deno: Ada at the time given.") && out.contains("current=0"), "\(out)")
        #expect(out.contains("previous=1") && out.contains("Valid: the code of Deno: Ada 1 step before the time given.") && out.contains("window=0"), "\(out)")
        #expect(out.contains("hotp-ahead=1") && out.contains("hotp-window=0") && out.contains("counter was not moved"), "\(out)")
        let counters = out.split(separator: "\n").filter { $0.contains("\"counter\"") }.map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(counters == ["\"counter\" : 0,", "\"counter\" : 3,", "\"counter\" : 3,"], "0 until --resync, then past 2, never back: \(counters)")
        #expect(out.contains("the counter now stands at 3") && out.contains("resync=0") && out.contains("behind=1"), "\(out)")
        #expect(out.contains("next-code-after-resync") && out.contains("nomatch=2") && out.contains("usage=64"), "\(out)")
    }
}

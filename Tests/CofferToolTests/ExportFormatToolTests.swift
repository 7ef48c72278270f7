import CofferAuthenticator
import Foundation
import TestSupport
import Testing

/// Issue 23, point 3: exports that open where they are taken.
@Suite("coffer export: Aegis as Aegis reads it, URIs, QR codes, Google Authenticator")
struct ExportFormatToolTests {
    static let uris = [
        "otpauth://totp/GitHub:alice?secret=JBSWY3DPEHPK3PXP&issuer=GitHub",
        "otpauth://totp/Slow:bob?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Slow&period=60&digits=8&algorithm=SHA256",
        "otpauth://hotp/Bank:carol?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank&counter=7",
        "otpauth://totp/Steam:dave?secret=JBSWY3DPEHPK3PXP&issuer=Steam&encoder=steam",
    ]

    static func run(_ script: String, scratch: TemporaryDirectory) async throws -> CofferProcess.Result {
        try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/bin/bash"), ["-c", """
                set -u
                printf '%s\\n' \(uris.map { "'\($0)'" }.joined(separator: " ")) | "$COFFER" add - > /dev/null || exit 10

                """ + script],
            environment: ["COFFER": try CofferProcess.executable.path, "SCRATCH": scratch.url.path,
                          "COFFER_HOME": scratch.appending("home").path],
            removing: ["DBUS_SESSION_BUS_ADDRESS", "COFFER_BACKEND"])
    }

    /// What Aegis's parser requires of an entry, type by type (its `VaultEntry.fromJson` and
    /// `OtpInfo.fromJson`: `getString`/`getInt`/`getLong` throw on a missing key): `type`,
    /// `name`, `issuer`, and in `info` `secret` (base32), `algo` (SHA1, SHA256, SHA512) and
    /// `digits` (1…10); `totp` and `steam` need `period`, `hotp` needs `counter`.
    static func problems(aegisEntry entry: [String: Any]) -> [String] {
        var problems: [String] = []
        let type = entry["type"] as? String ?? ""
        if !["totp", "hotp", "steam"].contains(type) { problems.append("type '\(type)'") }
        for key in ["name", "issuer"] where !(entry[key] is String) { problems.append("no \(key)") }
        guard let info = entry["info"] as? [String: Any] else { return problems + ["no info"] }
        if (try? Base32.decode(info["secret"] as? String ?? "")) == nil { problems.append("secret") }
        if !["SHA1", "SHA256", "SHA512"].contains(info["algo"] as? String ?? "") { problems.append("algo") }
        guard let digits = info["digits"] as? Int, (1...10).contains(digits) else { return problems + ["digits"] }
        if type == "steam", digits != 5 { problems.append("steam digits \(digits)") }
        if type == "totp" || type == "steam", !(info["period"] is Int) { problems.append("\(type) without period") }
        if type == "hotp", !(info["counter"] is Int) { problems.append("hotp without counter") }
        return problems
    }

    @Test("every Aegis entry type is written as Aegis's own parser reads it: TOTP, HOTP, Steam")
    func aegisTypes() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run(#""$COFFER" export "$SCRATCH/vault.json" 2> /dev/null || exit 12"#, scratch: scratch)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        let vault = try JSONSerialization.jsonObject(with: Data(contentsOf: scratch.appending("vault.json"))) as? [String: Any]
        let entries = (vault?["db"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        #expect(Set(entries.compactMap { $0["type"] as? String }) == ["totp", "hotp", "steam"], "\(entries)")
        for entry in entries {
            #expect(Self.problems(aegisEntry: entry).isEmpty, "\(entry["name"] ?? "?"): \(Self.problems(aegisEntry: entry))")
        }
        let steam = entries.first { $0["type"] as? String == "steam" }?["info"] as? [String: Any]
        #expect(steam?["period"] as? Int == 30 && steam?["algo"] as? String == "SHA1", "\(steam ?? [:])")
        let hotp = entries.first { $0["type"] as? String == "hotp" }?["info"] as? [String: Any]
        #expect(hotp?["counter"] as? Int == 7)
    }

    @Test("--format uris, qr and google: 0600 files and a new 0700 directory, warned as unencrypted; each imports back to the same codes")
    func roundTrips() async throws {
        let scratch = TemporaryDirectory()
        defer { scratch.remove() }
        let result = try await Self.run("""
            for n in $(seq 1 9); do
              echo "otpauth://totp/Many:user$n?secret=JBSWY3DPEHPK3PXP&issuer=Many" | "$COFFER" add - > /dev/null || exit 11
            done
            "$COFFER" code --raw github > /dev/null || exit 12
            # At one fixed time: a run that crosses a 30 s step between two reads still compares like with like.
            codes() { for q in 'GitHub: alice' 'Slow: bob' 'Steam: dave'; do "$COFFER" code "$q" --raw --at @1234567890; done; }
            before=$(codes)
            cd "$SCRATCH"
            echo '--- uris'; "$COFFER" export uris.txt --format uris 2>&1; echo "mode=$(stat -c %a uris.txt) lines=$(wc -l < uris.txt)"
            echo '--- qr'; "$COFFER" export qr --format qr 2>&1; echo "dir=$(stat -c %a qr) pngs=$(ls qr | wc -l) modes=$(stat -c %a qr/* | sort -u | tr '\n' ' ')"
            echo '--- google'; "$COFFER" export google --format google 2>&1; ls google
            echo '--- again'; "$COFFER" export qr --format qr 2>&1; echo "status=$?"
            echo '--- encrypt'; "$COFFER" export x.txt --format uris --encrypt 2>&1; echo "status=$?"
            echo '--- imports'
            for what in "uris.txt" "qr/*.png" "google/*.png"; do
              export COFFER_HOME="$SCRATCH/from-$(echo "$what" | cut -c1-4)"
              "$COFFER" import $what > /dev/null 2>&1 || echo "import $what failed"
              [ "$(codes 2>/dev/null)" = "$before" ] && echo "same codes from $what" || echo "codes differ from $what"
              echo "$what: $("$COFFER" list --json | grep -c '"uuid"') mechanisms, counter $("$COFFER" list bank --json 2>/dev/null | grep '"counter"' | tr -d ' ,')"
            done
            export COFFER_HOME="$SCRATCH/half"
            "$COFFER" import google/google-1-of-2.png | grep note
            """, scratch: scratch)
        let out = result.stdout
        #expect(result.status == 0, "\(out) \(result.stderr)")
        func part(_ name: String) -> String {
            out.components(separatedBy: "--- \(name)\n").dropFirst().first?.components(separatedBy: "--- ")[0] ?? "(missing)"
        }
        #expect(part("uris").contains("mode=600 lines=13") && part("uris").contains("warning: otpauth:// URIs are not encrypted"), "\(part("uris"))")
        #expect(part("qr").contains("dir=700 pngs=13 modes=600 ") && part("qr").contains("warning: QR codes are not encrypted"), "\(part("qr"))")
        let google = part("google")
        #expect(google.contains("google-1-of-2.png") && google.contains("google-2-of-2.png"), "11 accounts fit Google's format: 2 codes of ≤ 10: \(google)")
        #expect(google.contains("not exported: Slow: bob (totp): its period is 60 s") && google.contains("not exported: Steam: dave (steam)"), "\(google)")
        #expect(part("again").contains("qr already exists") && part("again").contains("status=1"), "\(part("again"))")
        #expect(part("encrypt").contains("only --format aegis can be encrypted") && part("encrypt").contains("status=64"), "\(part("encrypt"))")
        #expect(out.contains("same codes from uris.txt") && out.contains("same codes from qr/*.png"), "\(out)")
        #expect(out.contains("uris.txt: 13 mechanisms, counter \"counter\":7") && out.contains("qr/*.png: 13 mechanisms, counter \"counter\":7"), "\(out)")
        #expect(out.contains("google/*.png: 11 mechanisms, counter \"counter\":7"), "all of both codes, HOTP counter kept: \(out)")
        #expect(out.contains("this export is 2 QR codes and 1 of them (#2) are not in the file"), "one of two said: \(out)")
    }
}

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
}

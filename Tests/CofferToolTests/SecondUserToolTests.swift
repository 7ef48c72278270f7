import Foundation
import TestSupport
import Testing

/// Issue 31, point 5: the second-user attacks run the tool as that user, wherever the clone sits;
/// a build folder under a directory only we can enter (a home, `mktemp -d`) must not fail them.
@Suite("The second user's copy of the tool", .enabled(if: SecondUser.available, Comment(rawValue: SecondUser.skipReason ?? "")))
struct SecondUserToolTests {
    @Test("runs as the second user, from a root-owned 0755 directory no one else can write")
    func reachable() async throws {
        let tool = try SecondUser.tool()
        let result = try await SecondUser.run("'\(tool.path)' --version; echo \"status=$?\"")
        #expect(result.stdout.contains("status=0") && result.stdout.contains("0."), "\(result.stdout) \(result.stderr)")
        let directory = try FileManager.default.attributesOfItem(atPath: tool.deletingLastPathComponent().path)
        #expect((directory[.posixPermissions] as? NSNumber)?.intValue == 0o755)
        #expect((directory[.ownerAccountID] as? NSNumber)?.uint32Value == geteuid())
    }
}

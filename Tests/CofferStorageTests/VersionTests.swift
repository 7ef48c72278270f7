import CofferStorage
import Foundation
import Testing

/// `CofferVersion.current` is the one place the version is written; these tests fail when the
/// changelog or a dependency line users copy names another.
@Suite("The version")
struct VersionTests {
    private let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("is a semantic version")
    func semantic() {
        let parts = CofferVersion.current.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) && ($0 == "0" || !$0.hasPrefix("0")) })
    }

    @Test("is the newest release in CHANGELOG.md, which keeps an Unreleased section above it")
    func changelog() throws {
        let headings = try text("CHANGELOG.md").split(separator: "\n").filter { $0.hasPrefix("## [") }
        #expect(headings.first == "## [Unreleased]")
        let released = headings.dropFirst().first.map { $0.dropFirst(4).prefix { $0 != "]" } }
        #expect(released.map(String.init) == CofferVersion.current)
    }

    @Test("is the one the README's and the Getting started article's dependency lines name")
    func dependencyLines() throws {
        for path in ["README.md", "Sources/CofferStorage/CofferStorage.docc/Articles/GettingStarted.md"] {
            let lines = try text(path).split(separator: "\n").filter { $0.contains(".package(url:") && $0.contains("coffer") }
            #expect(!lines.isEmpty, "\(path) has no dependency line")
            for line in lines {
                #expect(line.contains("from: \"\(CofferVersion.current)\""), "\(path): \(line)")
            }
        }
    }
}

import Foundation
import Testing

/// Issue 31: what the repository promises about its own shape, checked: a README a newcomer
/// reads in five minutes, a DocC article for every public module, no process stopped by a name
/// pattern, and modules that pull only what they need.
@Suite("The repository's shape")
struct RepositoryLayoutTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The library products Package.swift declares.
    static func libraries() throws -> [String] {
        try text("Package.swift").components(separatedBy: ".library(name: \"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }

    @Test("the README: at most 300 lines; the Swift it needs, as Package.swift says; the real package and product lines")
    func readme() throws {
        let readme = try Self.text("README.md")
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 300)
        let tools = try Self.text("Package.swift").split(separator: "\n")[0]
        let version = tools.replacingOccurrences(of: "// swift-tools-version: ", with: "")
        #expect(readme.contains("Swift \(version) or later"), "swift-tools-version is \(version)")
        #expect(readme.contains(".product(name: \"CofferStorage\", package: \"coffer\")"))
        #expect(readme.contains("](docs/coffer.md)") && readme.contains("](docs/threat-model.md)"))
        for file in ["docs/coffer.md", "docs/threat-model.md", "ARCHITECTURE.md"] {
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(file).path), "\(file) is missing")
        }
    }

    @Test("every library product has a DocC catalog with at least one article, and the README's module table links it")
    func articles() throws {
        let readme = try Self.text("README.md")
        let libraries = try Self.libraries()
        #expect(libraries.count >= 8)
        for module in libraries {
            let catalog = "Sources/\(module)/\(module).docc"
            let articles = (try? FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("\(catalog)/Articles").path)) ?? []
            #expect(articles.contains { $0.hasSuffix(".md") }, "\(module) has no DocC article")
            #expect(readme.contains("](\(catalog)/\(module).md)"), "the README's module table does not link \(module)")
        }
    }

    @Test("no script stops a process by a name pattern (pkill, killall), which could hit another user's")
    func noKillByPattern() throws {
        let scripts = Self.root.appendingPathComponent("scripts")
        for name in try FileManager.default.contentsOfDirectory(atPath: scripts.path) {
            guard let body = try? String(contentsOf: scripts.appendingPathComponent(name), encoding: .utf8) else { continue }
            let code = body.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }.joined(separator: "\n")
            #expect(!code.contains("pkill") && !code.contains("killall"), "scripts/\(name) stops processes by pattern")
        }
    }

    /// The Coffer modules target `name` depends on, as Package.swift declares them.
    static func dependencies(of name: String) throws -> Set<String> {
        let manifest = try text("Package.swift")
        guard let start = manifest.range(of: "name: \"\(name)\",\n") else { return [] }  // a target (a product line goes on)
        let rest = manifest[start.upperBound...]
        guard let open = rest.range(of: "dependencies: ["), let close = rest.range(of: "]", range: open.upperBound..<rest.endIndex) else { return [] }
        return Set(rest[open.upperBound..<close.lowerBound].components(separatedBy: ",").compactMap { item in
            let trimmed = item.trimmingCharacters(in: .whitespacesAndNewlines)
            guard trimmed.hasPrefix("\"Coffer") else { return nil }
            return trimmed.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        })
    }

    @Test("modules pull only what they need: the Storage kit only CofferStorage; CofferStorage nothing of ours")
    func moduleDependencies() throws {
        #expect(try Self.dependencies(of: "CofferStorageTesting") == ["CofferStorage"])
        #expect(try Self.dependencies(of: "CofferStorage").isEmpty)
        #expect(try Self.dependencies(of: "CofferAuthenticatorTesting").isSuperset(of: ["CofferAuthenticator", "CofferOath", "CofferPush"]))
        #expect(!FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("Sources/CofferStorageTesting/FuzzHarness.swift").path),
                "the fuzz harness belongs to Fuzz/")
    }

    @Test("the engine has no product and no public surface; the transfer module knows neither generation")
    func engineAndTransfer() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        for module in ["CofferMFAEngine", "CofferMFATransfer"] {
            let folder = sources.appendingPathComponent(module)
            for path in FileManager.default.subpaths(atPath: folder.path) ?? [] where path.hasSuffix(".swift") {
                let lines = try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8).split(separator: "\n")
                if module == "CofferMFAEngine" {
                    #expect(!lines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("public ") }, "\(module)/\(path) declares public API")
                } else {
                    #expect(!lines.contains { $0.hasPrefix("import CofferAuthenticator") || $0.hasPrefix("import CofferOath") },
                            "\(module)/\(path) imports a generation")
                }
            }
        }
        #expect(try Self.dependencies(of: "CofferMFATransfer") == ["CofferStorage", "CofferMFAEngine"])
        #expect(!(try Self.libraries().contains("CofferMFAEngine")))
    }

    @Test("tests are named after what they attack, not a review round; only TestSupport reads the keyring switch")
    func testFiles() throws {
        let tests = Self.root.appendingPathComponent("Tests")
        for path in FileManager.default.subpaths(atPath: tests.path) ?? [] where path.hasSuffix(".swift") && !path.hasPrefix("Consumer") {
            let name = URL(fileURLWithPath: path).lastPathComponent
            #expect(name.range(of: "^R[0-9]+[A-Z]", options: .regularExpression) == nil, "Tests/\(path) is named after a review round")
            guard !path.hasPrefix("TestSupport/") else { continue }
            let body = try String(contentsOf: tests.appendingPathComponent(path), encoding: .utf8)
            #expect(!body.contains("environment[\"COFFER_TEST_KEYRING\"]"), "Tests/\(path) reads COFFER_TEST_KEYRING itself: use TestKeyring")
        }
    }
}

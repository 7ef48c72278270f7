@testable import CofferStorage
import Foundation
import TestSupport
import Testing

/// `SecretService.search` reads items' attributes, labels and secrets in a few batched calls
/// (not libsecret's proxy per item): what it returns must still be each item as stored, and a
/// search racing deletions must return whole items or search again, never an item without
/// its secret.
@Suite("SecretService.search on a real gnome-keyring", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct SecretServiceSearchTests {
    let keyring = SecretService(timeout: .seconds(60))

    @Test("200 items: each with its own attributes, label and secret; locked state false; a search by another attribute finds one")
    func batchedRead() async throws {
        let service = "org.coffer.tests.search.\(UUID().uuidString.prefix(8))"
        for index in 0..<200 {
            try await keyring.store(Data("secret-\(index)".utf8), attributes: ["service": service, "account": "a\(index)", "n": "\(index % 7)"],
                                    label: "label \(index)", contentType: "text/plain")
        }
        let items = try await keyring.search(["service": service])
        #expect(items.count == 200)
        for item in items {
            let index = item.attributes["account"]!.dropFirst()
            #expect(item.attributes == ["service": service, "account": "a\(index)", "n": "\(Int(index)! % 7)"])
            #expect(item.label == "label \(index)" && !item.isLocked)
            #expect(item.secret == Data("secret-\(index)".utf8))
        }
        #expect(try await keyring.search(["service": service, "account": "a42"]).map(\.label) == ["label 42"])
        #expect(try await keyring.search(["service": service], loadSecrets: false).allSatisfy { $0.secret == nil })
        #expect(try await keyring.clear(["service": service]) == 200)
    }

    @Test("searches while another task deletes and re-adds the items: every item found is whole, no search fails")
    func racingDeletes() async throws {
        let service = "org.coffer.tests.search.\(UUID().uuidString.prefix(8))"
        let keyring = keyring
        let attributes: @Sendable (Int) -> [String: String] = { index in ["service": service, "account": "a\(index)"] }
        for index in 0..<40 {
            try await keyring.store(Data("secret-\(index)".utf8), attributes: attributes(index), label: "l", contentType: "text/plain")
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for round in 0..<60 {
                    let index = round % 40
                    _ = try await keyring.clear(attributes(index))
                    try await keyring.store(Data("secret-\(index)".utf8), attributes: attributes(index), label: "l", contentType: "text/plain")
                }
            }
            group.addTask {
                for _ in 0..<30 {
                    for item in try await keyring.search(["service": service]) {
                        #expect(item.secret == Data("secret-\(item.attributes["account"]!.dropFirst())".utf8))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await keyring.clear(["service": service]) == 40)
    }
}

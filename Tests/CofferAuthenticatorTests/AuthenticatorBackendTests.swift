import CofferAuthenticator
import CofferStorage
import Foundation
import TestSupport
import Testing

/// Issue 31, point 1: choosing and opening a backend is library API, as the tool does it.
@Suite("AuthenticatorBackend: chosen and opened as the tool does")
struct AuthenticatorBackendTests {
    @Test("explicit, then COFFER_BACKEND, then the record, then sqlite; a bad name in either is an error that says what to do")
    func choice() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        #expect(try AuthenticatorBackend.chosen(explicit: nil, environment: [:], directory: directory.url) == .sqlite)
        try AuthenticatorBackend.record(.keychain, in: directory.url)
        #expect(try AuthenticatorBackend.chosen(explicit: nil, environment: [:], directory: directory.url) == .keychain)
        #expect(try AuthenticatorBackend.chosen(explicit: nil, environment: ["COFFER_BACKEND": "postgres"], directory: directory.url) == .postgres)
        #expect(try AuthenticatorBackend.chosen(explicit: .sqlite, environment: ["COFFER_BACKEND": "postgres"], directory: directory.url) == .sqlite)
        #expect { try AuthenticatorBackend.chosen(explicit: nil, environment: ["COFFER_BACKEND": "mongo"], directory: directory.url) } throws: { error in
            (error as? LocalizedError)?.errorDescription?.contains("sqlite, keychain or postgres") == true
        }
        try Data("mongo\n".utf8).write(to: directory.appending(AuthenticatorBackend.recordName))
        #expect(throws: AuthenticatorBackend.SelectionError.self) { try AuthenticatorBackend.chosen(explicit: nil, environment: [:], directory: directory.url) }
    }

    @Test("sqlite opens with its counter memory and trash; a removal through its client can be undone; postgres needs its opener")
    func open() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try PrivateFile.createDirectory(at: directory.appending("data").path)
        let data = directory.appending("data")
        try Data("file\n".utf8).write(to: data.appendingPathComponent(DefaultAuthenticatorStorage.keyStoreRecord))
        let store = try AuthenticatorBackend.sqlite.open(directory: data)
        #expect(store.ledger is SealedCounterLedgerFile && store.trash is SealedTrashDirectory)
        let client = store.makeClient()
        let entry = try client.addAccount(uri: "otpauth://totp/Mail:ann?secret=JBSWY3DPEHPK3PXP&issuer=Mail")
        let id = try #require(try client.removeAccount(entry.account))
        try client.restore(trashID: id)
        #expect(client.accounts().count == 1)
        #expect(throws: AuthenticatorBackend.SelectionError.self) { try AuthenticatorBackend.postgres.open(directory: data) }
    }
}

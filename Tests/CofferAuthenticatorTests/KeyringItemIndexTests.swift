@testable import CofferAuthenticator
import CofferStorage
import Foundation
import TestSupport
import Testing

/// `KeychainStorageClient`'s listings take item attributes from a sealed index by object path
/// (`KeyringItemIndex`). It may only make listings faster: every test here makes the index
/// wrong, stale or missing in one way and checks that the listing still says what the keyring
/// holds.
@Suite("KeychainStorageClient's item index", .enabled(if: TestKeyring.isRunning, TestKeyring.skipReason))
struct KeyringItemIndexTests {
    let prefix = "org.coffer.tests.index.\(UUID().uuidString.prefix(8))"
    let keyring = SecretService(timeout: .seconds(60))

    func client() throws -> KeychainStorageClient {
        KeychainStorageClient(encryptor: try SecuredKeyEncryptor.make(keyAlias: "org.coffer.tests.client"), servicePrefix: prefix,
                              timeout: .seconds(60))
    }

    /// Three accounts, the first two with a second (HOTP) mechanism.
    func stored(in client: KeychainStorageClient) {
        for n in 0..<3 {
            client.setMechanism(mechanism: Mechanism(mechanismUUID: "t\(n)", issuer: "Issuer", accountName: "user\(n)", type: .totp,
                                                     secret: "JBSWY3DPEHPK3PXP"))
            if n < 2 {
                client.setMechanism(mechanism: Mechanism(mechanismUUID: "h\(n)", issuer: "Issuer", accountName: "user\(n)", type: .hotp,
                                                         secret: "JBSWY3DPEHPK3PXP"))
            }
        }
    }

    /// Every account and mechanism item's attributes as the keyring has them, by path.
    func itemsNow() async throws -> [String: [String: String]] {
        var items: [String: [String: String]] = [:]
        for kind in ["account", "mechanism"] {
            for item in try await keyring.search(["service": "\(prefix).\(kind)"], loadSecrets: false) { items[item.path] = item.attributes }
        }
        return items
    }

    /// What the account and mechanism indexes say, together.
    func indexed(_ client: KeychainStorageClient) -> [String: [String: String]]? {
        guard let accounts = client.readIndex(of: "\(prefix).account").index, let mechanisms = client.readIndex(of: "\(prefix).mechanism").index else { return nil }
        return accounts.attributes.merging(mechanisms.attributes) { first, _ in first }
    }

    /// Stores `index` as the index of its service's items.
    func store(_ index: KeyringItemIndex, _ client: KeychainStorageClient) throws {
        try client.storeText(index.text, identity: KeyringItemIndex.identity(of: index.service),
                             attributes: ["service": "\(prefix).index", "kind": index.service], label: "test")
    }

    func removeEverything() async throws {
        for kind in ["account", "mechanism", "notification", "index"] { try await keyring.clear(["service": "\(prefix).\(kind)"]) }
    }

    @Test("the index's text keeps any path, name and value (tabs, newlines, backslashes, other scripts); other text is not an index")
    func text() {
        let index = KeyringItemIndex(service: "s.account\t2", provider: "bus :1.2", attributes: [
            "/a/1": ["service": "s.account\t2", "issuer": "Tab\there", "accountName": "new\nline \\ back\\slash\\"],
            "/a/2\t": ["service": "s.account\t2", "issuer": "", "accountName": "café 東京 \\t"],
            "/a/3": ["service": "s.account\t2"],
        ])
        #expect(KeyringItemIndex(text: index.text) == index)
        for text in ["", "{}", "coffer-keyring-index 1\ns\nbus", "coffer-keyring-index 2\ns\nbus\n", "coffer-keyring-index 1\ns\nbus\n/a\tkey\n"] {
            #expect(KeyringItemIndex(text: text) == nil, "\(text)")
        }
    }

    @Test("a listing remembers every item's attributes by path for this provider; the next lists the same")
    func remembers() async throws {
        let client = try client()
        stored(in: client)
        let first = client.getAllAccounts()
        #expect(first.map(\.accountName) == ["user0", "user1", "user2"])
        let index = try #require(client.readIndex(of: "\(prefix).account").index)
        #expect(try await index.provider == keyring.provider())
        #expect(try await indexed(client) == itemsNow())
        #expect(client.getAllAccounts() == first)
        #expect(client.getAllAccountNames().map(\.accountName) == ["user0", "user1", "user2"])
        #expect(client.unreadableRecordCount == 0)
        try await removeEverything()
    }

    @Test("items stored after the index (an older Coffer, another tool, a process killed before it listed) are listed and added to it")
    func learnsNewItems() async throws {
        let client = try client()
        stored(in: client)
        _ = client.getAllAccounts()
        // Another client of the same prefix: its stores do not touch the index.
        try self.client().setMechanism(mechanism: Mechanism(mechanismUUID: "late", issuer: "Late", accountName: "comer", type: .totp,
                                                            secret: "JBSWY3DPEHPK3PXP"))
        #expect(client.getAllAccounts().map(\.issuer).contains("Late"))
        #expect(try await indexed(client) == itemsNow())
        try await removeEverything()
    }

    @Test("an index entry naming the wrong attributes for a path: the item is judged by its own and listed right")
    func wrongEntry() async throws {
        let client = try client()
        stored(in: client)
        _ = client.getAllAccounts()
        var index = try #require(client.readIndex(of: "\(prefix).account").index)
        let accounts = index.attributes.keys.sorted()
        (index.attributes[accounts[0]], index.attributes[accounts[1]]) = (index.attributes[accounts[1]], index.attributes[accounts[0]])
        try store(index, client)
        #expect(client.getAllAccounts().map(\.accountName) == ["user0", "user1", "user2"])
        #expect(client.unreadableRecordCount == 0, "\(client.unreadableRecords)")
        try await removeEverything()
    }

    @Test("an index of another provider process is not used: a mechanism whose account is gone is still reported")
    func otherProvider() async throws {
        let client = try client()
        stored(in: client)
        _ = client.getAllAccounts()
        // user2's account item removed behind the client's back; the forged index, made by
        // "another provider", says user2's mechanism belongs to user0.
        let user2 = try #require(try await keyring.search(["service": "\(prefix).mechanism", "uuid": "t2"], loadSecrets: false).first)
        try await keyring.clear(["service": "\(prefix).account", "accountName": "user2"])
        var index = try #require(client.readIndex(of: "\(prefix).mechanism").index)
        index.provider = "0123456789abcdef0123456789abcdef :1.1"
        index.attributes[user2.path]?["accountName"] = "user0"
        try store(index, client)
        #expect(client.getAllAccounts().map(\.accountName) == ["user0", "user1"])
        #expect(client.unreadableRecordCount == 1, "the mechanism without an account must be reported: \(client.unreadableRecords)")
        #expect(try await client.readIndex(of: "\(prefix).mechanism").index?.provider == keyring.provider(), "the stale index is replaced")
        try await removeEverything()
    }

    @Test("an index that does not open (damaged, another key) is not used, and the next listing replaces it")
    func damaged() async throws {
        let client = try client()
        stored(in: client)
        for kind in ["account", "mechanism"] {
            try await keyring.store(Data("not sealed".utf8), attributes: ["service": "\(prefix).index", "kind": "\(prefix).\(kind)"],
                                    label: "junk", contentType: "application/octet-stream")
        }
        #expect(client.getAllAccounts().count == 3)
        #expect(client.unreadableRecordCount == 0)
        #expect(try await indexed(client) == itemsNow())
        try await removeEverything()
    }

    @Test("when every item it knew is gone, a listing removes the index too")
    func emptied() async throws {
        let client = try client()
        stored(in: client)
        _ = client.getAllAccounts()
        for kind in ["account", "mechanism"] { try await keyring.clear(["service": "\(prefix).\(kind)"]) }
        #expect(client.getAllAccounts().isEmpty)
        #expect(try await keyring.search(["service": "\(prefix).index"], loadSecrets: false).isEmpty)
    }

    /// The start of a script for ``TestKeyring/runInOwnSession(_:keyring:deadline:)``: the
    /// shell functions `restartDaemon` and `paths UUID` (the object path of the mechanism item of
    /// `prefix` with that id).
    static func restartScript(_ p: String) -> String {
        TestKeyring.restartDaemon + """

            paths() {
              gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \\
                --method org.freedesktop.Secret.Service.SearchItems "{'service': '\(p).mechanism', 'uuid': '$1'}" \\
                | grep -o '/org/freedesktop/secrets/collection/[a-z_0-9]*/[0-9]*'
            }

            """
    }

    /// The script's `old PATH` and `new PATH` lines name one path: the restarted keyring gave a
    /// deleted item's path to a new one, the case the test is about.
    static func expectReusedPath(_ lines: [String], _ result: CofferProcess.Result) {
        let old = lines.first { $0.hasPrefix("old ") }?.dropFirst(4), new = lines.first { $0.hasPrefix("new ") }?.dropFirst(4)
        #expect(old != nil && old == new, "the restarted keyring did not give the old path to the new item: \(lines) \(result.stderr)")
    }

    @Test("the provider restarts between a listing's provider question and its searches (the review held it there with gdb): the listing starts again")
    func restartDuringListing() async throws {
        let p = "org.coffer.tests.index.race"
        let result = try await TestKeyring.runInOwnSession(Self.restartScript(p) + """
            "$STRESS" keychain-client-add \(p) Issuer alice a0 totp || exit 10
            "$STRESS" keychain-client-list \(p) > /dev/null
            "$STRESS" keychain-client-add \(p) Issuer carol c0 totp || exit 11
            "$STRESS" keychain-client-list \(p) > /dev/null
            echo "old $(paths c0)"
            secret-tool clear service \(p).mechanism uuid c0
            "$STRESS" keychain-client-list-paused \(p) "$SCRATCH/pause" > "$SCRATCH/listed" &
            lister=$!
            for _ in $(seq 1 600); do [ -e "$SCRATCH/pause.paused" ] && break; sleep 0.05; done
            restartDaemon
            # A mechanism of an account that has no item, at carol's old path.
            printf junk | secret-tool store --label=orphan service \(p).mechanism uuid m2 issuer Gone accountName zed type totp
            echo "new $(paths m2)"
            touch "$SCRATCH/pause.go"
            wait $lister
            cat "$SCRATCH/listed"
            """, keyring: true)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        Self.expectReusedPath(lines, result)
        #expect(lines.last == "accounts 2 unreadable 1", "\(lines) \(result.stderr)")
    }

    /// Changes an item's attributes in place, as another program can (`Properties.Set`).
    func setAttributes(_ attributes: [String: String], of path: String) async throws {
        let dictionary = "{" + attributes.map { "'\($0.key)': '\($0.value)'" }.joined(separator: ", ") + "}"
        let result = try await CofferProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/gdbus"),
            ["call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", path, "--method",
             "org.freedesktop.DBus.Properties.Set", "org.freedesktop.Secret.Item", "Attributes", "<\(dictionary)>"])
        try #require(result.status == 0, "\(result.stderr)")
    }

    @Test("items whose attributes another program changed in place: the index does not see it; the client without it reports them and corrects the index")
    func changedInPlace() async throws {
        let client = try client()
        stored(in: client)
        _ = client.getAllAccounts()
        let t0 = try #require(try await keyring.search(["service": "\(prefix).mechanism", "uuid": "t0"], loadSecrets: false).first)
        let user1 = try #require(try await keyring.search(["service": "\(prefix).account", "accountName": "user1"], loadSecrets: false).first)
        try await setAttributes(t0.attributes.merging(["accountName": "zed"]) { $1 }, of: t0.path)
        try await setAttributes(user1.attributes.merging(["accountName": "dave"]) { $1 }, of: user1.path)
        // Without the index: user1's item no longer matches its record; t0 (now zed's), t1 and
        // h1 (user1's, whose account item now says dave) have no account.
        let full = try self.client().withoutItemIndex()
        #expect(full.getAllAccounts().map(\.accountName) == ["user0", "user2"])
        #expect(full.unreadableRecordCount == 4, "\(full.unreadableRecords)")
        // The index was corrected by what that listing read: the indexed listing says the same.
        let again = try self.client()
        #expect(again.getAllAccounts().map(\.accountName) == ["user0", "user2"])
        #expect(again.unreadableRecordCount == 4, "\(again.unreadableRecords)")
        try await removeEverything()
    }

    @Test("several index items of one kind (copies, crafted, damaged): the next listing leaves one, which opens")
    func untidy() async throws {
        let client = try client()
        stored(in: client)
        _ = client.getAllAccounts()
        for n in 0..<3 {
            try await keyring.store(Data("crafted \(n) \u{1b}[31m".utf8), attributes: ["service": "\(prefix).index", "kind": "\(prefix).account", "n": "\(n)"],
                                    label: "crafted", contentType: "application/octet-stream")
        }
        #expect(client.getAllAccounts().count == 3)
        #expect(client.unreadableRecordCount == 0)
        let left = try await keyring.search(["service": "\(prefix).index", "kind": "\(prefix).account"], loadSecrets: false)
        #expect(left.count == 1)
        #expect(try await indexed(client) == itemsNow())
        try await removeEverything()
    }

    @Test("coffer doctor reads every item: a mechanism moved to another account name in place is reported although the index hides it from a listing")
    func doctorSeesPastTheIndex() async throws {
        let result = try await TestKeyring.runInOwnSession("""
            export COFFER_HOME="$SCRATCH/home"
            "$COFFER" add --backend keychain 'otpauth://totp/Acme:alice?secret=JBSWY3DPEHPK3PXP' > /dev/null || exit 10
            "$COFFER" add --backend keychain 'otpauth://totp/Acme:bob?secret=JBSWY3DPEHPK3PXQ' > /dev/null || exit 11
            "$COFFER" list --backend keychain > /dev/null || exit 12
            path=$(gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \
              --method org.freedesktop.Secret.Service.SearchItems "{'service': 'org.coffer.authenticator.mechanism', 'accountName': 'alice'}" \
              | grep -o '/org/freedesktop/secrets/collection/[a-z_0-9]*/[0-9]*' | head -1)
            attributes=$(gdbus call --session --dest org.freedesktop.secrets --object-path "$path" \
              --method org.freedesktop.DBus.Properties.Get org.freedesktop.Secret.Item Attributes | sed "s/'alice'/'zed'/; s/^(<//; s/>,)$//")
            gdbus call --session --dest org.freedesktop.secrets --object-path "$path" \
              --method org.freedesktop.DBus.Properties.Set org.freedesktop.Secret.Item Attributes "<$attributes>" > /dev/null || exit 13
            "$COFFER" doctor 2>&1 | grep 'keyring accounts'
            "$COFFER" list --backend keychain > /dev/null 2>&1; echo "list-after $?"
            """, keyring: true)
        #expect(result.stdout.contains("no account owns it"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("list-after 0") == false, "after doctor the index is corrected and list warns: \(result.stdout)")
    }

    @Test("four processes adding and listing at once: each lists every account it added; the index stays true")
    func fourProcesses() async throws {
        let run = try await CofferProcess.stressAtOnce(["keychain-client-churn", prefix, "4"],
                                                       environment: ["COFFER_KEYRING_TIMEOUT": "120"])
        #expect(run.allSucceeded, "\(run.failures)")
        let client = try KeychainStorageClient.make(servicePrefix: prefix)  // the processes' key
        #expect(client.getAllAccounts().count == 16)
        let index = try #require(indexed(client))
        let now = try await itemsNow()
        #expect(Set(index.keys) == Set(now.keys))
        for (path, attributes) in index { #expect(now[path] == attributes, "\(path)") }
        try await removeEverything()
    }

    @Test("after the provider restarts, a path it gives to a new item is not taken for the old one's")
    func pathReusedAfterRestart() async throws {
        let p = "org.coffer.tests.index.restart"
        let result = try await TestKeyring.runInOwnSession(Self.restartScript(p) + """
            "$STRESS" keychain-client-add \(p) Issuer alice t0 totp || exit 10
            "$STRESS" keychain-client-list \(p)
            "$STRESS" keychain-client-add \(p) Issuer alice h0 hotp || exit 11
            "$STRESS" keychain-client-list \(p)
            echo "old $(paths h0)"
            secret-tool clear service \(p).mechanism uuid h0
            restartDaemon
            # A mechanism of an account that has no item: what the listing must report.
            printf junk | secret-tool store --label=orphan service \(p).mechanism uuid m2 issuer Gone accountName bob type totp
            echo "new $(paths m2)"
            "$STRESS" keychain-client-list \(p)
            """, keyring: true)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        Self.expectReusedPath(lines, result)
        #expect(lines.last == "accounts 1 unreadable 1", "\(lines) \(result.stderr)")
    }
}

import CofferMFACommons
import Foundation
import Testing

/// Ping's commons as both clients use them: the lock a policy gives, and the two locks no policy
/// lifts.
@Suite("MfaPolicyEvaluator.lockState")
struct PolicyLockStateTests {
    struct Switch: MfaPolicy {
        let name = "switch"
        let compliant: Bool
        func evaluate(data: [String: Any]?) async throws -> Bool { compliant }
    }

    static func evaluator(_ compliant: Bool) -> MfaPolicyEvaluator {
        MfaPolicyEvaluator.create { $0.policies = [Switch(compliant: compliant)] }
    }

    static let policies = #"{"switch": {}}"#

    @Test("a failing policy locks under its name; all passing unlock; no policies leave a hand-set lock")
    func locks() async {
        #expect(await Self.evaluator(false).lockState(policies: Self.policies, isLocked: false, lockingPolicy: nil)! == (true, "switch"))
        #expect(await Self.evaluator(true).lockState(policies: Self.policies, isLocked: true, lockingPolicy: "switch")! == (false, nil))
        #expect(await Self.evaluator(true).lockState(policies: nil, isLocked: true, lockingPolicy: "by hand") == nil)
        #expect(await Self.evaluator(false).lockState(policies: Self.policies, isLocked: true, lockingPolicy: "switch") == nil, "unchanged")
    }

    @Test("a migration's lock and a removal's hold are lifted by no policy")
    func coffersLocks() async {
        for lock in [MfaPolicyEvaluator.migrationLock, MfaPolicyEvaluator.migrationLock + " from keychain", MfaPolicyEvaluator.removalHold] {
            #expect(await Self.evaluator(true).lockState(policies: Self.policies, isLocked: true, lockingPolicy: lock) == nil, "\(lock)")
        }
    }
}

@Suite("Ping's Base64 and URI helpers")
struct CommonsEncodingTests {
    @Test("Base64 and its URL-safe form (RFC 4648 section 10's vector), and a label split as Ping splits it")
    func base64AndLabels() throws {
        #expect(Base64.encodeBase64("foobar") == "Zm9vYmFy")
        #expect(try Base64.decodeBase64("Zm9vYmFy") == "foobar")
        #expect(try Base64.recodeBase64NoWrapValueToUrlSafeNoWrap("+/8=") == "-_8")
        let (issuer, account) = try UriParser().parseLabelComponents("Example:alice", issuerParam: nil)
        #expect(issuer == "Example" && account == "alice")
    }
}

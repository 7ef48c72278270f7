/// A rule a credential's issuer can require of the device (`policies` in an enrolment URI, a
/// JSON object keyed by policy name). A credential whose policy fails is locked until it passes.
public protocol MfaPolicy: Sendable {
    /// The key that names this policy in a credential's `policies` JSON.
    var name: String { get }
    /// Whether the device complies, given the policy's parameters from the credential's JSON
    /// (`nil` when they are not an object). A policy that throws counts as compliant.
    func evaluate(data: [String: Any]?) async throws -> Bool
}

extension MfaPolicy {
    /// `<TypeName>(name: '<name>')`.
    public var description: String { "\(type(of: self))(name: '\(name)')" }
}

/// The outcome of evaluating a credential's policies: success, or the first policy that failed.
public struct MfaPolicyResult: Sendable {
    /// Every policy passed.
    public let isSuccess: Bool
    /// The policy that failed, if one did.
    public let nonCompliancePolicy: (any MfaPolicy)?

    private init(isSuccess: Bool, nonCompliancePolicy: (any MfaPolicy)?) {
        self.isSuccess = isSuccess
        self.nonCompliancePolicy = nonCompliancePolicy
    }

    /// A policy failed.
    public var isFailure: Bool { !isSuccess }
    /// The name of the policy that failed.
    public var nonCompliancePolicyName: String? { nonCompliancePolicy?.name }
}

extension MfaPolicyResult {
    /// Every policy passed.
    public static func success() -> MfaPolicyResult { MfaPolicyResult(isSuccess: true, nonCompliancePolicy: nil) }
    /// `policy` failed.
    public static func failure(policy: any MfaPolicy) -> MfaPolicyResult { MfaPolicyResult(isSuccess: false, nonCompliancePolicy: policy) }
}

import Foundation
import Synchronization

/// Evaluates a credential's `policies` JSON against the policies it knows, in their configured
/// order, as Ping's evaluator does:
/// - no policies, an empty string, text that is not JSON or JSON that is not an object: success
///   (a malformed policy string never blocks);
/// - only policies whose ``MfaPolicy/name`` is a key of the object are asked, each with that
///   key's value as its data; keys naming no known policy are ignored;
/// - the first that answers `false` is the failure; one that throws counts as compliant.
public actor MfaPolicyEvaluator {
    private let policies: [any MfaPolicy]
    private let logger: any Logger

    private init(policies: [any MfaPolicy], logger: any Logger) {
        self.policies = policies
        self.logger = logger
    }

    /// Evaluates a credential's `policies` string.
    public nonisolated func evaluate(credentialPolicies: String?) async -> MfaPolicyResult {
        guard let credentialPolicies, !credentialPolicies.isEmpty,
              let json = try? JSONSerialization.jsonObject(with: Data(credentialPolicies.utf8)) as? [String: Any] else {
            return .success()
        }
        return await evaluate(policiesJson: json)
    }

    /// Evaluates policies given as a JSON object.
    public nonisolated func evaluate(policiesJson: [String: Any]) async -> MfaPolicyResult {
        for policy in policies {
            guard let parameters = policiesJson[policy.name] else { continue }
            let data = parameters as? [String: Any]
            do {
                if try await policy.evaluate(data: data) == false { return .failure(policy: policy) }
            } catch {
                logger.w("Policy \(policy.name) could not be evaluated; it counts as compliant", error: error)
            }
        }
        return .success()
    }

    /// The policies, in evaluation order.
    public nonisolated func getPolicies() -> [any MfaPolicy] { policies }

    /// The policy named `policyName`, if known.
    public nonisolated func getPolicy(policyName: String) -> (any MfaPolicy)? {
        policies.first { $0.name == policyName }
    }
}

extension MfaPolicyEvaluator {
    /// What ``create(configure:)`` builds an evaluator from. Its properties are kept under a
    /// lock, so it is `Sendable` without exceptions.
    public final class Config: Sendable {
        private struct Values {
            var policies: [any MfaPolicy] = []
            var logger: any Logger = LogManager.logger
        }

        private let values = Mutex(Values())

        /// The policies, in evaluation order.
        public var policies: [any MfaPolicy] {
            get { values.withLock { $0.policies } }
            set { values.withLock { $0.policies = newValue } }
        }

        /// Where evaluation problems are logged (default: ``LogManager/logger``).
        public var logger: any Logger {
            get { values.withLock { $0.logger } }
            set { values.withLock { $0.logger = newValue } }
        }

        /// Empty settings.
        public init() {}
    }

    /// An evaluator configured by `configure`.
    public static func create(configure: @Sendable (Config) -> Void = { _ in }) -> MfaPolicyEvaluator {
        let config = Config()
        configure(config)
        return MfaPolicyEvaluator(policies: config.policies, logger: config.logger)
    }
}

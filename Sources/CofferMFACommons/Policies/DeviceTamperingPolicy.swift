import Foundation

/// Ping's `deviceTampering` policy: the device's tamper score is below a threshold (`score` in
/// the policy's data, default 0.8).
///
/// Ping scores jailbreak signs on iOS. On Linux the score is what can be seen from inside the
/// process that a user did not choose: 1.0 when a debugger or tracer is attached
/// (`TracerPid` in `/proc/self/status`) or libraries are preloaded (`LD_PRELOAD`), 0.0
/// otherwise.
public struct DeviceTamperingPolicy: MfaPolicy {
    /// `deviceTampering`.
    public static let policyName = "deviceTampering"
    /// ``policyName``.
    public var name: String { Self.policyName }

    /// The policy.
    public init() {}

    /// Whether ``score()`` is below the threshold.
    public func evaluate(data: [String: Any]?) async throws -> Bool {
        let threshold = data?["score"] as? Double ?? 0.8
        return Self.score() < threshold
    }

    /// 1.0 when the process is traced or has preloaded libraries, else 0.0.
    public static func score() -> Double {
        isTraced() || !(ProcessInfo.processInfo.environment["LD_PRELOAD"] ?? "").isEmpty ? 1.0 : 0.0
    }

    private static func isTraced() -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("TracerPid:") }) else { return false }
        return line.dropFirst("TracerPid:".count).trimmingCharacters(in: .whitespaces) != "0"
    }
}

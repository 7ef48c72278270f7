import Foundation

extension CofferProcess {
    /// What several `coffer-stress` processes run at once gave: each one's result, and every
    /// whole number they printed, one per line (for HOTP races, the counters they were given).
    public struct StressRun: Sendable {
        public let results: [Result]
        public let numbers: [Int]

        /// Every process exited 0.
        public var allSucceeded: Bool { results.allSatisfy { $0.status == 0 } }
        /// What the failing processes wrote to standard error.
        public var failures: [String] { results.filter { $0.status != 0 }.map(\.stderr) }
    }

    /// Runs `coffer-stress arguments` in `processes` processes at the same moment and waits for
    /// all of them: the body of every "4 processes × 50 HOTP codes" test.
    public static func stressAtOnce(_ arguments: [String], processes: Int = 4, environment: [String: String] = [:],
                                    deadline: Duration = .seconds(300)) async throws -> StressRun {
        let executable = try builtExecutable("coffer-stress")
        let results = try await withThrowingTaskGroup(of: Result.self) { group in
            for _ in 0..<processes {
                group.addTask { try await run(executable: executable, arguments, environment: environment, deadline: deadline) }
            }
            return try await group.reduce(into: [Result]()) { $0.append($1) }
        }
        return StressRun(results: results, numbers: results.flatMap { $0.stdout.split(separator: "\n").compactMap { Int($0) } })
    }
}

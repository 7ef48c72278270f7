import Foundation

/// Per-operation times of one side of a comparison, in nanoseconds, one entry per sample.
///
/// A sample is a batch of operations timed together and divided by the batch size, so that
/// operations far shorter than a clock read (a cached `get`) are still measured fairly.
struct Timings: Sendable {
    private(set) var nanoseconds: [Double] = []

    init(_ nanoseconds: [Double] = []) { self.nanoseconds = nanoseconds }

    mutating func append(_ value: Double) { nanoseconds.append(value) }
    mutating func append(contentsOf other: Timings) { nanoseconds.append(contentsOf: other.nanoseconds) }

    var count: Int { nanoseconds.count }
    var median: Double { percentile(0.5) }
    var p90: Double { percentile(0.9) }

    /// The value below which `fraction` of the samples fall (nearest rank).
    func percentile(_ fraction: Double) -> Double {
        guard !nanoseconds.isEmpty else { return .nan }
        let sorted = nanoseconds.sorted()
        let rank = Int((fraction * Double(sorted.count - 1)).rounded())
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}

/// A monotonic clock in nanoseconds.
enum Clock {
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Runs `body` and returns how long it took, in nanoseconds.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return Double(now() - start)
    }

    static func time(_ body: () async throws -> Void) async rethrows -> Double {
        let start = now()
        try await body()
        return Double(now() - start)
    }
}

/// How many samples to take and how many operations each sample holds.
struct SamplePlan: Sendable {
    var warmup: Int
    var samples: Int
    var batch: Int
}

/// Measures two sides of a comparison in alternating samples (subject, reference, subject, ...)
/// so that anything else the machine does falls on both alike.
func measureAlternating(
    _ plan: SamplePlan,
    subject: (Int) async throws -> Void,
    reference: (Int) async throws -> Void
) async throws -> (subject: Timings, reference: Timings) {
    for index in 0..<plan.warmup {
        try await subject(index)
        try await reference(index)
    }
    var subjectTimes = Timings()
    var referenceTimes = Timings()
    var operation = plan.warmup
    for _ in 0..<plan.samples {
        let start = operation
        subjectTimes.append(try await Clock.time {
            for index in start..<(start + plan.batch) { try await subject(index) }
        } / Double(plan.batch))
        referenceTimes.append(try await Clock.time {
            for index in start..<(start + plan.batch) { try await reference(index) }
        } / Double(plan.batch))
        operation += plan.batch
    }
    return (subjectTimes, referenceTimes)
}

/// Times `body` once per call, `count` times, after `warmup` untimed calls.
func measureEach(count: Int, warmup: Int = 3, _ body: (Int) throws -> Void) rethrows -> Timings {
    for index in 0..<warmup { try body(index) }
    var timings = Timings()
    for index in 0..<count {
        timings.append(try Clock.time { try body(warmup + index) })
    }
    return timings
}

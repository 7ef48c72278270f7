import Foundation
import CofferStorage

/// P1: `KeychainStorage` save + get, per operation, against the same two libsecret calls in a C
/// loop (the floor) and against Python's `keyring` package, all on one gnome-keyring daemon.
struct KeyringBenchmark {
    var libsecretFloor: String
    var python: String?
    var pythonScript: String
    var operations: Int
    var rounds: Int

    func run(into report: Report) async throws {
        let storage = KeychainStorage<Credential>(account: "bench-swift", service: "org.coffer.bench", cacheStrategy: .noCache)
        let payload = try JSONEncoder().encode(Credential.sample(1)).count
        var swift = Timings()
        var floor = Timings()
        var pythonTimes = Timings()
        // Rounds alternate the three clients so drift in the daemon falls on each alike.
        for round in 0..<rounds {
            floor.append(contentsOf: try Subprocess.timings([libsecretFloor, "\(operations)", "\(payload)"]))
            swift.append(contentsOf: try await measureSaveGet(storage, operations: operations, round: round))
            if let python {
                pythonTimes.append(contentsOf: try Subprocess.timings([python, pythonScript, "\(operations / 2)", "\(payload)"]))
            }
        }
        try await storage.delete()
        report.add(Row(id: "P1", measurement: "keyring save+get", coffer: swift, referenceName: "libsecret C loop",
                       reference: floor, target: .ratioAtMost(1.2)))
        if python != nil {
            report.add(Row(id: "P1", measurement: "keyring save+get", coffer: swift, referenceName: "Python keyring",
                           reference: pythonTimes, target: .fasterBy(6)))
        }
    }

    private func measureSaveGet(_ storage: KeychainStorage<Credential>, operations: Int, round: Int) async throws -> Timings {
        var timings = Timings()
        for index in 0..<operations {
            let value = Credential.sample(round * operations + index)
            timings.append(try await Clock.time {
                try await storage.save(item: value)
                guard try await storage.get() == value else { throw BenchFailure("keyring returned another value") }
            })
        }
        return timings
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

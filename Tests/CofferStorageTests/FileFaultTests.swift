import Foundation
import TestSupport
@testable import CofferStorage
import Testing

/// R6: every system call of a durable write fails in turn (the first, second or third time it
/// is made) with ENOSPC or EIO, through the writer's fault seam (`FileFaults`).
@Suite("File writer under I/O faults")
struct FileFaultTests {
    static let codes: [Int32] = [ENOSPC, EIO]

    /// The `operation` a failure of each call is reported as.
    static func reportedName(_ operation: FileFaultPlan.Operation) -> String {
        switch operation {
        case .create: "create"
        case .write: "write"
        case .fsync: "fsync"
        case .close: "close"
        case .rename: "rename"
        case .syncDirectory: "fsync directory"
        }
    }

    @Test("a failed step leaves the last saved value, reports a typed error, leaves no temporary file, and the next save works",
          arguments: ["file", "encrypted"], FileFaultPlan.Operation.allCases)
    func failedStep(backend: String, operation: FileFaultPlan.Operation) async throws {
        var typed = 0, intact = 0, leftovers = 0
        for code in Self.codes {
            for occurrence in 1...3 {
                let directory = TemporaryDirectory()
                defer { directory.remove() }
                let storage: StorageDelegate<String> = backend == "file"
                    ? FileStorage<String>(fileName: "value", directory: directory.url)
                    : EncryptedFileStorage<String>(fileName: "value", directory: directory.url, keyStore: FileKeyStore(directory: directory.appending("keys")))
                try await storage.save(item: "value 0")
                let plan = FileFaultPlan(failing: operation, occurrence: occurrence, code: code)
                let context = "\(backend), \(operation) #\(occurrence), errno \(code)"
                try await FileFaults.$plan.withValue(plan) {
                    for round in 1..<occurrence {
                        try await storage.save(item: "value \(round)")
                    }
                    do {
                        try await storage.save(item: "value \(occurrence)")
                        Issue.record("\(context): the save succeeded")
                    } catch let StorageError.io(reported, path, errorCode) {
                        if reported == Self.reportedName(operation), errorCode == code { typed += 1 }
                        #expect(reported == Self.reportedName(operation), "\(context)")
                        #expect(errorCode == code, "\(context)")
                        #expect(path.hasPrefix(directory.url.path), "\(context): \(path)")
                    }
                }
                #expect(plan.calls(of: operation) == occurrence, "\(context): the seam saw every call")
                // Before the rename the old value stands; a failed directory sync comes after the
                // rename, so the new value is in place but the caller is told it may not last.
                let expected = operation == .syncDirectory ? "value \(occurrence)" : "value \(occurrence - 1)"
                let reader: StorageDelegate<String> = backend == "file"
                    ? FileStorage<String>(fileName: "value", directory: directory.url)
                    : EncryptedFileStorage<String>(fileName: "value", directory: directory.url, keyStore: FileKeyStore(directory: directory.appending("keys")))
                #expect(try await reader.get() == expected, "\(context)")
                if try await reader.get() == expected { intact += 1 }
                let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
                leftovers += names.filter { $0.hasSuffix(".tmp") }.count
                #expect(!names.contains { $0.hasSuffix(".tmp") }, "\(context): \(names)")
                try await storage.save(item: "after")
                #expect(try await reader.get() == "after", "\(context)")
            }
        }
        let cases = Self.codes.count * 3
        ReliabilityReport.record(
            "R6", "\(operation.rawValue) fails (ENOSPC, EIO; 1st-3rd call), \(backend == "file" ? "FileStorage" : "EncryptedFileStorage")",
            tried: "\(cases) failed saves",
            outcome: "\(typed) typed errors, \(intact) values as expected (\(operation == .syncDirectory ? "new value, renamed before the failure" : "old value intact")), \(leftovers) temporary files left")
    }

    @Test("a fault plan reaches only the task that set it")
    func planIsScoped() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let plan = FileFaultPlan(failing: .fsync, occurrence: 1, code: EIO)
        let other = FileStorage<String>(fileName: "other", directory: directory.url)
        try await FileFaults.$plan.withValue(plan) {
            // A task not started from here (detached) has no plan.
            try await Task.detached { try await other.save(item: "fine") }.value
        }
        #expect(plan.calls(of: .fsync) == 0)
        #expect(try await other.get() == "fine")
    }
}

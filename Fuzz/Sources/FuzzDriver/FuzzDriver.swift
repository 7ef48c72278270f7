import Dispatch
import Foundation
import FuzzHarness
import Synchronization

/// The glue between libFuzzer and a check of CofferStorageTesting.FuzzHarness, shared by the fuzz
/// targets: each target's entry point calls ``FuzzDriver/run(_:_:checking:)`` with its check.
public enum FuzzDriver {
    /// Hands over to libFuzzer's driver, which calls `check` with each input. A finding stops
    /// the fuzzer with the input saved as a crasher.
    public static func run(
        _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
        checking check: @escaping @Sendable (Data) async throws -> Void
    ) -> CInt {
        currentCheck.withLock { $0 = check }
        var argc = argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
        return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
    }

    fileprivate static let currentCheck = Mutex<(@Sendable (Data) async throws -> Void)?>(nil)
}

/// libFuzzer's callback. It runs on libFuzzer's own thread, which may wait for a task (the
/// checks are async because the encryptor is) without starving Swift's thread pool.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard let check = FuzzDriver.currentCheck.withLock({ $0 }) else { return 0 }
    let data = Data(bytes: bytes, count: count)
    let finding = Mutex<(any Error)?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { try await check(data) } catch { finding.withLock { $0 = error } }
        done.signal()
    }
    done.wait()
    if let finding = finding.withLock({ $0 }) { fatalError("finding: \(finding)") }
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

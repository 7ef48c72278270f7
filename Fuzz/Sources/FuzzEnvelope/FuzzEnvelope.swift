import Dispatch
import Foundation
import StorageTesting
import Synchronization

/// One input, checked by FuzzHarness.envelope. A finding stops the fuzzer with the input saved
/// as a crasher.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    // The harness is async (the encryptor is); libFuzzer calls from its own thread, which may
    // wait for a task without starving Swift's thread pool.
    let finding = Mutex<FuzzFinding?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { try await FuzzHarness.envelope(data) } catch { finding.withLock { $0 = error } }
        done.signal()
    }
    done.wait()
    if let finding = finding.withLock({ $0 }) { fatalError("finding: \(finding)") }
    return 0
}

/// SwiftPM links an executable's entry point as FuzzEnvelope_main; it hands over to libFuzzer's driver.
@_cdecl("FuzzEnvelope_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzz)
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

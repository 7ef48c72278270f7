import Foundation
import StorageTesting

/// One input, checked by FuzzHarness.uri. A finding stops the fuzzer with the input saved
/// as a crasher.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    do {
        try FuzzHarness.uri(Data(bytes: bytes, count: count))
    } catch {
        fatalError("finding: \(error)")
    }
    return 0
}

/// SwiftPM links an executable's entry point as FuzzURI_main; it hands over to libFuzzer's driver.
@_cdecl("FuzzURI_main")
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

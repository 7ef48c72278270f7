import FuzzDriver
import FuzzHarness

/// SwiftPM links an executable's entry point as FuzzAegis_main: libFuzzer with FuzzHarness.aegis.
@_cdecl("FuzzAegis_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    FuzzDriver.run(argc, argv) { try FuzzHarness.aegis($0) }
}

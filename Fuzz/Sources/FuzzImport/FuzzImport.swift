import FuzzDriver
import FuzzHarness

/// SwiftPM links an executable's entry point as FuzzImport_main: libFuzzer with FuzzHarness.importFile.
@_cdecl("FuzzImport_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    FuzzDriver.run(argc, argv) { try FuzzHarness.importFile($0) }
}

import FuzzDriver
import FuzzHarness

/// SwiftPM links an executable's entry point as FuzzURI_main: libFuzzer with FuzzHarness.uri.
@_cdecl("FuzzURI_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    FuzzDriver.run(argc, argv) { try FuzzHarness.uri($0) }
}

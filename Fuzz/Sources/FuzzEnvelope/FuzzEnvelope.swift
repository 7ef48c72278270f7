import FuzzDriver
import FuzzHarness

/// SwiftPM links an executable's entry point as FuzzEnvelope_main: libFuzzer with FuzzHarness.envelope.
@_cdecl("FuzzEnvelope_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    FuzzDriver.run(argc, argv) { try await FuzzHarness.envelope($0) }
}

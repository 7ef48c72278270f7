import Foundation
import Testing
@testable import CofferStorage

@Suite struct ProcessEnvironmentTests {
    @Test func readsEachVariableAsProcessInfoDoes() {
        let everything = ProcessInfo.processInfo.environment
        #expect(everything["PATH"] != nil, "the test needs PATH set")
        for (name, value) in everything {
            #expect(ProcessEnvironment.value(name) == value, "\(name)")
        }
    }

    @Test func aVariableNotSetIsNil() {
        let name = "COFFER_TEST_UNSET_\(UUID().uuidString.replacingOccurrences(of: "-", with: "_"))"
        #expect(ProcessInfo.processInfo.environment[name] == nil)
        #expect(ProcessEnvironment.value(name) == nil)
    }
}

@Suite struct ProcessEnvironmentValuesTests {
    @Test func everyValueOfANameInOrder() {
        #expect(ProcessEnvironment.values("PATH") == [ProcessInfo.processInfo.environment["PATH"]].compactMap { $0 })
        #expect(ProcessEnvironment.values("COFFER_TEST_UNSET_\(UUID().uuidString.replacingOccurrences(of: "-", with: "_"))").isEmpty)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One variable of this process's environment, read on its own.
///
/// `ProcessInfo.processInfo.environment` decodes every variable into a new dictionary each time
/// it is asked. A start of `coffer code` asked it eleven times: 4.5 million instructions at the
/// bench's 40 variables, 7.5% of the start (docs/performance.md, P6, thirteenth session). This
/// reads the one variable asked for, as `getenv(3)` finds it (the first of two with one name),
/// with text that is not UTF-8 repaired as `String(cString:)` repairs it.
///
/// Like `ProcessInfo`, it reads the C library's environment without a lock of its own: the
/// tool changes its environment only at its start, before it starts a thread.
package enum ProcessEnvironment {
    /// The value of the variable `name`: nil when it is not set, "" when it is set empty.
    package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// This process's environment, one variable at a time.
///
/// `ProcessInfo.processInfo.environment` decodes every variable into a new dictionary each time
/// it is asked. A start of `coffer code` asked it eleven times: 4.5 million instructions at the
/// bench's 40 variables, 7.5% of the start (docs/performance.md, P6, thirteenth session).
/// ``value(_:)`` reads the one variable asked for, as `getenv(3)` finds it, with text that is
/// not UTF-8 repaired as `String(cString:)` repairs it.
///
/// **A name given twice.** `execve` takes any list of strings, so a program can start another
/// with `LD_LIBRARY_PATH` (or any name) twice. Then the loader and `ProcessInfo` take the last,
/// and `getenv` (every C library) the first. The tool calls ``collapseRepeatedNames()`` at its
/// start, before anything reads a variable, so that all of them, and the programs it starts,
/// see one value: the last, the one the loader used.
///
/// Like `ProcessInfo`, it reads the C library's environment without a lock of its own. The tool
/// changes its environment at its start, before it starts a thread; the TPM's C shim sets
/// `TSS2_LOG` when it first loads tpm2-tss.
package enum ProcessEnvironment {
    /// The value of the variable `name`: nil when it is not set, "" when it is set empty.
    package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Every value the environment gives `name`, in its order: one as a rule, more when the
    /// program that started this one gave the name more than once.
    package static func values(_ name: String) -> [String] {
        let wanted = Array(name.utf8)
        return entries().filter { $0.name == wanted }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    /// Leaves one value for every name the environment gives more than once: the last. Returns
    /// those names. Call it before any thread starts (it changes the C library's environment).
    @discardableResult
    package static func collapseRepeatedNames() -> [String] {
        var last: [[UInt8]: [UInt8]] = [:]
        var repeated: [[UInt8]] = []
        for entry in entries() where !entry.name.isEmpty {
            if last.updateValue(entry.value, forKey: entry.name) != nil, !repeated.contains(entry.name) {
                repeated.append(entry.name)
            }
        }
        for name in repeated {
            let value = last[name] ?? []
            // unsetenv removes every entry of the name; setenv then adds the one kept.
            (name + [0]).withUnsafeBufferPointer { name in
                (value + [0]).withUnsafeBufferPointer { value in
                    name.withMemoryRebound(to: CChar.self) { name in
                        value.withMemoryRebound(to: CChar.self) { value in
                            _ = unsetenv(name.baseAddress!)
                            _ = setenv(name.baseAddress!, value.baseAddress!, 1)
                        }
                    }
                }
            }
        }
        return repeated.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The environment's entries as bytes, name and value split at the first `=`; an entry
    /// without one is no variable and is left out.
    private static func entries() -> [(name: [UInt8], value: [UInt8])] {
        var found: [(name: [UInt8], value: [UInt8])] = []
        // Null only after clearenv(3), which nothing here calls; checked all the same.
        guard Int(bitPattern: environ) != 0 else { return found }
        var cursor = environ
        while let entry = cursor.pointee {
            let bytes = UnsafeRawBufferPointer(start: entry, count: strlen(entry))
            if let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
                found.append((Array(bytes[..<equals]), Array(bytes[(equals + 1)...])))
            }
            cursor += 1
        }
        return found
    }
}

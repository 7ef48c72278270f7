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
        var found: [String] = []
        guard let entries = table else { return found }
        (name + "=").withCString { prefix in
            let length = strlen(prefix)
            var index = 0
            while let entry = entries[index] {
                if strncmp(entry, prefix, length) == 0 { found.append(String(cString: entry + length)) }
                index += 1
            }
        }
        return found
    }

    /// Leaves one value for every name the environment gives more than once: the last. Call it
    /// before any thread starts (it changes the C library's environment).
    ///
    /// It walks the C library's table itself, with no collection of its own: a dictionary of
    /// byte arrays cost a start 1.2 million instructions, most of them the runtime's first look
    /// for the conformances of a type no other code used.
    package static func collapseRepeatedNames() {
        var index = 0
        while let entries = table, let entry = entries[index] {
            guard let equals = strchr(entry, Int32(UInt8(ascii: "="))), equals != entry else { index += 1; continue }
            let length = equals - entry
            // The last entry of this name (its name and "=" the same bytes).
            var last: UnsafeMutablePointer<CChar>?
            var later = index + 1
            while let other = entries[later] {
                if strncmp(other, entry, length + 1) == 0 { last = other }
                later += 1
            }
            guard let last, let value = strdup(last + length + 1) else { index += 1; continue }
            let name: [CChar] = Array(UnsafeBufferPointer(start: UnsafePointer(entry), count: length)) + [0]
            // unsetenv removes every entry of the name; setenv then adds the one kept. The
            // table changes under both: start again from its top (the name is single now).
            unsetenv(name)
            setenv(name, value, 1)
            free(value)
            index = 0
        }
    }

    /// The C library's table of `NAME=value` entries, ended by a null; nil only after
    /// `clearenv(3)`, which nothing here calls.
    private static var table: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        Int(bitPattern: environ) == 0 ? nil : environ
    }
}

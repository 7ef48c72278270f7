import CofferStorage
import Foundation

// Everything the tool prints passes through one escaping path (`TerminalText`), so nothing
// read from storage (a name, a policy, a mechanism id, a keyring label quoted in an error)
// can put terminal escape sequences, C1 controls or bidirectional overrides on the screen.
//
// This module's `print` shadows the standard library's: every `print(…)` in the tool escapes
// what it prints, line feeds and tabs included (each call prints one line, and nothing quoted in
// it can start another: a line read from the tool's output is the line the tool meant). The
// few places that must send the terminal a
// control sequence of the tool's own (hiding the cursor, redrawing `--watch`, drawing a QR
// code, OSC 52) call ``StandardStreams/control(_:)``; JSON goes through ``JSONOutput``.

/// Prints `items` like the standard library's `print`, with control, format and separator
/// characters escaped (``TerminalText/escaped(_:)``); only `terminator` ends the line.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator)
    Swift.print(TerminalText.escaped(text), terminator: terminator)
}

extension StandardStreams {
    /// Writes a control sequence of the tool's own to standard output, unescaped.
    static func control(_ sequence: String) {
        Swift.print(sequence, terminator: "")
    }
}

/// Text read from storage (names, policies, ids, labels, error details that quote them), made
/// safe to show: the one escaping path every string takes before the `coffer` tool prints it.
///
/// A name in a database row, a keyring attribute or an imported file can carry terminal escape
/// sequences (`ESC ]0;…BEL` retitles the window, `ESC [2J` clears it, OSC 52 writes the
/// clipboard), C1 controls or bidirectional overrides that make one name look like another.
/// Each such character is written as `\u{…}` instead.
package enum TerminalText {
    /// Whether `scalar` must not reach a terminal as it is: a control character (C0, DEL, C1),
    /// a format character (bidirectional overrides, zero-width characters; not the zero-width
    /// joiner that emoji use) or a line or paragraph separator.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        case .format: return scalar.value != 0x200D
        default: return false
        }
    }

    /// `text` with every character ``isControl(_:)`` finds written as `\u{…}`, line feeds and
    /// tabs included: a name, an id or an error that quotes one stays on its line and cannot
    /// forge the next.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// JSON text with every character ``isControl(_:)`` finds but the line feeds of its layout
    /// written as a JSON escape (`\u009b`; a surrogate pair above U+FFFF). Such characters can
    /// only be inside strings, where the escape means the same character, so the JSON decodes
    /// to the same values.
    package static func jsonEscaped(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { isControl($0) && $0 != "\n" }) else { return json }
        var result = ""
        for scalar in json.unicodeScalars {
            guard isControl(scalar), scalar != "\n" else {
                result.unicodeScalars.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 { result += "\\u" + [UInt8(unit >> 8), UInt8(unit & 0xFF)].hexString }
        }
        return result
    }
}

import Foundation

/// Text for man(7) pages: what roff would take for markup is escaped, so a help text that
/// starts a line with `.` or holds a backslash prints as written.
enum Roff {
    /// `text` as roff prints it literally: backslashes and hyphens escaped (a `\-` is a real
    /// minus, which `man` searches and copies as one), a control character at a line's start
    /// neutralised.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\e")
            .replacingOccurrences(of: "-", with: "\\-")
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line) }
            .joined(separator: "\n")
    }

    static func bold(_ text: String) -> String { "\\fB" + escaped(text) + "\\fR" }

    static func italic(_ text: String) -> String { "\\fI" + escaped(text) + "\\fR" }

    /// A help discussion as paragraphs: blank lines separate them, and lines indented by two
    /// spaces (the examples) stay as typed, in an indented block.
    static func paragraphs(_ discussion: String) -> [String] {
        var lines: [String] = []
        var inExample = false
        for line in discussion.split(separator: "\n", omittingEmptySubsequences: false) {
            let example = line.hasPrefix("  ")
            if example != inExample {
                lines += example ? [".RS 4", ".nf"] : [".fi", ".RE"]
                inExample = example
            }
            if example {
                lines.append(escaped(String(line.dropFirst(2))))
            } else if line.trimmingCharacters(in: .whitespaces).isEmpty {
                lines.append(".PP")
            } else {
                lines += [escaped(String(line))]
            }
        }
        if inExample { lines += [".fi", ".RE"] }
        return [".PP"] + lines
    }
}

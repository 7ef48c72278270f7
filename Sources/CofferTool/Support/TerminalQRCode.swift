import CofferAuthenticator

/// Draws a QR code in a terminal with Unicode half blocks: each character cell holds two
/// modules, one above the other, in black on white set explicitly (ANSI colours), so the code
/// scans whatever the terminal's own colours are. A quiet zone of four modules surrounds it.
enum TerminalQRCode {
    static let quietZone = 4

    /// The lines to print for `text`.
    static func lines(for text: String) throws -> [String] {
        let (size, dark) = try QRCodeImage.modules(for: text)
        let span = size + 2 * quietZone
        func isDark(_ row: Int, _ column: Int) -> Bool {
            let r = row - quietZone, c = column - quietZone
            return r >= 0 && r < size && c >= 0 && c < size && dark[r * size + c]
        }
        var lines: [String] = []
        for row in stride(from: 0, to: span, by: 2) {
            var line = "\u{1B}[30;107m"  // black on bright white
            for column in 0..<span {
                switch (isDark(row, column), row + 1 < span && isDark(row + 1, column)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line + "\u{1B}[0m")
        }
        return lines
    }
}

import ArgumentParser
import CofferStorage
import Foundation

/// `coffer clipboard-clear`: started detached by `code --copy`; not for people (hidden).
struct ClipboardClearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clipboard-clear",
        abstract: "Clears the clipboard after a while if it still holds a copied code (started by code --copy).",
        shouldDisplay: false)

    @Option var tool: String
    @Option var after: Int

    func run() throws {
        guard let tool = Clipboard.Tool(rawValue: tool),
              let digest = ProcessEnvironment.value("COFFER_CLIPBOARD_DIGEST") else { throw ExitCode.failure }
        sleep(UInt32(max(1, min(after, 3600))))
        try Clipboard.clear(tool, ifDigest: digest)
    }
}

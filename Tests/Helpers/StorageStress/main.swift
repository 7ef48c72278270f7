// coffer-stress: a helper the tests start as several processes hammering one store.
//
//   coffer-stress write DIR NAME WRITER COUNT   saves COUNT self-checking values
//   coffer-stress read  DIR NAME COUNT          reads COUNT times, checks every value
//
// Exit status 0 when every operation succeeded and every value read was whole; otherwise the
// problems are printed on stderr and the status is 1.
import Foundation
import Storage

/// A value whose body can be checked against its header: `w<writer>r<round>:` then the
/// writer's digit repeated a round-dependent number of times.
enum StressValue {
    static func make(writer: Int, round: Int) -> String {
        "w\(writer)r\(round):" + String(repeating: String(writer % 10), count: 8_000 + round % 97)
    }

    static func isWhole(_ value: String) -> Bool {
        guard value != "initial" else { return true }
        guard let colon = value.firstIndex(of: ":"), value.hasPrefix("w") else { return false }
        let header = value[value.index(after: value.startIndex)..<colon].split(separator: "r")
        guard header.count == 2, let writer = Int(header[0]), let round = Int(header[1]) else { return false }
        return value == make(writer: writer, round: round)
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 5, let count = Int(arguments.last!) else {
    FileHandle.standardError.write(Data("usage: coffer-stress write DIR NAME WRITER COUNT | read DIR NAME COUNT\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: arguments[2], isDirectory: true)
let storage = EncryptedFileStorage<String>(fileName: arguments[3], directory: directory)
var problems: [String] = []

for round in 0..<count {
    do {
        switch arguments[1] {
        case "write":
            try await storage.save(item: StressValue.make(writer: Int(arguments[4]) ?? 0, round: round))
        default:
            guard let value = try await storage.get() else { problems.append("read \(round): value missing"); continue }
            if !StressValue.isWhole(value) { problems.append("read \(round): torn value (\(value.utf8.count) bytes)") }
        }
    } catch {
        problems.append("\(arguments[1]) \(round): \(error)")
    }
}
if !problems.isEmpty {
    FileHandle.standardError.write(Data((problems.prefix(5) + ["\(problems.count) problems"]).joined(separator: "\n").utf8))
    exit(1)
}

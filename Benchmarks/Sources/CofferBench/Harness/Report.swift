import Foundation

/// What a figure must reach to meet the issue's target.
enum Target: Sendable {
    /// Coffer's median over the reference's median at most this (`1.2` reads "≤ 1.2× floor").
    case ratioAtMost(Double)
    /// The reference's median over Coffer's at least this (`5` reads "≥ 5× faster").
    case fasterBy(Double)
    /// Coffer's median at most this many nanoseconds.
    case medianAtMost(Double)
    /// Reported for context only.
    case none

    var text: String {
        switch self {
        case .ratioAtMost(let limit): return "≤ \(Format.ratio(limit))"
        case .fasterBy(let factor): return "≥ \(Format.ratio(factor)) faster"
        case .medianAtMost(let limit): return "≤ \(Format.duration(limit))"
        case .none: return ""
        }
    }
}

/// One line of the report.
struct Row: Sendable {
    var id: String
    var measurement: String
    var coffer: Timings
    var referenceName: String = ""
    var reference: Timings?
    var target: Target = .none
    var note: String = ""

    /// Coffer's median over the reference's.
    var ratio: Double? {
        guard let reference, reference.median > 0 else { return nil }
        return coffer.median / reference.median
    }

    var met: Bool? {
        switch target {
        case .none: return nil
        case .ratioAtMost(let limit): return ratio.map { $0 <= limit }
        case .fasterBy(let factor): return ratio.map { $0 <= 1 / factor }
        case .medianAtMost(let limit): return coffer.median <= limit
        }
    }
}

/// Prints rows as they come and the whole table at the end.
final class Report {
    private(set) var rows: [Row] = []
    let started = Date()

    func add(_ row: Row) {
        rows.append(row)
        FileHandle.standardError.write(Data("  \(row.id) \(row.measurement): \(Format.duration(row.coffer.median))\(row.ratio.map { " (\(Format.ratio($0)) \(row.referenceName))" } ?? "")\n".utf8))
    }

    func table() -> String {
        let header = ["", "measurement", "Coffer median", "p90", "reference", "ref. median", "ratio", "target", "met"]
        var lines = [header]
        for row in rows {
            let met: String = switch row.met {
            case .some(true): "yes"
            case .some(false): "NO"
            case .none: ""
            }
            lines.append([
                row.id, row.measurement, Format.duration(row.coffer.median), Format.duration(row.coffer.p90),
                row.referenceName, row.reference.map { Format.duration($0.median) } ?? "",
                row.ratio.map(Format.ratio) ?? "", row.target.text, met,
            ])
        }
        let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        func render(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: " | ")
                .trimmingCharacters(in: .whitespaces)
        }
        var output = [render(lines[0]), widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-")]
        output += lines.dropFirst().map(render)
        let notes = rows.filter { !$0.note.isEmpty }.map { "\($0.id) \($0.measurement): \($0.note)" }
        if !notes.isEmpty { output += [""] + notes }
        return output.joined(separator: "\n")
    }

    /// The rows as JSON lines, for tools that compare runs.
    func json() -> String {
        rows.map { row in
            var fields = ["\"id\":\"\(row.id)\"", "\"measurement\":\"\(row.measurement)\"",
                          "\"median_ns\":\(Int(row.coffer.median))", "\"p90_ns\":\(Int(row.coffer.p90))",
                          "\"samples\":\(row.coffer.count)"]
            if let reference = row.reference {
                fields += ["\"reference\":\"\(row.referenceName)\"", "\"reference_median_ns\":\(Int(reference.median))"]
            }
            if let ratio = row.ratio { fields.append("\"ratio\":\(String(format: "%.3f", ratio))") }
            if let met = row.met { fields.append("\"met\":\(met)") }
            return "{" + fields.joined(separator: ",") + "}"
        }.joined(separator: "\n")
    }
}

enum Format {
    static func duration(_ nanoseconds: Double) -> String {
        guard nanoseconds.isFinite else { return "-" }
        switch nanoseconds {
        case ..<1_000: return String(format: "%.0f ns", nanoseconds)
        case ..<1_000_000: return String(format: "%.1f µs", nanoseconds / 1_000)
        case ..<1_000_000_000: return String(format: "%.2f ms", nanoseconds / 1_000_000)
        default: return String(format: "%.2f s", nanoseconds / 1_000_000_000)
        }
    }

    static func ratio(_ value: Double) -> String {
        value >= 10 ? String(format: "%.0f×", value) : String(format: "%.2f×", value)
    }
}

import Foundation

/// The table for people and the JSON for machines.
enum Report {
    static func table(_ report: BenchmarkReport) -> String {
        var lines: [String] = []
        lines.append("objects: \(report.objects), repetitions: \(report.repetitions), \(report.machine)")
        lines.append("")
        lines.append("| workload | binary store (median, min–max) | SQLite (median, min–max) | binary / SQLite | peak RSS ours / SQLite | notes |")
        lines.append("| --- | --- | --- | --- | --- | --- |")
        for result in report.results {
            var row = "| \(result.name) | "
            if let ours = result.bytes[Side.ours.rawValue], let theirs = result.bytes[Side.sqlite.rawValue] {
                row += "\(megabytes(ours)) | \(megabytes(theirs)) | "
                row += theirs > 0 ? String(format: "%.2f× the size", Double(ours) / Double(theirs)) : "–"
                row += " | – | "
            } else {
                row += cell(result, .ours) + " | " + cell(result, .sqlite) + " | "
                row += result.speedup.map { String(format: "**%.2f×** %@", $0, $0 >= 1 ? "faster" : "(slower)") } ?? "–"
                row += " | \(peak(result, .ours)) / \(peak(result, .sqlite)) | "
            }
            row += result.notes.joined(separator: "; ") + " |"
            lines.append(row)
        }
        return lines.joined(separator: "\n")
    }

    private static func cell(_ result: WorkloadResult, _ side: Side) -> String {
        guard let median = result.median(side), let (low, high) = result.range(side) else { return "–" }
        let rate = median > 0 ? Double(result.operations) / median : 0
        let rateText = result.operations > 1 ? " = \(compact(rate)) \(result.unit)/s" : ""
        return "\(duration(median)) (\(duration(low))–\(duration(high)))\(rateText)"
    }

    private static func peak(_ result: WorkloadResult, _ side: Side) -> String {
        guard let values = result.peakBytes[side.rawValue], let high = values.max(), high > 0 else { return "–" }
        return megabytes(high)
    }

    static func duration(_ seconds: Double) -> String {
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 0.001 { return String(format: "%.1f ms", seconds * 1000) }
        return String(format: "%.0f µs", seconds * 1_000_000)
    }

    static func compact(_ value: Double) -> String {
        if value >= 1_000_000 { return String(format: "%.2fM", value / 1_000_000) }
        if value >= 1000 { return String(format: "%.1fk", value / 1000) }
        return String(format: "%.0f", value)
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_000_000) }

    static func json(_ report: BenchmarkReport) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(report), let text = String(data: data, encoding: .utf8) else { return "{}" }
        return text
    }
}

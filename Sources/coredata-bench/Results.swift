import Foundation

/// Which implementation a figure belongs to.
enum Side: String, CaseIterable, Codable {
    case ours = "binary store"
    case sqlite = "SQLite"
}

/// The figures of one workload over all repetitions.
struct WorkloadResult: Codable {
    /// Shown in the table, in run order.
    var name: String
    /// Units of work per run (rows, saves, lookups, queries) for the rate column.
    var operations: Int
    var unit: String
    var seconds: [String: [Double]] = [:]
    var peakBytes: [String: [Int]] = [:]
    /// Extra figures (syncs per save, bytes of log replayed, file sizes).
    var notes: [String] = []
    /// For workloads measured in bytes rather than seconds (file size): ours / SQLite.
    var bytes: [String: Int] = [:]

    mutating func record(_ side: Side, seconds value: Double, peak: Int) {
        seconds[side.rawValue, default: []].append(value)
        peakBytes[side.rawValue, default: []].append(peak)
    }

    func median(_ side: Side) -> Double? {
        guard let values = seconds[side.rawValue], !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    func range(_ side: Side) -> (Double, Double)? {
        guard let values = seconds[side.rawValue], let low = values.min(), let high = values.max() else { return nil }
        return (low, high)
    }

    /// How many times faster than SQLite (SQLite's median time / ours); > 1 means we are faster.
    var speedup: Double? {
        if let ours = bytes[Side.ours.rawValue], let theirs = bytes[Side.sqlite.rawValue], ours > 0 {
            return Double(theirs) / Double(ours)
        }
        guard let ours = median(.ours), let theirs = median(.sqlite), ours > 0 else { return nil }
        return theirs / ours
    }
}

/// The whole run: machine, command, results.
struct BenchmarkReport: Codable {
    var date: String
    var machine: String
    var command: String
    var objects: Int
    var repetitions: Int
    var results: [WorkloadResult]
}

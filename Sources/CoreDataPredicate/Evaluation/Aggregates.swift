import Foundation

/// The aggregate operations of key paths (`@sum`) and functions (`sum:`), over lists of values in
/// which nil entries are skipped.
enum Aggregates {
    /// The numbers, or nil when some non-nil value is not a number.
    private static func numbers(_ values: [Any?]) -> [Number]? {
        var numbers: [Number] = []
        for value in values {
            guard let value = ValueKinds.unwrap(value) else { continue }
            guard let number = Number(value) else { return nil }
            numbers.append(number)
        }
        return numbers
    }

    /// The sum; 0 for no values; nil when a value is not a number.
    static func sum(_ values: [Any?]) -> Any? {
        guard let numbers = numbers(values) else { return nil }
        return numbers.reduce(Number.int(0), Arithmetic.add).value
    }

    /// The arithmetic mean as a Double; nil for no values.
    static func average(_ values: [Any?]) -> Any? {
        guard let numbers = numbers(values), !numbers.isEmpty else { return nil }
        return numbers.reduce(0.0) { $0 + $1.doubleValue } / Double(numbers.count)
    }

    /// The smallest value (numbers, strings or dates); nil for no values or values that cannot be ordered.
    static func minimum(_ values: [Any?]) -> Any? {
        extreme(values, keep: .orderedAscending)
    }

    static func maximum(_ values: [Any?]) -> Any? {
        extreme(values, keep: .orderedDescending)
    }

    private static func extreme(_ values: [Any?], keep: ComparisonResult) -> Any? {
        var best: Any?
        for case let value? in values.map(ValueKinds.unwrap) {
            guard let current = best else {
                best = value
                continue
            }
            guard let order = ValueComparison.order(value, current) else { return nil }
            if order == keep { best = value }
        }
        return best
    }

    /// The middle value of the sorted numbers (the mean of the two middle ones for an even count).
    static func median(_ values: [Any?]) -> Any? {
        guard let numbers = numbers(values), !numbers.isEmpty else { return nil }
        let sorted = numbers.map(\.doubleValue).sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Every value that occurs most often, in first-occurrence order (Apple returns an array).
    static func mode(_ values: [Any?]) -> Any? {
        var distinctValues: [Any] = []
        var counts: [Int] = []
        for case let value? in values.map(ValueKinds.unwrap) {
            if let index = distinctValues.firstIndex(where: { ValueComparison.equal($0, value) }) {
                counts[index] += 1
            } else {
                distinctValues.append(value)
                counts.append(1)
            }
        }
        guard let top = counts.max() else { return [Any]() }
        return zip(distinctValues, counts).filter { $0.1 == top }.map(\.0)
    }

    /// The population standard deviation; nil for no values.
    static func standardDeviation(_ values: [Any?]) -> Any? {
        guard let numbers = numbers(values), !numbers.isEmpty else { return nil }
        let doubles = numbers.map(\.doubleValue)
        let mean = doubles.reduce(0, +) / Double(doubles.count)
        let variance = doubles.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(doubles.count)
        return variance.squareRoot()
    }

    /// The values without repeats (by predicate equality), in first-occurrence order.
    ///
    /// Complexity: O(n²) comparisons.
    static func distinct(_ values: [Any?]) -> [Any?] {
        var result: [Any?] = []
        for value in values where !result.contains(where: { ValueComparison.equal($0, value) }) {
            result.append(value)
        }
        return result
    }
}

import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation


/// An in-memory index of one attribute of one entity (Formats/binary-store.md §7.1): the primary
/// keys of the rows sorted by the attribute's value, for the model's fetch indexes and
/// single-attribute uniqueness constraints.
///
/// It only narrows: a fetch reads the candidates it returns and still runs the whole compiled
/// predicate on each, so an index can never change a result, only how many records are read.
/// Values that no ordered comparison can match (nil, NaN, other kinds) are left out.
///
/// Built from the records the first time a fetch can use it and dropped when a save changes the
/// entity (it is not persisted in format version 1). Threading: immutable once built.
struct SecondaryIndex: Sendable {
    /// The kinds of value an index orders; a constant of another kind does not use the index.
    enum Kind: Sendable {
        case integer, double, date, string
    }

    let kind: Kind
    /// Sorted by `value`, then key.
    private(set) var entries: [(value: StoreValue, key: Int64)]

    init(kind: Kind, entries: [(value: StoreValue, key: Int64)]) {
        self.kind = kind
        self.entries = entries.filter { Self.orderable($0.value, kind) }
        self.entries.sort { Self.less($0.value, $1.value) || (!Self.less($1.value, $0.value) && $0.key < $1.key) }
    }

    static func kind(of type: NSAttributeType) -> Kind? {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: return .integer
        case .doubleAttributeType, .floatAttributeType: return .double
        case .dateAttributeType: return .date
        case .stringAttributeType: return .string
        default: return nil
        }
    }

    private static func orderable(_ value: StoreValue, _ kind: Kind) -> Bool {
        switch (value, kind) {
        case (.integer, .integer), (.date, .date), (.string, .string): return true
        case (.double(let v), .double): return !v.isNaN
        default: return false
        }
    }

    /// The order comparisons mean: numbers by value, dates by time, strings by Unicode scalars
    /// (UTF-8 byte order is the same order).
    private static func less(_ a: StoreValue, _ b: StoreValue) -> Bool {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y
        case (.double(let x), .double(let y)): return x < y
        case (.date(let x), .date(let y)): return x.timeIntervalSinceReferenceDate < y.timeIntervalSinceReferenceDate
        case (.string(let x), .string(let y)): return x.utf8.lexicographicallyPrecedes(y.utf8)
        default: return false
        }
    }

    /// The constant as a value of this index's kind, when comparing with it is exact.
    func bound(_ constant: Any?) -> StoreValue? {
        switch (kind, constant) {
        case (.integer, let v as Int): return .integer(Int64(v))
        case (.integer, let v as Int64): return .integer(v)
        case (.integer, let v as Int32): return .integer(Int64(v))
        case (.integer, let v as Int16): return .integer(Int64(v))
        case (.double, let v as Double) where !v.isNaN: return .double(v)
        case (.double, let v as Int) where abs(v) < 1 << 53: return .double(Double(v))
        case (.date, let v as Date): return .date(v)
        case (.string, let v as String): return .string(v)
        default: return nil
        }
    }

    /// The keys of rows that may satisfy `value OP constant`, or nil when the index cannot say.
    func candidates(_ type: CoreDataPredicate.NSComparisonPredicate.Operator, _ constant: Any?) -> [Int64]? {
        let range: Range<Int>
        switch type {
        case .equalTo:
            guard let bound = bound(constant) else { return nil }
            range = lowerBound(bound)..<upperBound(bound)
        case .lessThan:
            guard let bound = bound(constant) else { return nil }
            range = 0..<lowerBound(bound)
        case .lessThanOrEqualTo:
            guard let bound = bound(constant) else { return nil }
            range = 0..<upperBound(bound)
        case .greaterThan:
            guard let bound = bound(constant) else { return nil }
            range = upperBound(bound)..<entries.count
        case .greaterThanOrEqualTo:
            guard let bound = bound(constant) else { return nil }
            range = lowerBound(bound)..<entries.count
        case .between:
            guard let pair = constant as? [Any?], pair.count == 2, let low = bound(pair[0]), let high = bound(pair[1]) else { return nil }
            let start = lowerBound(low), end = upperBound(high)
            range = start..<max(start, end)
        default:
            return nil
        }
        return entries[range].map(\.key)
    }

    /// The first entry not less than `value`.
    private func lowerBound(_ value: StoreValue) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if Self.less(entries[mid].value, value) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first entry greater than `value`.
    private func upperBound(_ value: StoreValue) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if Self.less(value, entries[mid].value) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

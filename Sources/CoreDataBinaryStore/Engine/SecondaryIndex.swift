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
/// Built from the records the first time a fetch can use it, then kept current by the saves of
/// this handle (``applying(_:)``); a change it cannot see the values of (another process's save)
/// drops it, and the next fetch builds it again. It is not persisted in the file.
///
/// Threading: a value; the store swaps it under its lock, and a fetch reads its own copy.
struct SecondaryIndex: Sendable {
    /// The kinds of value an index orders; a constant of another kind does not use the index.
    enum Kind: Sendable {
        case integer, double, date, string
    }

    let kind: Kind
    /// Sorted by `value`, then key; an entry whose key is in `changed` is out of date.
    private var entries: [(value: StoreValue, key: Int64)]
    /// The value of every key saved or deleted since `entries` was sorted (`.null` when deleted):
    /// a save costs O(changes), not a re-sort. Folded into `entries` once it outgrows
    /// ``foldThreshold``, so a fetch's linear look at it stays small beside the index's range.
    private var changed: [Int64: StoreValue] = [:]

    init(kind: Kind, entries: [(value: StoreValue, key: Int64)]) {
        self.kind = kind
        self.entries = entries.filter { Self.orderable($0.value, kind) }
        self.entries.sort(by: Self.entryOrder)
    }

    private static func entryOrder(_ a: (value: StoreValue, key: Int64), _ b: (value: StoreValue, key: Int64)) -> Bool {
        less(a.value, b.value) || (!less(b.value, a.value) && a.key < b.key)
    }

    /// The most changes kept beside the sorted entries (Formats/binary-store.md §7.1): 4,096,
    /// or an eighth of the entries when that is more.
    private var foldThreshold: Int { max(4_096, entries.count / 8) }

    /// Brings the index up to date with a save: `changes` gives each saved key's new value of
    /// the attribute (`.null` for a deleted object or a value the index leaves out).
    ///
    /// Complexity: O(changes), plus O(n + changes log changes) when the changes are folded in.
    /// In place when the caller holds the only copy (the store mutates it in its table).
    mutating func apply(_ changes: [(key: Int64, value: StoreValue)]) {
        for change in changes { changed[change.key] = change.value }
        if changed.count > foldThreshold { fold() }
    }

    /// Merges `changed` into the sorted entries.
    private mutating func fold() {
        var added: [(value: StoreValue, key: Int64)] = []
        for (key, value) in changed where Self.orderable(value, kind) { added.append((value, key)) }
        added.sort(by: Self.entryOrder)
        var merged: [(value: StoreValue, key: Int64)] = []
        merged.reserveCapacity(entries.count + added.count)
        var next = 0
        for entry in entries where changed[entry.key] == nil {
            while next < added.count, Self.entryOrder(added[next], entry) {
                merged.append(added[next])
                next += 1
            }
            merged.append(entry)
        }
        merged.append(contentsOf: added[next...])
        entries = merged
        changed = [:]
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
        // The same test on one value, for the keys saved since the entries were sorted.
        let test: (StoreValue) -> Bool
        switch type {
        case .equalTo:
            guard let bound = bound(constant) else { return nil }
            range = lowerBound(bound)..<upperBound(bound)
            test = { !Self.less($0, bound) && !Self.less(bound, $0) }
        case .lessThan:
            guard let bound = bound(constant) else { return nil }
            range = 0..<lowerBound(bound)
            test = { Self.less($0, bound) }
        case .lessThanOrEqualTo:
            guard let bound = bound(constant) else { return nil }
            range = 0..<upperBound(bound)
            test = { !Self.less(bound, $0) }
        case .greaterThan:
            guard let bound = bound(constant) else { return nil }
            range = upperBound(bound)..<entries.count
            test = { Self.less(bound, $0) }
        case .greaterThanOrEqualTo:
            guard let bound = bound(constant) else { return nil }
            range = lowerBound(bound)..<entries.count
            test = { !Self.less($0, bound) }
        case .between:
            guard let pair = constant as? [Any?], pair.count == 2, let low = bound(pair[0]), let high = bound(pair[1]) else { return nil }
            let start = lowerBound(low), end = upperBound(high)
            range = start..<max(start, end)
            test = { !Self.less($0, low) && !Self.less(high, $0) }
        default:
            return nil
        }
        guard !changed.isEmpty else { return entries[range].map(\.key) }
        var keys: [Int64] = []
        keys.reserveCapacity(range.count)
        for entry in entries[range] where changed[entry.key] == nil { keys.append(entry.key) }
        for (key, value) in changed where Self.orderable(value, kind) && test(value) { keys.append(key) }
        return keys
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

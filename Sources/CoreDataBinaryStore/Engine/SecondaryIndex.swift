import CoreDataBinaryFormat
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
/// Read from the file (§7.2) or built from the records the first time a fetch can use it, then
/// kept current by the saves of this handle (``apply(_:)``); a change it cannot see the values
/// of (another process's save) drops it, and the next fetch reads or builds it again. A
/// checkpoint writes it to the file.
///
/// Threading: a value; the store swaps it under its lock, and a fetch reads its own copy.
struct SecondaryIndex: Sendable {
    /// The kinds of value an index orders; a constant of another kind does not use the index.
    typealias Kind = SecondaryIndexKind
    typealias Entry = SecondaryIndexCodec.Entry

    let kind: Kind
    /// The pages in the file (read from them or written by a checkpoint), and the entry each
    /// starts at, in the sorted entries as they were before ``sincePages``. A checkpoint lists
    /// again every one of them a change did not reach.
    private(set) var pages: SecondaryIndexPages?
    /// The folds since ``pages`` as one edit, from the pages' entries to the sorted entries; nil
    /// when none.
    private var sincePages: SecondaryEntries.Edit?
    /// Whether no change arrived since ``pages``: the index is exactly its pages.
    private(set) var matchesPages = false
    /// Sorted by value, then key; an entry whose key is in `changed` is out of date.
    private var entries: SecondaryEntries
    /// The value of every key saved or deleted since `entries` was sorted (`.null` when deleted):
    /// a save costs O(changes), not a re-sort. Folded into `entries` once it outgrows
    /// ``foldThreshold``, so a fetch's linear look at it stays small beside the index's range.
    private var changed: [Int64: StoreValue] = [:]

    init(kind: Kind, entries: [(value: StoreValue, key: Int64)]) {
        self.kind = kind
        var orderable = entries.filter { Self.orderable($0.value, kind) }
        orderable.sort(by: Self.entryOrder)
        self.entries = SecondaryEntries(kind: kind, sorted: orderable)
    }

    /// An index of entries already checked to be of `kind` and in index order (a persisted
    /// index's pages, §7.2).
    init(kind: Kind, sortedEntries: SecondaryEntries, pages: SecondaryIndexPages?) {
        self.kind = kind
        self.entries = sortedEntries
        self.pages = pages
        matchesPages = pages != nil
    }

    /// Notes that a checkpoint wrote the index as `pages`; the changes must be folded in.
    mutating func wrote(_ pages: SecondaryIndexPages) {
        precondition(changed.isEmpty, "SecondaryIndex.wrote(_:) before the changes were folded in")
        self.pages = pages
        sincePages = nil
        matchesPages = true
    }

    private static func entryOrder(_ a: Entry, _ b: Entry) -> Bool { SecondaryIndexOrder.entryLess(a, b) }

    /// Every entry, in index order, with the changes folded in (folded in place, which changes
    /// no answer), and how the entries before the changes became them: what a checkpoint writes,
    /// listing again the pages of ``pages`` the edit leaves whole.
    mutating func folded() -> (entries: SecondaryEntries, edit: SecondaryEntries.Edit) {
        if !changed.isEmpty { fold() }
        return (entries, sincePages ?? .none(entries.count))
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
        guard !changes.isEmpty else { return }
        matchesPages = false
        for change in changes { changed[change.key] = change.value }
        if changed.count > foldThreshold { fold() }
    }

    /// Merges `changed` into the sorted entries. Most entries are of keys nobody changed: a bit
    /// test tells (a hash lookup per entry was half of a checkpoint's fold), and the runs between
    /// changes copy as memory (``SecondaryEntries``).
    /// The edit is kept (composed with earlier ones) while the index has pages, so that a
    /// checkpoint after several folds still lists again the pages none of them reached.
    private mutating func fold() {
        var added: [Entry] = []
        for (key, value) in changed where Self.orderable(value, kind) { added.append((value, key)) }
        added.sort(by: Self.entryOrder)
        let (merged, edit) = entries.merging(removing: KeyFilter(changed.keys), adding: added)
        entries = merged
        changed = [:]
        if pages != nil { sincePages = sincePages.map { $0.then(edit) } ?? edit }
        matchesPages = false
    }

    /// The kind of index an attribute of `type` gets; nil for a type without an order.
    static func kind(of type: NSAttributeType) -> Kind? {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType: return .integer
        case .doubleAttributeType, .floatAttributeType: return .double
        case .dateAttributeType: return .date
        case .stringAttributeType: return .string
        default: return nil
        }
    }

    private static func orderable(_ value: StoreValue, _ kind: Kind) -> Bool { SecondaryIndexOrder.holds(value, kind) }

    /// The order comparisons mean (§7.1), shared with the pages' codec.
    private static func less(_ a: StoreValue, _ b: StoreValue) -> Bool { SecondaryIndexOrder.less(a, b) }

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
        guard !changed.isEmpty else { return Array(entries.keys[range]) }
        var keys: [Int64] = []
        keys.reserveCapacity(range.count)
        for key in entries.keys[range] where changed[key] == nil { keys.append(key) }
        for (key, value) in changed where Self.orderable(value, kind) && test(value) { keys.append(key) }
        return keys
    }

    /// The first entry not less than `value`.
    private func lowerBound(_ value: StoreValue) -> Int { entries.boundary(of: value, after: false) }

    /// The first entry greater than `value`.
    private func upperBound(_ value: StoreValue) -> Int { entries.boundary(of: value, after: true) }
}

/// Where an index's entries are in the file (Formats/binary-store.md §7.2): its directory
/// listing and, per listed page, the position of the page's first entry in the sorted entries.
struct SecondaryIndexPages: Sendable, Equatable {
    var listing: SecondaryIndexListing
    var starts: [Int]
}

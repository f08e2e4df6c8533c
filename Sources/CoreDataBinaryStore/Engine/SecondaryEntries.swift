import CoreDataBinaryFormat
import CoreDataStorage
import Foundation

/// A secondary index's entries in index order (Formats/binary-store.md §7.1), stored by kind: the
/// keys in one array and the values in another of their own Swift type (dates as their seconds).
///
/// Why by kind: a checkpoint's fold copies every unchanged entry. Copied as `StoreValue`s, each
/// went through the enum's value witness (17–19 ms for a million); as `[Int64]` or `[Double]`
/// runs they copy as memory. It also halves a numeric index's memory (16 bytes an entry, not 32).
///
/// Threading: a value (copy on write).
struct SecondaryEntries: Sendable {
    typealias Entry = SecondaryIndexCodec.Entry

    enum Values: Sendable {
        case integers([Int64])
        /// Doubles, or dates as `timeIntervalSinceReferenceDate`.
        case doubles([Double])
        case strings([String])
    }

    let kind: SecondaryIndexKind
    private(set) var keys: [Int64] = []
    private(set) var values: Values

    /// No entries.
    init(kind: SecondaryIndexKind) {
        self.kind = kind
        switch kind {
        case .integer: values = .integers([])
        case .double, .date: values = .doubles([])
        case .string: values = .strings([])
        }
    }

    /// `entries`, which must be of `kind` (``SecondaryIndexOrder/holds(_:_:)``) and in index order.
    init<C: Collection>(kind: SecondaryIndexKind, sorted entries: C) where C.Element == Entry {
        self.init(kind: kind)
        reserveCapacity(entries.count)
        append(contentsOf: entries)
    }

    var count: Int { keys.count }
    var isEmpty: Bool { keys.isEmpty }

    mutating func reserveCapacity(_ capacity: Int) {
        keys.reserveCapacity(capacity)
        switch values {
        case .integers(var array):
            values = .integers([])
            array.reserveCapacity(capacity)
            values = .integers(array)
        case .doubles(var array):
            values = .doubles([])
            array.reserveCapacity(capacity)
            values = .doubles(array)
        case .strings(var array):
            values = .strings([])
            array.reserveCapacity(capacity)
            values = .strings(array)
        }
    }

    /// The value of the entry at `position`, as the store hands values around.
    func value(at position: Int) -> StoreValue {
        switch values {
        case .integers(let array): return .integer(array[position])
        case .doubles(let array): return kind == .date ? .date(Date(timeIntervalSinceReferenceDate: array[position])) : .double(array[position])
        case .strings(let array): return .string(array[position])
        }
    }

    subscript(position: Int) -> Entry { (value(at: position), keys[position]) }

    /// The entries at `range`, for a page's encoder.
    func entries(_ range: Range<Int>) -> [Entry] { range.map { self[$0] } }

    /// Bytes the entry at `position` takes in a page (§7.2).
    func encodedBytes(at position: Int) -> Int {
        guard case .strings(let array) = values else { return 16 }
        return SecondaryIndexCodec.entryBytes(.string(array[position]))
    }

    /// Appends entries of this kind, in index order, after every entry.
    mutating func append<C: Collection>(contentsOf entries: C) where C.Element == Entry {
        keys.append(contentsOf: entries.lazy.map(\.key))
        // Moved out and back, so the array is not shared while it grows.
        switch values {
        case .integers(var array):
            values = .integers([])
            for entry in entries { array.append(Self.integer(entry.value)) }
            values = .integers(array)
        case .doubles(var array):
            values = .doubles([])
            for entry in entries { array.append(Self.double(entry.value)) }
            values = .doubles(array)
        case .strings(var array):
            values = .strings([])
            for entry in entries { array.append(Self.string(entry.value)) }
            values = .strings(array)
        }
    }

    private static func integer(_ value: StoreValue) -> Int64 {
        guard case .integer(let v) = value else { preconditionFailure("CoreData: an integer secondary index was given \(value)") }
        return v
    }

    private static func double(_ value: StoreValue) -> Double {
        switch value {
        case .double(let v): return v
        case .date(let v): return v.timeIntervalSinceReferenceDate
        default: preconditionFailure("CoreData: a double or date secondary index was given \(value)")
        }
    }

    private static func string(_ value: StoreValue) -> String {
        guard case .string(let v) = value else { preconditionFailure("CoreData: a string secondary index was given \(value)") }
        return v
    }

    /// The first position whose entry does not sort before `value` (or, `after`, the first
    /// whose entry sorts after it), by value alone.
    func boundary(of value: StoreValue, after: Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            let goesLeft = after ? SecondaryIndexOrder.less(value, self.value(at: mid)) : !SecondaryIndexOrder.less(self.value(at: mid), value)
            if goesLeft { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// The first position at or after `from` whose entry does not sort before `entry`.
    func lowerBound(of entry: Entry, from: Int = 0) -> Int {
        var low = from, high = count
        while low < high {
            let mid = low + (high - low) / 2
            if SecondaryIndexOrder.entryLess(self[mid], entry) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// How a merge made new entries of old ones: the old positions it dropped and, per added
    /// entry, the old position it went in before; both increasing. A run of old entries with no
    /// drop in it and no insertion inside it is a run of the new entries too, moved by the
    /// insertions before it less the drops: what lets a checkpoint list a page again without
    /// comparing its entries (``SecondaryPageLayout``).
    struct Edit: Sendable, Equatable {
        var oldCount: Int
        var dropped: [Int] = []
        var insertions: [Int] = []

        /// No change to `count` entries.
        static func none(_ count: Int) -> Edit { Edit(oldCount: count) }

        /// This edit followed by `next` (an edit of the entries this one made): what was dropped
        /// and inserted, in this edit's old positions. An entry this edit inserted and `next`
        /// dropped leaves no trace.
        ///
        /// Complexity: O(n) for the n entries between the two, plus the edits' changes.
        func then(_ next: Edit) -> Edit {
            // Where each entry between the two came from: an old position, or -(p + 1) for one
            // inserted before old position p.
            var origin: [Int] = []
            origin.reserveCapacity(next.oldCount)
            var nextDrop = 0
            var nextInsert = 0
            for position in 0...oldCount {
                while nextInsert < insertions.count, insertions[nextInsert] == position {
                    origin.append(-(position + 1))
                    nextInsert += 1
                }
                guard position < oldCount else { break }
                if nextDrop < dropped.count, dropped[nextDrop] == position {
                    nextDrop += 1
                } else {
                    origin.append(position)
                }
            }
            precondition(origin.count == next.oldCount, "CoreData: secondary-index edits composed out of order")
            var composed = Edit(oldCount: oldCount)
            var droppedNext = Set<Int>()
            var laterDrops: [Int] = []
            for position in next.dropped {
                droppedNext.insert(position)
                if origin[position] >= 0 { laterDrops.append(origin[position]) }
            }
            composed.dropped = (dropped + laterDrops).sorted()
            var inserted: [Int] = []
            for (position, from) in origin.enumerated() where from < 0 && !droppedNext.contains(position) { inserted.append(-from - 1) }
            for position in next.insertions {
                if position == origin.count {
                    inserted.append(oldCount)
                } else {
                    let from = origin[position]
                    inserted.append(from >= 0 ? from : -from - 1)
                }
            }
            composed.insertions = inserted.sorted()
            return composed
        }
    }

    /// These entries without those whose key `removed` holds, and with `added` (of this kind,
    /// in index order) in their places; and how the one became the other.
    ///
    /// Complexity: O(n) key tests, the unchanged runs copied whole, plus O(a log n) for a
    /// entries added.
    func merging(removing removed: KeyFilter, adding added: [Entry]) -> (entries: SecondaryEntries, edit: Edit) {
        var edit = Edit(oldCount: count)
        edit.insertions.reserveCapacity(added.count)
        var from = 0
        for entry in added {
            from = lowerBound(of: entry, from: from)
            edit.insertions.append(from)
        }
        if !removed.isEmpty {
            for (position, key) in keys.enumerated() where removed.contains(key) { edit.dropped.append(position) }
        }
        let (dropped, insertions) = (edit.dropped, edit.insertions)
        var result = SecondaryEntries(kind: kind)
        result.reserveCapacity(count - dropped.count + added.count)
        switch (values, result.values) {
        case (.integers(let old), .integers(var new)):
            result.values = .integers([])
            Self.merge(old, keys, dropped, insertions, added, into: &new, &result.keys, Self.integer)
            result.values = .integers(new)
        case (.doubles(let old), .doubles(var new)):
            result.values = .doubles([])
            Self.merge(old, keys, dropped, insertions, added, into: &new, &result.keys, Self.double)
            result.values = .doubles(new)
        case (.strings(let old), .strings(var new)):
            result.values = .strings([])
            Self.merge(old, keys, dropped, insertions, added, into: &new, &result.keys, Self.string)
            result.values = .strings(new)
        default:
            preconditionFailure("CoreData: a secondary index's values changed kind")
        }
        return (result, edit)
    }

    /// The merge of ``merging(removing:adding:)`` over one kind's arrays: runs between the
    /// dropped and inserted positions are appended as slices.
    private static func merge<T>(
        _ old: [T], _ oldKeys: [Int64], _ dropped: [Int], _ insertions: [Int], _ added: [Entry],
        into values: inout [T], _ keys: inout [Int64], _ convert: (StoreValue) -> T
    ) {
        var position = 0
        var nextDrop = 0
        var nextAdd = 0
        while position < old.count || nextAdd < added.count {
            // The next event: an insertion before the entry at its position, or a drop.
            let addAt = nextAdd < added.count ? insertions[nextAdd] : Int.max
            let dropAt = nextDrop < dropped.count ? dropped[nextDrop] : Int.max
            let end = min(addAt, dropAt, old.count)
            if end > position {
                values.append(contentsOf: old[position..<end])
                keys.append(contentsOf: oldKeys[position..<end])
                position = end
            }
            if addAt == position, nextAdd < added.count {
                values.append(convert(added[nextAdd].value))
                keys.append(added[nextAdd].key)
                nextAdd += 1
            } else if dropAt == position {
                position += 1
                nextDrop += 1
            } else if position == old.count, nextAdd >= added.count {
                break
            }
        }
    }
}

import Foundation

/// How to order objects by the value at a key path: `NSSortDescriptor(key: "name", ascending: true)`.
///
/// Values are read as predicates read them (see ``KeyValueReadable``). nil sorts before every
/// value in ascending order, as on Apple platforms. Values compare as predicate comparisons order
/// them (numbers by value, dates, UUIDs, …); strings with the descriptor's ``selector``. Values of
/// kinds that cannot be ordered against each other sort by kind: numbers, then strings, then dates,
/// then everything else (Apple raises instead).
///
/// Objective-C selectors do not exist on Linux: ``Selector`` is a small string-backed type with
/// Apple's spellings, so `selector: "localizedStandardCompare:"` or `selector: .localizedStandardCompare`
/// replaces Apple's `#selector(NSString.localizedStandardCompare(_:))`. An unknown selector name
/// compares like `compare:`.
///
/// Threading: immutable and `Sendable`; a descriptor made with a comparator is as thread-safe as
/// the comparator.
open class NSSortDescriptor: NSObject, @unchecked Sendable {
    /// A comparison method by its Objective-C selector name.
    public struct Selector: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The selector's name, with its colon: `"compare:"`.
        public let rawValue: String
        /// A selector by name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A selector by name, as in Apple's `Selector("compare:")`.
        public init(_ name: String) { self.rawValue = name }
        /// A selector written as a string literal: `selector: "caseInsensitiveCompare:"`.
        public init(stringLiteral value: String) { self.rawValue = value }
        /// The name.
        public var description: String { rawValue }

        /// `compare:`: the values' natural order; strings as `String.compare(_:)`.
        public static let compare: Selector = "compare:"
        /// `caseInsensitiveCompare:`.
        public static let caseInsensitiveCompare: Selector = "caseInsensitiveCompare:"
        /// `localizedCompare:`, in the current locale.
        public static let localizedCompare: Selector = "localizedCompare:"
        /// `localizedCaseInsensitiveCompare:`, in the current locale.
        public static let localizedCaseInsensitiveCompare: Selector = "localizedCaseInsensitiveCompare:"
        /// `localizedStandardCompare:`: the Finder's order ("file2" before "file10").
        public static let localizedStandardCompare: Selector = "localizedStandardCompare:"
    }

    private enum Reader {
        case key
        /// Reads the Swift key path; the outer nil means "not an object of the key path's root".
        case keyPath((Any) -> Any??)
    }

    private let storedKey: String?
    private let components: [String]
    private let isAscending: Bool
    private let storedSelector: Selector?
    private let storedComparator: Comparator?
    private let reader: Reader
    private let storedKeyPath: AnyKeyPath?

    private init(key: String?, ascending: Bool, selector: Selector?, comparator: Comparator?, reader: Reader, keyPath: AnyKeyPath?) {
        storedKey = key
        components = key.map(NSExpression.components(of:)) ?? []
        isAscending = ascending
        storedSelector = selector
        storedComparator = comparator
        self.reader = reader
        storedKeyPath = keyPath
        super.init()
    }

    /// Orders by the value at `key` (a key path; nil compares the objects themselves) with `compare:`.
    public convenience init(key: String?, ascending: Bool) {
        self.init(key: key, ascending: ascending, selector: .compare)
    }

    /// Orders by the value at `key` with the comparison method `selector` (`"localizedStandardCompare:"`).
    public convenience init(key: String?, ascending: Bool, selector: Selector?) {
        self.init(key: key, ascending: ascending, selector: selector ?? .compare, comparator: nil, reader: .key, keyPath: nil)
    }

    /// Orders by the value at `key` with `cmptr`, which receives only non-nil values (nil sorts first).
    public convenience init(key: String?, ascending: Bool, comparator cmptr: @escaping Comparator) {
        self.init(key: key, ascending: ascending, selector: nil, comparator: cmptr, reader: .key, keyPath: nil)
    }

    /// Orders by a Swift key path's value, read directly from objects of type `Root` (and by the
    /// key path's name, when it has one, from other objects such as dictionaries).
    public convenience init<Root, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool) {
        self.init(key: NSSortDescriptor.name(of: keyPath), ascending: ascending, selector: .compare, comparator: nil,
                  reader: .keyPath({ ($0 as? Root).map { $0[keyPath: keyPath] as Any? } }), keyPath: keyPath)
    }

    /// Orders by a Swift key path's value with `cmptr`.
    public convenience init<Root, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool, comparator cmptr: @escaping Comparator) {
        self.init(key: NSSortDescriptor.name(of: keyPath), ascending: ascending, selector: nil, comparator: cmptr,
                  reader: .keyPath({ ($0 as? Root).map { $0[keyPath: keyPath] as Any? } }), keyPath: keyPath)
    }

    /// `name` for `\Person.name`, `address.city` for `\Person.address.city`; nil when the key path
    /// has no printable name (computed properties print as `<computed 0x…>`).
    private static func name(of keyPath: AnyKeyPath) -> String? {
        let text = String(describing: keyPath)
        guard text.hasPrefix("\\"), !text.contains("<"), let dot = text.firstIndex(of: ".") else { return nil }
        let name = String(text[text.index(after: dot)...])
        return name.isEmpty ? nil : name
    }

    /// The key path values are read at; nil compares the objects themselves.
    open var key: String? { storedKey }
    /// Whether smaller values come first.
    open var ascending: Bool { isAscending }
    /// The comparison method; nil for descriptors made with a comparator.
    open var selector: Selector? { storedSelector }
    /// The Swift key path, for descriptors made with one.
    open var keyPath: AnyKeyPath? { storedKeyPath }

    /// The comparison applied to two values, ignoring ``ascending``.
    open var comparator: Comparator {
        if let storedComparator { return storedComparator }
        let selector = storedSelector ?? .compare
        return { NSSortDescriptor.compareValues($0, $1, selector: selector) }
    }

    /// Whether the descriptor reads its key by name and compares with a selector (no comparator,
    /// no Swift key path): what a store can reproduce from stored values alone.
    package var comparesStoredValuesBySelector: Bool {
        guard storedComparator == nil, case .key = reader else { return false }
        return true
    }

    /// The value this descriptor sorts `object` by.
    private func value(of object: Any) -> Any? {
        switch reader {
        case .keyPath(let read):
            if let value = read(object) { return ValueKinds.unwrap(value) }
            // Not a `Root`: read by the key path's name, if it has one.
            guard storedKey != nil else { return nil }
            return KeyPathReader.value(of: object, components: components[...])
        case .key:
            guard storedKey != nil else { return ValueKinds.unwrap(object) }
            return KeyPathReader.value(of: object, components: components[...])
        }
    }

    /// How `object1` orders against `object2` by this descriptor: their values at ``key``
    /// compared by ``selector`` or the comparator, reversed when not ``ascending``.
    open func compare(_ object1: Any, to object2: Any) -> ComparisonResult {
        let result: ComparisonResult
        switch (value(of: object1), value(of: object2)) {
        case (nil, nil): result = .orderedSame
        case (nil, _): result = .orderedAscending
        case (_, nil): result = .orderedDescending
        case let (a?, b?):
            if let storedComparator {
                result = storedComparator(a, b)
            } else {
                result = NSSortDescriptor.compareValues(a, b, selector: storedSelector ?? .compare)
            }
        }
        guard !isAscending else { return result }
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// The same ordering the other way round (Apple types it `Any`; it is an `NSSortDescriptor`).
    open var reversedSortDescriptor: Any {
        NSSortDescriptor(key: storedKey, ascending: !isAscending, selector: storedSelector, comparator: storedComparator,
                         reader: reader, keyPath: storedKeyPath)
    }

    /// Archived descriptors must be allowed before use on Apple platforms; no archiving here.
    open func allowEvaluation() {}

    package static func compareValues(_ a: Any, _ b: Any, selector: Selector) -> ComparisonResult {
        let a = ValueKinds.unwrap(a), b = ValueKinds.unwrap(b)
        switch (a, b) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        case let (a?, b?):
            if let x = ValueKinds.string(a), let y = ValueKinds.string(b) {
                switch selector {
                case .caseInsensitiveCompare: return x.caseInsensitiveCompare(y)
                case .localizedCompare: return x.localizedCompare(y)
                case .localizedCaseInsensitiveCompare: return x.localizedCaseInsensitiveCompare(y)
                case .localizedStandardCompare: return x.localizedStandardCompare(y)
                default: return x.compare(y)
                }
            }
            if let order = ValueComparison.order(a, b) { return order }
            let (rankA, rankB) = (rank(a), rank(b))
            return rankA < rankB ? .orderedAscending : (rankA > rankB ? .orderedDescending : .orderedSame)
        }
    }

    /// The order of kinds that cannot be compared with each other.
    private static func rank(_ value: Any) -> Int {
        if let number = Number(value) { return number.isNaN ? 1 : 0 }
        if ValueKinds.string(value) != nil { return 2 }
        if ValueKinds.date(value) != nil { return 3 }
        return 4
    }

    /// `(name, ascending, compare:)`, Apple's form.
    open override var description: String {
        "(\(storedKey ?? "SELF"), \(isAscending ? "ascending" : "descending"), \(storedSelector?.rawValue ?? "<comparator>"))"
    }

    /// Same key, direction and selector; descriptors with comparators are equal only to themselves.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSSortDescriptor else { return false }
        if other === self { return true }
        guard storedComparator == nil, other.storedComparator == nil else { return false }
        return storedKey == other.storedKey && isAscending == other.isAscending && storedSelector == other.storedSelector
            && storedKeyPath == other.storedKeyPath
    }

    /// Consistent with ``isEqual(_:)``.
    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(storedKey)
        hasher.combine(isAscending)
        hasher.combine(storedSelector)
        return hasher.finalize()
    }
}

extension NSSortDescriptor {
    /// `objects` ordered by `descriptors`: by the first, ties broken by the next, and so on; objects
    /// that tie on all keep their order (the sort is stable).
    ///
    /// Complexity: O(n log n) comparisons per descriptor.
    public static func sorted<Element>(_ objects: [Element], using descriptors: [NSSortDescriptor]) -> [Element] {
        objects.enumerated().sorted { lhs, rhs in
            for descriptor in descriptors {
                switch descriptor.compare(lhs.element, to: rhs.element) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return lhs.offset < rhs.offset
        }.map(\.element)
    }
}

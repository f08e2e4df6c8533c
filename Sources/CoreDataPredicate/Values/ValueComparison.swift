import Foundation

/// Equality and ordering of the values a predicate compares: the one place that decides when two
/// values are "the same", shared by the evaluator, sort descriptors and the structural equality of
/// constant expressions.
enum ValueComparison {
    /// Whether `a` equals `b` as `==` means it in a predicate.
    ///
    /// Numbers of any width and kind compare by value (`Int16(3) == 3.0`, `true == 1`, as NSNumber);
    /// strings compare literally (by Unicode scalars) unless `options` ask for case or diacritic
    /// folding; dates, UUIDs, URLs and Data by value; collections element by element (sets without
    /// regard to order); other Hashable values through `AnyHashable`; class instances that are not
    /// Hashable by identity. Values of unrelated kinds are unequal. nil (and NSNull) equals only nil.
    ///
    /// Complexity: O(1) for scalars; O(n) for ordered collections, O(n²) for sets of n elements.
    static func equal(_ a: Any?, _ b: Any?, options: NSComparisonPredicate.Options = []) -> Bool {
        equal(a, b, options: options, nanIsEqual: false)
    }

    /// Equality for `isEqual` of constant expressions: as ``equal(_:_:options:)`` but NaN equals NaN,
    /// so that a tree equals itself and its printed-and-parsed copy.
    static func structurallyEqual(_ a: Any?, _ b: Any?) -> Bool {
        equal(a, b, options: [], nanIsEqual: true)
    }

    private static func equal(_ a: Any?, _ b: Any?, options: NSComparisonPredicate.Options, nanIsEqual: Bool) -> Bool {
        guard let a = ValueKinds.unwrap(a) else { return ValueKinds.unwrap(b) == nil }
        guard let b = ValueKinds.unwrap(b) else { return false }
        if let x = Number(a), let y = Number(b) {
            if nanIsEqual, x.isNaN, y.isNaN { return true }
            return Number.compare(x, y) == .orderedSame
        }
        if let x = ValueKinds.string(a), let y = ValueKinds.string(b) {
            return StringMatching.equal(x, y, options: options)
        }
        if let x = ValueKinds.date(a), let y = ValueKinds.date(b) {
            let (s, t) = (x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
            return s == t || (nanIsEqual && s.isNaN && t.isNaN)
        }
        if let x = a as? UUID, let y = b as? UUID { return x == y }
        if let x = a as? URL, let y = b as? URL { return x == y }
        if let x = a as? Data, let y = b as? Data { return x == y }
        if let x = ValueKinds.collection(a), let y = ValueKinds.collection(b) {
            guard x.count == y.count else { return false }
            if ValueKinds.isUnordered(a) || ValueKinds.isUnordered(b) {
                return sameElementsIgnoringOrder(x, y, options: options, nanIsEqual: nanIsEqual)
            }
            return zip(x, y).allSatisfy { equal($0, $1, options: options, nanIsEqual: nanIsEqual) }
        }
        if let x = ValueKinds.dictionary(a), let y = ValueKinds.dictionary(b) {
            guard x.count == y.count else { return false }
            return x.allSatisfy { key, value in
                y[key].map { equal(value, $0, options: options, nanIsEqual: nanIsEqual) } ?? false
            }
        }
        if let x = a as? PredicateIdentifiable, let y = b as? PredicateIdentifiable {
            return x.predicateIdentity == y.predicateIdentity
        }
        if let x = a as? AnyHashable, let y = b as? AnyHashable { return x == y }
        if ValueKinds.isObject(a), ValueKinds.isObject(b) { return (a as AnyObject) === (b as AnyObject) }
        return false
    }

    /// Multiset equality: every element of `x` is matched by a distinct element of `y`.
    private static func sameElementsIgnoringOrder(
        _ x: [Any?], _ y: [Any?], options: NSComparisonPredicate.Options, nanIsEqual: Bool
    ) -> Bool {
        var unmatched = y
        for element in x {
            guard let index = unmatched.firstIndex(where: { equal(element, $0, options: options, nanIsEqual: nanIsEqual) })
            else { return false }
            unmatched.remove(at: index)
        }
        return true
    }

    /// How `a` orders against `b`, or nil when they cannot be ordered (nil, NaN, different kinds,
    /// kinds without an order). Numbers by value; strings by Unicode scalars after the folding that
    /// `options` ask for; dates; UUIDs by their bytes; URLs by their absolute strings; Data by bytes.
    static func order(_ a: Any?, _ b: Any?, options: NSComparisonPredicate.Options = []) -> ComparisonResult? {
        guard let a = ValueKinds.unwrap(a), let b = ValueKinds.unwrap(b) else { return nil }
        if let x = Number(a), let y = Number(b) { return Number.compare(x, y) }
        if let x = ValueKinds.string(a), let y = ValueKinds.string(b) {
            return StringMatching.compare(x, y, options: options)
        }
        if let x = ValueKinds.date(a), let y = ValueKinds.date(b) { return x.compare(y) }
        if let x = a as? UUID, let y = b as? UUID { return lexicographic(x.uuidString.utf8, y.uuidString.utf8) }
        if let x = a as? URL, let y = b as? URL { return lexicographic(x.absoluteString.utf8, y.absoluteString.utf8) }
        if let x = a as? Data, let y = b as? Data { return lexicographic(x, y) }
        return nil
    }

    static func lexicographic<C: Sequence>(_ x: C, _ y: C) -> ComparisonResult where C.Element: Comparable {
        var left = x.makeIterator()
        var right = y.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case let (l?, r?):
                if l < r { return .orderedAscending }
                if l > r { return .orderedDescending }
            }
        }
    }

    /// A hash consistent with ``structurallyEqual(_:_:)``: equal values hash alike (numbers by their
    /// Double value, collections only by count, because equal collections may differ in kind).
    static func hash(_ value: Any?, into hasher: inout Hasher) {
        guard let value = ValueKinds.unwrap(value) else {
            hasher.combine(0)
            return
        }
        if let number = Number(value) {
            let double = number.doubleValue
            hasher.combine(1)
            if !double.isNaN { hasher.combine(double) }
        } else if let string = ValueKinds.string(value) {
            hasher.combine(2)
            hasher.combine(string)
        } else if let date = ValueKinds.date(value) {
            hasher.combine(3)
            let seconds = date.timeIntervalSinceReferenceDate
            if !seconds.isNaN { hasher.combine(seconds) }
        } else if let uuid = value as? UUID {
            hasher.combine(uuid)
        } else if let url = value as? URL {
            hasher.combine(url)
        } else if let data = value as? Data {
            hasher.combine(data)
        } else if let collection = ValueKinds.collection(value) {
            hasher.combine(4)
            hasher.combine(collection.count)
        } else if let dictionary = ValueKinds.dictionary(value) {
            hasher.combine(5)
            hasher.combine(dictionary.count)
        } else if let identifiable = value as? PredicateIdentifiable {
            hasher.combine(identifiable.predicateIdentity)
        } else if let hashable = value as? AnyHashable {
            hasher.combine(hashable)
        } else if ValueKinds.isObject(value) {
            hasher.combine(ObjectIdentifier(value as AnyObject))
        } else {
            hasher.combine(6)
        }
    }
}

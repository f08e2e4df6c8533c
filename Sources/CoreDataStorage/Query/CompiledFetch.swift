import CoreDataModel
import CoreDataPredicate
import Foundation

// Foundation declares these names too; here they mean the working classes.
private typealias NSPredicate = CoreDataPredicate.NSPredicate
private typealias NSComparisonPredicate = CoreDataPredicate.NSComparisonPredicate
private typealias NSCompoundPredicate = CoreDataPredicate.NSCompoundPredicate
private typealias NSExpression = CoreDataPredicate.NSExpression
private typealias NSSortDescriptor = CoreDataPredicate.NSSortDescriptor

/// A fetch's predicate and sort compiled to closures over a few stored values, so a store can
/// answer it from the attribute values it decodes without building rows or key-value objects.
///
/// Only what reads plain attributes of the fetched object compiles: comparisons of an attribute
/// with a constant (every operator, every option), `AND`, `OR`, `NOT`, `TRUEPREDICATE` and
/// `FALSEPREDICATE`; sort descriptors on attributes with a selector. Anything else (relationship
/// key paths, functions, variables, blocks, comparators) makes ``compile(_:)`` return nil and the
/// store runs the reference ``StoreQuery`` instead.
///
/// Meaning: every comparison ends in the reference evaluator's own `compare` over the same Swift
/// values the reference path reads (``StoreValue/attributeValue(as:)``), except the two shortcuts
/// that give the same answer by construction (64-bit integers with integer constants, ASCII strings
/// compared by bytes when sorting). A differential test holds them together.
package struct CompiledFetch {
    /// The attribute names read, in slot order: slot `i` holds the value of `keys[i]`.
    package let keys: [String]
    /// Whether a row with these slot values matches; nil when there is no predicate.
    package let filter: ((borrowing [StoreValue]) -> Bool)?
    /// Orders two rows by the sort descriptors; nil when there are none. Ties are left to the
    /// caller (object-ID order).
    package let order: (([StoreValue], [StoreValue]) -> ComparisonResult)?
    /// Slots of an attribute compared with a constant in a top-level conjunct, for index use:
    /// `(key, operator, constant)`.
    package let conjuncts: [(key: String, type: CoreDataPredicate.NSComparisonPredicate.Operator, constant: Any?)]
    /// The predicate as integer tests a store may run on a record's raw integers before
    /// decoding it: every test must pass. Empty without a predicate; nil when the predicate is
    /// anything but a conjunction of integer attributes compared with integer constants. A
    /// value that is absent, not an integer, or out of its attribute's range (`fits`) must go
    /// through ``filter`` instead.
    package let integerTests: [IntegerTest]?
    /// The sort when it is one string attribute by `compare:`, which orders ASCII strings by
    /// their bytes: a store may compare a record's raw ASCII bytes to decide it sorts after
    /// another. Nil for any other sort.
    package let stringSort: (key: String, ascending: Bool)?

    /// One comparison of an integer attribute with an integer constant.
    package struct IntegerTest {
        package let key: String
        package let test: (Int64) -> Bool
        /// Whether a stored value reads back unchanged as the attribute's Swift type.
        package let fits: (Int64) -> Bool
    }

    /// Compiles `request`'s predicate and sort, or returns nil when either reads more than plain
    /// attributes of the fetched entity.
    package static func compile(_ request: StoreFetchRequest) -> CompiledFetch? {
        var builder = Builder(attributes: request.entity.attributesByName)
        var filter: ((borrowing [StoreValue]) -> Bool)?
        var conjuncts: [(key: String, type: NSComparisonPredicate.Operator, constant: Any?)] = []
        if let predicate = request.predicate {
            guard let compiled = builder.predicate(predicate) else { return nil }
            filter = compiled
            conjuncts = builder.topLevelComparisons(predicate)
        }
        var order: (([StoreValue], [StoreValue]) -> ComparisonResult)?
        if !request.sortDescriptors.isEmpty {
            guard let compiled = builder.sort(request.sortDescriptors) else { return nil }
            order = compiled
        }
        let integerTests = request.predicate.map(builder.integerConjunction) ?? []
        var stringSort: (key: String, ascending: Bool)?
        if request.sortDescriptors.count == 1, let descriptor = request.sortDescriptors.first, let key = descriptor.key,
           descriptor.comparesStoredValuesBySelector, (descriptor.selector ?? .compare) == .compare,
           request.entity.attributesByName[key]?.attributeType == .stringAttributeType {
            stringSort = (key, descriptor.ascending)
        }
        return CompiledFetch(
            keys: builder.keys, filter: filter, order: order, conjuncts: conjuncts, integerTests: integerTests, stringSort: stringSort)
    }

    /// Byte order of two UTF-8 strings when both are ASCII (what `compare:` gives for them), or
    /// nil when either has a non-ASCII byte: a store may order raw record bytes with it.
    package static func asciiOrder(_ p: UnsafeBufferPointer<UInt8>, _ q: UnsafeBufferPointer<UInt8>) -> ComparisonResult? {
        let n = min(p.count, q.count)
        for i in 0..<n {
            let (u, v) = (p[i], q[i])
            if u >= 0x80 || v >= 0x80 { return nil }
            if u != v { return u < v ? .orderedAscending : .orderedDescending }
        }
        for i in n..<p.count where p[i] >= 0x80 { return nil }
        for i in n..<q.count where q[i] >= 0x80 { return nil }
        return p.count == q.count ? .orderedSame : (p.count < q.count ? .orderedAscending : .orderedDescending)
    }

    /// The slot values of `row`, for stores that hold rows (and for tests).
    package func slots(of row: StoreRow) -> [StoreValue] { keys.map { row[$0] } }

    /// A constant read from a predicate; `value` may itself be nil.
    private struct Constant {
        let value: Any?
    }

    private struct Builder {
        let attributes: [String: NSAttributeDescription]
        var keys: [String] = []

        init(attributes: [String: NSAttributeDescription]) { self.attributes = attributes }

        mutating func slot(_ key: String) -> Int {
            if let index = keys.firstIndex(of: key) { return index }
            keys.append(key)
            return keys.count - 1
        }

        /// The attribute a plain key-path expression reads, or nil.
        func attribute(of expression: NSExpression) -> NSAttributeDescription? {
            guard expression.expressionType == .keyPath, expression.operand.expressionType == .evaluatedObject else { return nil }
            let path = expression.keyPath
            guard !path.contains("."), !path.hasPrefix("@"), let attribute = attributes[path] else { return nil }
            // Transformable values are opaque to the store; their comparisons stay in memory.
            guard attribute.attributeType != .transformableAttributeType, attribute.attributeType != .objectIDAttributeType else { return nil }
            return attribute
        }

        mutating func predicate(_ predicate: NSPredicate) -> ((borrowing [StoreValue]) -> Bool)? {
            if let truth = predicate.constantTruth { return { _ in truth } }
            if let compound = predicate as? NSCompoundPredicate {
                var parts: [(borrowing [StoreValue]) -> Bool] = []
                for sub in compound.subpredicates {
                    guard let part = self.predicate(sub) else { return nil }
                    parts.append(part)
                }
                switch compound.compoundPredicateType {
                case .and:
                    if parts.count == 2 {
                        let (a, b) = (parts[0], parts[1])
                        return { a($0) && b($0) }
                    }
                    return { values in parts.allSatisfy { $0(values) } }
                case .or: return { values in parts.contains { $0(values) } }
                case .not:
                    guard parts.count == 1 else { return nil }
                    let inner = parts[0]
                    return { !inner($0) }
                }
            }
            guard let comparison = predicate as? NSComparisonPredicate, comparison.comparisonPredicateModifier == .direct,
                  comparison.predicateOperatorType != .customSelector else { return nil }
            let left = comparison.leftExpression, right = comparison.rightExpression
            let type = comparison.predicateOperatorType, options = comparison.options
            if let attribute = attribute(of: left), let constant = Self.constant(right) {
                return compare(slot: slot(attribute.name), attribute.attributeType, type, constant.value, options, attributeOnLeft: true)
            }
            if let attribute = attribute(of: right), let constant = Self.constant(left) {
                return compare(slot: slot(attribute.name), attribute.attributeType, type, constant.value, options, attributeOnLeft: false)
            }
            return nil
        }

        /// The value of a constant expression, or of an aggregate of constants (`{1, 2}`) as the
        /// evaluator produces it (`[Any?]`); nil when the expression is anything else.
        static func constant(_ expression: NSExpression) -> Constant? {
            switch expression.expressionType {
            case .constantValue: return Constant(value: expression.storedConstantValue)
            case .aggregate:
                guard let items = expression.collection as? [NSExpression],
                      items.allSatisfy({ $0.expressionType == .constantValue }) else { return nil }
                let values: [Any?] = items.map { $0.storedConstantValue }
                return Constant(value: values)
            default: return nil
            }
        }

        func compare(
            slot: Int, _ attributeType: NSAttributeType, _ type: NSComparisonPredicate.Operator, _ constant: Any?,
            _ options: NSComparisonPredicate.Options, attributeOnLeft: Bool
        ) -> (borrowing [StoreValue]) -> Bool {
            // Integers against an integer constant: the evaluator compares them by value, as here.
            if attributeOnLeft, options.isEmpty, let bound = Self.exactInteger(constant),
               let fits = Self.integerRange(attributeType), let test = Self.integerTest(type, bound) {
                return { values in
                    guard case .integer(let v) = values[slot], fits(v) else {
                        return PredicateEvaluator.compare(values[slot].attributeValue(as: attributeType), type, constant, options: options)
                    }
                    return test(v)
                }
            }
            if attributeOnLeft {
                return { values in PredicateEvaluator.compare(values[slot].attributeValue(as: attributeType), type, constant, options: options) }
            }
            return { values in PredicateEvaluator.compare(constant, type, values[slot].attributeValue(as: attributeType), options: options) }
        }

        /// Whether a stored integer reads back unchanged as the attribute's Swift type (the
        /// reference path narrows 16- and 32-bit values), for integer attributes only.
        static func integerRange(_ type: NSAttributeType) -> ((Int64) -> Bool)? {
            switch type {
            case .integer64AttributeType: return { _ in true }
            case .integer32AttributeType: return { Int64(Int32(truncatingIfNeeded: $0)) == $0 }
            case .integer16AttributeType: return { Int64(Int16(truncatingIfNeeded: $0)) == $0 }
            default: return nil
            }
        }

        /// An integer constant that converts to Int64 exactly (not Bool, not a fraction).
        static func exactInteger(_ value: Any?) -> Int64? {
            switch value {
            case let v as Int: return Int64(v)
            case let v as Int64: return v
            case let v as Int32: return Int64(v)
            case let v as Int16: return Int64(v)
            case let v as Int8: return Int64(v)
            default: return nil
            }
        }

        static func integerTest(_ type: NSComparisonPredicate.Operator, _ bound: Int64) -> ((Int64) -> Bool)? {
            switch type {
            case .equalTo: return { $0 == bound }
            case .notEqualTo: return { $0 != bound }
            case .lessThan: return { $0 < bound }
            case .lessThanOrEqualTo: return { $0 <= bound }
            case .greaterThan: return { $0 > bound }
            case .greaterThanOrEqualTo: return { $0 >= bound }
            default: return nil
            }
        }

        /// The predicate as integer tests (``CompiledFetch/integerTests``), or nil.
        func integerConjunction(_ predicate: NSPredicate) -> [IntegerTest]? {
            if let compound = predicate as? NSCompoundPredicate {
                guard compound.compoundPredicateType == .and, !compound.subpredicates.isEmpty else { return nil }
                var tests: [IntegerTest] = []
                for sub in compound.subpredicates {
                    guard let more = integerConjunction(sub) else { return nil }
                    tests += more
                }
                return tests
            }
            guard let (attribute, type, constant) = plainComparison(predicate), let bound = Self.exactInteger(constant.value),
                  let fits = Self.integerRange(attribute.attributeType), let test = Self.integerTest(type, bound)
            else { return nil }
            return [IntegerTest(key: attribute.name, test: test, fits: fits)]
        }

        /// `attribute OP constant` with no modifier and no options, the attribute on the left.
        func plainComparison(_ predicate: NSPredicate) -> (NSAttributeDescription, NSComparisonPredicate.Operator, Constant)? {
            guard let comparison = predicate as? NSComparisonPredicate, comparison.comparisonPredicateModifier == .direct,
                  comparison.options.isEmpty, let attribute = attribute(of: comparison.leftExpression),
                  let constant = Self.constant(comparison.rightExpression) else { return nil }
            return (attribute, comparison.predicateOperatorType, constant)
        }

        /// The comparisons an index can answer: top-level conjuncts of `attribute OP constant`.
        func topLevelComparisons(_ predicate: NSPredicate) -> [(key: String, type: NSComparisonPredicate.Operator, constant: Any?)] {
            if let compound = predicate as? NSCompoundPredicate {
                guard compound.compoundPredicateType == .and else { return [] }
                return compound.subpredicates.flatMap(topLevelComparisons)
            }
            guard let (attribute, type, constant) = plainComparison(predicate) else { return [] }
            return [(attribute.name, type, constant.value)]
        }

        mutating func sort(_ descriptors: [NSSortDescriptor]) -> (([StoreValue], [StoreValue]) -> ComparisonResult)? {
            var parts: [(slot: Int, type: NSAttributeType, ascending: Bool, selector: NSSortDescriptor.Selector)] = []
            for descriptor in descriptors {
                guard descriptor.comparesStoredValuesBySelector, let key = descriptor.key, !key.contains("."),
                      let attribute = attributes[key], attribute.attributeType != .transformableAttributeType else { return nil }
                parts.append((slot(key), attribute.attributeType, descriptor.ascending, descriptor.selector ?? .compare))
            }
            return { lhs, rhs in
                for part in parts {
                    let result = Self.order(lhs[part.slot], rhs[part.slot], part.type, part.selector)
                    if result == .orderedSame { continue }
                    if part.ascending { return result }
                    return result == .orderedAscending ? .orderedDescending : .orderedAscending
                }
                return .orderedSame
            }
        }

        /// As `NSSortDescriptor.compare` orders two stored values: nil first, then by selector.
        static func order(_ a: StoreValue, _ b: StoreValue, _ type: NSAttributeType, _ selector: NSSortDescriptor.Selector) -> ComparisonResult {
            switch (a, b) {
            case (.null, .null): return .orderedSame
            case (.null, _): return .orderedAscending
            case (_, .null): return .orderedDescending
            case (.integer(let x), .integer(let y)) where type != .booleanAttributeType && type != .integer16AttributeType && type != .integer32AttributeType:
                return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
            case (.string(let x), .string(let y)) where selector == .compare:
                if let result = asciiOrder(x, y) { return result }
            default:
                break
            }
            guard let x = a.attributeValue(as: type), let y = b.attributeValue(as: type) else { return .orderedSame }
            return NSSortDescriptor.compareValues(x, y, selector: selector)
        }

        /// Byte order of two ASCII strings (what `compare:` gives for them), or nil when either
        /// has a non-ASCII character.
        static func asciiOrder(_ x: String, _ y: String) -> ComparisonResult? {
            var a = x, b = y
            return a.withUTF8 { p in b.withUTF8 { q in CompiledFetch.asciiOrder(p, q) } }
        }
    }
}

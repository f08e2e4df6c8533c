import Foundation

/// The reference evaluator: what every predicate means. Stores without an index for a predicate
/// call it on each candidate; stores that translate predicates must give the same answers.
///
/// Never traps. Values of kinds an operator cannot compare make that comparison false (`!=` is the
/// negation of `==`, so it is true); nil compares equal only to nil and is never ordered.
package enum PredicateEvaluator {
    static func evaluate(_ predicate: NSPredicate, in context: EvaluationContext) -> Bool {
        switch predicate.node {
        case .constant(let value):
            return value
        case .block(let block):
            return block(context.object, context.variables)
        case .compound(.and, let subpredicates):
            return subpredicates.allSatisfy { evaluate($0, in: context) }
        case .compound(.or, let subpredicates):
            return subpredicates.contains { evaluate($0, in: context) }
        case .compound(.not, let subpredicates):
            return !subpredicates.allSatisfy { evaluate($0, in: context) }
        case .comparison(let comparison):
            return evaluate(comparison, of: predicate, in: context)
        }
    }

    private static func evaluate(_ comparison: NSPredicate.Comparison, of predicate: NSPredicate, in context: EvaluationContext) -> Bool {
        let left = ExpressionEvaluator.value(of: comparison.left, in: context)
        let right = ExpressionEvaluator.value(of: comparison.right, in: context)
        let type = comparison.type
        let options = comparison.options
        func decide(_ left: Any?) -> Bool {
            guard let failures = context.failures else { return compare(left, type, right, options: options) }
            switch checkedCompare(left, type, right, options: options) {
            case .success(let result):
                return result
            case .failure(let failure):
                failures.record(failure.message, in: Printer.format(predicate))
                return false
            }
        }
        switch comparison.modifier {
        case .direct:
            return decide(left)
        case .any:
            return elements(of: left).contains { decide($0) }
        case .all:
            return elements(of: left).allSatisfy { decide($0) }
        }
    }

    /// ``compare(_:_:_:options:)``, or why Apple's Foundation would raise instead of answering.
    private static func checkedCompare(
        _ left: Any?, _ type: NSComparisonPredicate.Operator, _ right: Any?, options: NSComparisonPredicate.Options
    ) -> Result<Bool, EvaluationFailure> {
        switch type {
        case .utiEquals, .utiConformsTo:
            return UniformTypeIdentifiers.compare(left, type, right)
        case .customSelector:
            return .failure(EvaluationFailure(message: "a comparison by custom selector needs Objective-C messaging, which Linux does not have"))
        default:
            return .success(compare(left, type, right, options: options))
        }
    }

    /// The elements ANY and ALL range over: a collection's or dictionary's values, nothing for nil,
    /// the value itself otherwise.
    private static func elements(of value: Any?) -> [Any?] {
        guard let value = ValueKinds.unwrap(value) else { return [] }
        if let collection = ValueKinds.collection(value) { return collection }
        if let dictionary = ValueKinds.dictionary(value) { return Array(dictionary.values) }
        return [value]
    }

    /// One comparison of two values. Stores that compile predicates call it so that their fast
    /// paths mean exactly what the evaluator means.
    package static func compare(
        _ left: Any?, _ type: NSComparisonPredicate.Operator, _ right: Any?, options: NSComparisonPredicate.Options
    ) -> Bool {
        switch type {
        case .equalTo:
            return ValueComparison.equal(left, right, options: options)
        case .notEqualTo:
            return !ValueComparison.equal(left, right, options: options)
        case .lessThan:
            return ValueComparison.order(left, right, options: options) == .orderedAscending
        case .lessThanOrEqualTo:
            let order = ValueComparison.order(left, right, options: options)
            return order == .orderedAscending || order == .orderedSame
        case .greaterThan:
            return ValueComparison.order(left, right, options: options) == .orderedDescending
        case .greaterThanOrEqualTo:
            let order = ValueComparison.order(left, right, options: options)
            return order == .orderedDescending || order == .orderedSame
        case .matches, .like, .beginsWith, .endsWith:
            guard let l = ValueKinds.unwrap(left).flatMap(ValueKinds.string),
                  let r = ValueKinds.unwrap(right).flatMap(ValueKinds.string) else { return false }
            switch type {
            case .matches: return StringMatching.matches(l, pattern: r, options: options)
            case .like: return StringMatching.like(l, pattern: r, options: options)
            case .beginsWith: return StringMatching.hasPrefix(l, r, options: options)
            default: return StringMatching.hasSuffix(l, r, options: options)
            }
        case .in:
            return contains(right, left, options: options)
        case .contains:
            return contains(left, right, options: options)
        case .between:
            guard let r = ValueKinds.unwrap(right), let bounds = ValueKinds.collection(r), bounds.count == 2 else { return false }
            let low = ValueComparison.order(left, bounds[0], options: options)
            let high = ValueComparison.order(left, bounds[1], options: options)
            return (low == .orderedDescending || low == .orderedSame) && (high == .orderedAscending || high == .orderedSame)
        case .customSelector:
            return false
        case .utiEquals, .utiConformsTo:
            // Unknown conformance is false here; the validating evaluator reports it.
            return (try? UniformTypeIdentifiers.compare(left, type, right).get()) ?? false
        }
    }

    /// Whether `container` (a collection, a dictionary's values, or a string) contains `element`
    /// (an equal element, or a substring).
    private static func contains(_ container: Any?, _ element: Any?, options: NSComparisonPredicate.Options) -> Bool {
        guard let container = ValueKinds.unwrap(container) else { return false }
        if let string = ValueKinds.string(container) {
            guard let needle = ValueKinds.unwrap(element).flatMap(ValueKinds.string) else { return false }
            return StringMatching.contains(string, needle, options: options)
        }
        if let collection = ValueKinds.collection(container) {
            return collection.contains { ValueComparison.equal($0, element, options: options) }
        }
        if let dictionary = ValueKinds.dictionary(container) {
            return dictionary.values.contains { ValueComparison.equal($0, element, options: options) }
        }
        return false
    }
}

import CoreDataPredicate
import Foundation

extension NSPropertyDescription {
    /// The predicates a value must satisfy to be saved: for an attribute, the model editor's rules
    /// (``NSAttributeDescription/validationRules``) as Apple writes them (`SELF >= 1`,
    /// `length <= 40`, `SELF MATCHES "…"`), then those set with
    /// ``setValidationPredicates(_:withValidationWarnings:)``.
    public var validationPredicates: [CoreDataPredicate.NSPredicate] {
        let fromRules = (self as? NSAttributeDescription)?.validationRules.map(\.predicate) ?? []
        return fromRules + customValidation.predicates
    }

    /// The messages reported when the matching ``validationPredicates`` fail.
    public var validationWarnings: [Any] {
        let fromRules = (self as? NSAttributeDescription)?.validationRules.map { "\($0)" as Any } ?? []
        return fromRules + customValidation.warnings
    }

    /// Only the predicates set with ``setValidationPredicates(_:withValidationWarnings:)``, and
    /// their warnings: what validation checks beyond the rules, without building the rules' predicates.
    package var customValidationPredicates: [CoreDataPredicate.NSPredicate] { customValidation.predicates }
    package var customValidationWarnings: [Any] { customValidation.warnings }

    /// Sets extra validation predicates with one warning message each.
    public func setValidationPredicates(_ validationPredicates: [CoreDataPredicate.NSPredicate]?, withValidationWarnings validationWarnings: [String]?) {
        checkEditable("validationPredicates")
        customValidation = CustomValidation(predicates: validationPredicates ?? [], warnings: validationWarnings ?? [])
    }
}

extension AttributeValidationRule {
    /// The rule as Apple's model editor expresses it, as a predicate over the value.
    public var predicate: CoreDataPredicate.NSPredicate {
        func compare(_ left: CoreDataPredicate.NSExpression, _ op: CoreDataPredicate.NSComparisonPredicate.Operator, _ right: Any) -> CoreDataPredicate.NSPredicate {
            CoreDataPredicate.NSComparisonPredicate(
                leftExpression: left, rightExpression: CoreDataPredicate.NSExpression(forConstantValue: right),
                modifier: .direct, type: op, options: [])
        }
        // Apple's model editor writes bounds as plain numbers; a whole bound prints as `SELF >= 0`.
        func number(_ decimal: Decimal) -> Any {
            let double = NSDecimalNumber(decimal: decimal).doubleValue
            if let whole = Int64(exactly: double), Decimal(whole) == decimal { return whole }
            return double
        }
        let value = CoreDataPredicate.NSExpression.expressionForEvaluatedObject()
        let length = CoreDataPredicate.NSExpression(forKeyPath: "length")
        switch self {
        case .minimumValue(let v): return compare(value, .greaterThanOrEqualTo, number(v))
        case .maximumValue(let v): return compare(value, .lessThanOrEqualTo, number(v))
        case .minimumLength(let v): return compare(length, .greaterThanOrEqualTo, v)
        case .maximumLength(let v): return compare(length, .lessThanOrEqualTo, v)
        case .earliestDate(let d): return compare(value, .greaterThanOrEqualTo, d)
        case .latestDate(let d): return compare(value, .lessThanOrEqualTo, d)
        case .regularExpression(let pattern): return compare(value, .matches, pattern)
        }
    }
}

/// Validation predicates set in code, kept beside the property.
struct CustomValidation {
    var predicates: [CoreDataPredicate.NSPredicate] = []
    var warnings: [Any] = []
}

import CoreDataPredicate
import Foundation

// `+`, `-`, `*`, `/`, `%` and unary `-` in a #Predicate, as NSExpression's arithmetic functions.

extension PredicateExpressions.Arithmetic: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        let function: String
        switch op {
        case .add: function = "add:to:"
        case .subtract: function = "from:subtract:"
        case .multiply: function = "multiply:by:"
        }
        return .expression(CoreDataPredicate.NSExpression(
            forFunction: function, arguments: [try lhs.translatedExpression(&state), try rhs.translatedExpression(&state)]))
    }
}

extension PredicateExpressions.FloatDivision: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .expression(CoreDataPredicate.NSExpression(
            forFunction: "divide:by:", arguments: [try lhs.translatedExpression(&state), try rhs.translatedExpression(&state)]))
    }
}

extension PredicateExpressions.IntDivision: PredicateTranslatable {
    /// Swift's integer division truncates; `divide:by:` does not, so the quotient is truncated.
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        let quotient = CoreDataPredicate.NSExpression(
            forFunction: "divide:by:", arguments: [try lhs.translatedExpression(&state), try rhs.translatedExpression(&state)])
        return .expression(CoreDataPredicate.NSExpression(forFunction: "trunc:", arguments: [quotient]))
    }
}

extension PredicateExpressions.IntRemainder: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .expression(CoreDataPredicate.NSExpression(
            forFunction: "modulus:by:", arguments: [try lhs.translatedExpression(&state), try rhs.translatedExpression(&state)]))
    }
}

extension PredicateExpressions.UnaryMinus: PredicateTranslatable {
    /// `-x` is `x * -1`; a negative literal (`-100`, which #Predicate builds as a negation)
    /// becomes the constant, as the format parser reads it.
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        if let constant = try? evaluate(PredicateBindings()) {
            return .expression(CoreDataPredicate.NSExpression(forConstantValue: try PredicateConstant.storable(constant)))
        }
        return .expression(CoreDataPredicate.NSExpression(
            forFunction: "multiply:by:", arguments: [try wrapped.translatedExpression(&state), CoreDataPredicate.NSExpression(forConstantValue: -1)]))
    }
}

import CoreDataPredicate
import Foundation

// `&&`, `||`, `!`, `? :`, `==`, `!=`, `<`, `<=`, `>`, `>=` in a #Predicate.

extension PredicateExpressions.Conjunction: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .predicate(CoreDataPredicate.NSCompoundPredicate(
            andPredicateWithSubpredicates: flattened(.and, [try lhs.translatedPredicate(&state), try rhs.translatedPredicate(&state)])))
    }
}

extension PredicateExpressions.Disjunction: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .predicate(CoreDataPredicate.NSCompoundPredicate(
            orPredicateWithSubpredicates: flattened(.or, [try lhs.translatedPredicate(&state), try rhs.translatedPredicate(&state)])))
    }
}

/// `a && b && c` as one AND of three, as the format parser builds it.
private func flattened(_ type: CoreDataPredicate.NSCompoundPredicate.LogicalType, _ parts: [CoreDataPredicate.NSPredicate]) -> [CoreDataPredicate.NSPredicate] {
    parts.flatMap { part -> [CoreDataPredicate.NSPredicate] in
        if let compound = part as? CoreDataPredicate.NSCompoundPredicate, compound.compoundPredicateType == type {
            return compound.subpredicates
        }
        return [part]
    }
}

extension PredicateExpressions.Negation: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .predicate(CoreDataPredicate.NSCompoundPredicate(notPredicateWithSubpredicate: try wrapped.translatedPredicate(&state)))
    }
}

extension PredicateExpressions.Conditional: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .expression(CoreDataPredicate.NSExpression(
            forConditional: try test.translatedPredicate(&state),
            trueExpression: try trueBranch.translatedExpression(&state),
            falseExpression: try falseBranch.translatedExpression(&state)))
    }
}

extension PredicateExpressions.Equal: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .predicate(CoreDataPredicate.NSComparisonPredicate.make(try lhs.translatedExpression(&state), .equalTo, try rhs.translatedExpression(&state)))
    }
}

extension PredicateExpressions.NotEqual: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .predicate(CoreDataPredicate.NSComparisonPredicate.make(try lhs.translatedExpression(&state), .notEqualTo, try rhs.translatedExpression(&state)))
    }
}

extension PredicateExpressions.Comparison: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        let type: CoreDataPredicate.NSComparisonPredicate.Operator
        switch op {
        case .lessThan: type = .lessThan
        case .lessThanOrEqual: type = .lessThanOrEqualTo
        case .greaterThan: type = .greaterThan
        case .greaterThanOrEqual: type = .greaterThanOrEqualTo
        }
        return .predicate(CoreDataPredicate.NSComparisonPredicate.make(try lhs.translatedExpression(&state), type, try rhs.translatedExpression(&state)))
    }
}

import CoreDataPredicate
import Foundation

// `contains`, `contains(where:)`, `allSatisfy`, `filter`, `starts(with:)`, ranges, `min()`/`max()`
// in a #Predicate. A to-many relationship's test becomes a SUBQUERY over its destinations.

extension PredicateExpressions.SequenceContains: PredicateTranslatable {
    /// `collection.contains(x)` is `x IN collection`; `range.contains(x)` is `x BETWEEN range`.
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        let element = try self.element.translatedExpression(&state)
        let collection = try sequence.translatedExpression(&state)
        let isRange = LHS.Output.self is any RangeExpression.Type
        return .predicate(CoreDataPredicate.NSComparisonPredicate.make(element, isRange ? .between : .in, collection))
    }
}

extension PredicateExpressions.SequenceContainsWhere: PredicateTranslatable {
    /// `books.contains { $0.pages > 300 }` is `SUBQUERY(books, $_local_1, $_local_1.pages > 300).@count != 0`.
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        let collection = try sequence.translatedExpression(&state)
        let local = state.bindLocal(variable.key)
        let subquery = CoreDataPredicate.NSExpression(forSubquery: collection, usingIteratorVariable: local, predicate: try test.translatedPredicate(&state))
        return .predicate(CoreDataPredicate.NSComparisonPredicate.make(
            subquery.addingKey("@count"), .notEqualTo, CoreDataPredicate.NSExpression(forConstantValue: 0)))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: PredicateTranslatable {
    /// `books.allSatisfy { test }` is `SUBQUERY(books, $_local_1, NOT test).@count == 0`.
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        let collection = try sequence.translatedExpression(&state)
        let local = state.bindLocal(variable.key)
        let failing = CoreDataPredicate.NSCompoundPredicate(notPredicateWithSubpredicate: try test.translatedPredicate(&state))
        let subquery = CoreDataPredicate.NSExpression(forSubquery: collection, usingIteratorVariable: local, predicate: failing)
        return .predicate(CoreDataPredicate.NSComparisonPredicate.make(
            subquery.addingKey("@count"), .equalTo, CoreDataPredicate.NSExpression(forConstantValue: 0)))
    }
}

extension PredicateExpressions.Filter: PredicateTranslatable {
    /// `books.filter { test }` is `SUBQUERY(books, $_local_1, test)` (usually followed by `.count`).
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        let collection = try sequence.translatedExpression(&state)
        let local = state.bindLocal(variable.key)
        return .expression(CoreDataPredicate.NSExpression(forSubquery: collection, usingIteratorVariable: local, predicate: try filter.translatedPredicate(&state)))
    }
}

extension PredicateExpressions.CollectionContainsCollection: PredicateTranslatable {
    /// `title.contains("Swift")` is `title CONTAINS "Swift"` (strings only).
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        guard Base.Output.self is any StringProtocol.Type else {
            throw PredicateTranslationError.unsupportedExpression(
                "PredicateExpressions.CollectionContainsCollection on \(Base.Output.self): only strings have a Core Data equivalent (CONTAINS)")
        }
        return .predicate(CoreDataPredicate.NSComparisonPredicate.make(try base.translatedExpression(&state), .contains, try other.translatedExpression(&state)))
    }
}

extension PredicateExpressions.SequenceStartsWith: PredicateTranslatable {
    /// `title.starts(with: "The")` is `title BEGINSWITH "The"` (strings only).
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        guard Base.Output.self is any StringProtocol.Type else {
            throw PredicateTranslationError.unsupportedExpression(
                "PredicateExpressions.SequenceStartsWith on \(Base.Output.self): only strings have a Core Data equivalent (BEGINSWITH)")
        }
        return .predicate(CoreDataPredicate.NSComparisonPredicate.make(try base.translatedExpression(&state), .beginsWith, try prefix.translatedExpression(&state)))
    }
}

extension PredicateExpressions.ClosedRange: PredicateTranslatable {
    /// `lower...upper` as `{lower, upper}`, the right side of BETWEEN.
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .expression(CoreDataPredicate.NSExpression(forAggregate: [try lower.translatedExpression(&state), try upper.translatedExpression(&state)]))
    }
}

extension PredicateExpressions.RangeExpressionContains: PredicateTranslatable {
    /// `(a...b).contains(x)` is `x BETWEEN {a, b}`; `(a..<b).contains(x)` is `x >= a AND x < b`.
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        let element = try self.element.translatedExpression(&state)
        if let halfOpen = range as? any HalfOpenRangeNode {
            let (lower, upper) = try halfOpen.bounds(&state)
            return .predicate(CoreDataPredicate.NSCompoundPredicate(andPredicateWithSubpredicates: [
                CoreDataPredicate.NSComparisonPredicate.make(element, .greaterThanOrEqualTo, lower),
                CoreDataPredicate.NSComparisonPredicate.make(element, .lessThan, upper),
            ]))
        }
        if let value = range as? any RangeValueNode {
            return .predicate(try value.containment(of: element))
        }
        return .predicate(CoreDataPredicate.NSComparisonPredicate.make(element, .between, try range.translatedExpression(&state)))
    }
}

/// `a..<b` written in the predicate.
private protocol HalfOpenRangeNode {
    func bounds(_ state: inout PredicateTranslation) throws -> (CoreDataPredicate.NSExpression, CoreDataPredicate.NSExpression)
}

extension PredicateExpressions.Range: HalfOpenRangeNode {
    fileprivate func bounds(_ state: inout PredicateTranslation) throws -> (CoreDataPredicate.NSExpression, CoreDataPredicate.NSExpression) {
        (try lower.translatedExpression(&state), try upper.translatedExpression(&state))
    }
}

/// A captured range value (`let r = 1..<5` used in the predicate).
private protocol RangeValueNode {
    func containment(of element: CoreDataPredicate.NSExpression) throws -> CoreDataPredicate.NSPredicate
}

extension PredicateExpressions.Value: RangeValueNode where Output: RangeExpression {
    fileprivate func containment(of element: CoreDataPredicate.NSExpression) throws -> CoreDataPredicate.NSPredicate {
        func constant(_ bound: Any) throws -> CoreDataPredicate.NSExpression {
            CoreDataPredicate.NSExpression(forConstantValue: try PredicateConstant.storable(bound))
        }
        switch value {
        case let range as Swift.Range<Output.Bound>:
            return CoreDataPredicate.NSCompoundPredicate(andPredicateWithSubpredicates: [
                CoreDataPredicate.NSComparisonPredicate.make(element, .greaterThanOrEqualTo, try constant(range.lowerBound)),
                CoreDataPredicate.NSComparisonPredicate.make(element, .lessThan, try constant(range.upperBound)),
            ])
        case let range as Swift.ClosedRange<Output.Bound>:
            return CoreDataPredicate.NSComparisonPredicate.make(
                element, .between, CoreDataPredicate.NSExpression(forConstantValue: [try PredicateConstant.storable(range.lowerBound), try PredicateConstant.storable(range.upperBound)]))
        case let range as PartialRangeFrom<Output.Bound>:
            return CoreDataPredicate.NSComparisonPredicate.make(element, .greaterThanOrEqualTo, try constant(range.lowerBound))
        case let range as PartialRangeThrough<Output.Bound>:
            return CoreDataPredicate.NSComparisonPredicate.make(element, .lessThanOrEqualTo, try constant(range.upperBound))
        case let range as PartialRangeUpTo<Output.Bound>:
            return CoreDataPredicate.NSComparisonPredicate.make(element, .lessThan, try constant(range.upperBound))
        default:
            throw PredicateTranslationError.unsupportedValue("a range of type \(Output.self)")
        }
    }
}

extension PredicateExpressions.SequenceMaximum: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .expression(try elements.translatedExpression(&state).addingKey("@max"))
    }
}

extension PredicateExpressions.SequenceMinimum: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .expression(try elements.translatedExpression(&state).addingKey("@min"))
    }
}

import CoreDataModel
import CoreDataPredicate
import Foundation

/// Checks, before a fetch runs, that every key path of its predicate and sort names a property
/// of the entity (following relationships), so that a typo fails the fetch with an error naming
/// the entity and the key instead of a trap deep inside evaluation.
enum PredicateKeyPathCheck {
    static func check(_ predicate: CoreDataPredicate.NSPredicate, entity: NSEntityDescription) throws {
        switch predicate {
        case let comparison as CoreDataPredicate.NSComparisonPredicate:
            try check(comparison.leftExpression, entity: entity)
            try check(comparison.rightExpression, entity: entity)
        case let compound as CoreDataPredicate.NSCompoundPredicate:
            for sub in compound.subpredicates { try check(sub, entity: entity) }
        default:
            return
        }
    }

    /// Checks the key paths of one expression (an `NSExpressionDescription`'s, for example).
    static func check(expression: CoreDataPredicate.NSExpression, entity: NSEntityDescription) throws {
        try check(expression, entity: entity)
    }

    private static func check(_ expression: CoreDataPredicate.NSExpression, entity: NSEntityDescription) throws {
        switch expression.expressionType {
        case .keyPath:
            // `$x.name` reads from a SUBQUERY's iterator, whose entity is not this one.
            guard expression.operand.expressionType == .evaluatedObject else { return }
            try check(keyPath: expression.keyPath, entity: entity, context: "predicate")
        case .function:
            try check(expression.operand, entity: entity)
            for argument in expression.arguments ?? [] { try check(argument, entity: entity) }
        case .aggregate:
            for case let item as CoreDataPredicate.NSExpression in (expression.collection as? [Any]) ?? [] { try check(item, entity: entity) }
        case .subquery:
            // The iterator variable's entity is the collection's destination; only the
            // collection's own key path is checked here.
            if let collection = expression.collection as? CoreDataPredicate.NSExpression { try check(collection, entity: entity) }
        default:
            return
        }
    }

    /// Follows `keyPath` through the entity's relationships; `@`-operators, `SELF` and keys
    /// after an attribute (e.g. `name.length`) are left to evaluation.
    static func check(keyPath: String, entity: NSEntityDescription, context: String) throws {
        var current = entity
        for component in keyPath.split(separator: ".").map(String.init) {
            if component.hasPrefix("@") || component == "SELF" || component == "self" || component == "objectID" { return }
            let key = component.hasPrefix("#") ? String(component.dropFirst()) : component
            guard let property = current.propertiesByName[key] else {
                throw coreDataError(
                    NSPersistentStoreOperationError,
                    "keypath \(keyPath) not found in entity \(current.name ?? "?"): '\(key)' is not a property of \(current.name ?? "?") (\(context))",
                    [NSValidationKeyErrorKey: keyPath])
            }
            guard let relationship = property as? NSRelationshipDescription, let destination = relationship.destinationEntity else { return }
            current = destination
        }
    }
}

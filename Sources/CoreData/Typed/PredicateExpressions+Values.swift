import CoreDataModel
import CoreDataPredicate
import Foundation

// Variables, captured values, `nil`, key paths, and optionals (`?.`, `??`, `!`) in a #Predicate.

extension PredicateExpressions.Variable: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .expression(try state.expression(for: key))
    }
}

extension PredicateExpressions.Value: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .expression(CoreDataPredicate.NSExpression(forConstantValue: try PredicateConstant.storable(value)))
    }
}

extension PredicateExpressions.NilLiteral: PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        .expression(CoreDataPredicate.NSExpression(forConstantValue: nil))
    }
}

extension PredicateExpressions.KeyPath: PredicateTranslatable {
    /// A property of a managed object (named through the class's `@Managed` declarations),
    /// or `count`, `isEmpty`, `first`, `last` of a collection or string.
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        let root = try self.root.translatedExpression(&state)
        if let type = Root.Output.self as? NSManagedObject.Type {
            let entity = try state.entity(for: type)
            guard let path = try KeyPathProbe.propertyPath(of: keyPath, on: type, entity: entity) else {
                return .expression(root)  // `objectID`: the object stands for its ID.
            }
            return .expression(root.addingKey(path))
        }
        // Apple's translation counts strings with `length` (UTF-16 units) and collections with `@count`.
        let isString = Root.Output.self == String.self || Root.Output.self == Substring.self
        switch kind {
        case .collectionCount?:
            return .expression(root.addingKey(isString ? "length" : "@count"))
        case .collectionIsEmpty?:
            return .predicate(CoreDataPredicate.NSComparisonPredicate.make(
                root.addingKey(isString ? "length" : "@count"), .equalTo, CoreDataPredicate.NSExpression(forConstantValue: 0)))
        case .collectionFirst?:
            return .expression(CoreDataPredicate.NSExpression(
                forFunction: "objectFrom:withIndex:", arguments: [root, CoreDataPredicate.NSExpression(forConstantValue: PredicateIndexSymbol.first)]))
        case .bidirectionalCollectionLast?:
            return .expression(CoreDataPredicate.NSExpression(
                forFunction: "objectFrom:withIndex:", arguments: [root, CoreDataPredicate.NSExpression(forConstantValue: PredicateIndexSymbol.last)]))
        case nil:
            throw PredicateTranslationError.unsupportedExpression(
                "the key path \(keyPath) on \(Root.Output.self) has no Core Data equivalent (key paths name properties of "
                    + "NSManagedObject subclasses, or count, isEmpty, first and last of collections)")
        }
    }
}

extension PredicateExpressions.OptionalFlatMap: PredicateTranslatable {
    /// `author?.name` and `author.flatMap { … }`: Core Data key paths already read nil through a
    /// nil to-one relationship, so the unwrapped value stands for the optional itself.
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        state.bind(variable.key, to: try wrapped.translatedExpression(&state))
        return try transform.translated(&state)
    }
}

extension PredicateExpressions.NilCoalesce: PredicateTranslatable {
    /// `value ?? fallback` as `TERNARY(value != nil, value, fallback)`.
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        let value = try lhs.translatedExpression(&state)
        let fallback = try rhs.translatedExpression(&state)
        let present = CoreDataPredicate.NSComparisonPredicate.make(value, .notEqualTo, CoreDataPredicate.NSExpression(forConstantValue: nil))
        return .expression(CoreDataPredicate.NSExpression(forConditional: present, trueExpression: value, falseExpression: fallback))
    }
}

extension PredicateExpressions.ForcedUnwrap: PredicateTranslatable {
    /// `value!`: the value (a nil reads as nil instead of failing the evaluation).
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        try inner.translated(&state)
    }
}

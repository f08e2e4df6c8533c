import CoreDataPredicate
import Foundation

/// The model check of a derived attribute's expression: every key path in it must name
/// properties reachable from the entity, so that a misspelt derivation fails when the model is
/// first used, naming the entity and attribute, instead of saving `nil` forever.
package enum DerivationCheck {
    static func check(_ derived: NSDerivedAttributeDescription, of entity: NSEntityDescription) throws(ModelError) {
        let entityName = entity.name ?? ""
        func failure(_ message: String) -> ModelError {
            ModelError(.invalidValue, "derived attribute '\(derived.name)' of entity '\(entityName)': \(message)", entityName: entityName, propertyName: derived.name)
        }
        if derived.isTransient { throw failure("a derived attribute cannot be transient") }
        guard let expression = derived.derivationExpression else { return }
        for path in keyPaths(in: expression) {
            if let problem = unresolved(path, from: entity) { throw failure("key path '\(path)' \(problem)") }
            if path == derived.name || path.hasPrefix(derived.name + ".") { throw failure("the expression reads the attribute itself") }
        }
    }

    /// The key paths read from the evaluated object anywhere in `expression`.
    package static func keyPaths(in expression: CoreDataPredicate.NSExpression) -> [String] {
        switch expression.expressionType {
        case .keyPath:
            guard expression.operand.expressionType == .evaluatedObject else { return keyPaths(in: expression.operand) }
            return [expression.keyPath]
        case .function:
            return keyPaths(in: expression.operand) + (expression.arguments ?? []).flatMap { keyPaths(in: $0) }
        default:
            return []
        }
    }

    /// Why `path` does not resolve from `entity`, or `nil` when it does: relationships lead on
    /// to their destination, a composite attribute into its elements, `@count`, `@sum`, `@min`,
    /// `@max` and `@avg` end the path or apply to the attribute after them.
    static func unresolved(_ path: String, from entity: NSEntityDescription) -> String? {
        var current: NSEntityDescription? = entity
        var elements: [NSAttributeDescription]?
        for component in path.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            if component.hasPrefix("@") {
                guard ["@count", "@sum", "@min", "@max", "@avg"].contains(component) else {
                    return "uses '\(component)', which is not one of @count, @sum, @min, @max, @avg"
                }
                continue
            }
            if let list = elements {
                guard let element = list.first(where: { $0.name == component }) else {
                    return "names '\(component)', which the composite attribute does not have"
                }
                elements = (element as? NSCompositeAttributeDescription)?.elements
                if elements == nil { current = nil }
                continue
            }
            guard let here = current else { return "goes on past an attribute at '\(component)'" }
            guard let property = here.propertiesByName[component] else {
                return "names '\(component)', which entity '\(here.name ?? "")' does not have"
            }
            switch property {
            case let relationship as NSRelationshipDescription:
                current = relationship.destinationEntity
            case let composite as NSCompositeAttributeDescription:
                elements = composite.elements
                current = nil
            default:
                current = nil
            }
        }
        return nil
    }
}

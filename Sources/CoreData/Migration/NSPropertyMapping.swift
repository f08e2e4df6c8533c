import CoreDataPredicate
import Foundation

/// How one destination property gets its value in a migration.
///
/// Matches Apple's `NSPropertyMapping`. ``valueExpression`` is evaluated with `$source` bound to
/// the source object; an inferred mapping uses `$source.name` (the source property's name, after
/// a rename). A `nil` expression leaves the property at its default value.
///
/// Threading: a mapping is plain data; do not change it while a migration uses it.
open class NSPropertyMapping: NSObject {
    /// The destination property's name.
    open var name: String?
    /// The expression that computes the destination value; `nil` for the default value.
    open var valueExpression: NSExpression?
    /// Values for the developer's own use.
    open var userInfo: [AnyHashable: Any]?
    /// Whether the expression is left for the migration to generate, as Xcode's compiler does for
    /// a property the mapping editor left empty: read the source property of the same name, if
    /// the source entity has one (``NSMappingModel/resolveGeneratedExpressions(from:to:)``).
    var generatesExpression = false

    public override init() { super.init() }

    init(name: String, valueExpression: NSExpression?) {
        self.name = name
        self.valueExpression = valueExpression
        super.init()
    }

    /// The source property the expression reads as it stands, `nil` for any other expression.
    ///
    /// Recognised: `$source.key`, `FUNCTION($source, "valueForKey:", "key")` and the relationship
    /// forms `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:"
    /// or "destinationInstancesForEntityMappingNamed:sourceInstances:", …, $source.key)`, which
    /// map the source destinations to their migrated objects.
    package var sourceKey: String? { valueExpression.flatMap(Self.sourceKey(of:)) }

    private static func sourceKey(of expression: NSExpression) -> String? {
        switch expression.expressionType {
        case .keyPath:
            let operand = expression.operand
            if operand.expressionType == .variable, operand.variable == "source", !expression.keyPath.contains(".") {
                return expression.keyPath
            }
            let path = expression.keyPath
            if path.hasPrefix("$source."), !path.dropFirst("$source.".count).contains(".") {
                return String(path.dropFirst("$source.".count))
            }
            return nil
        case .function:
            let operand = expression.operand
            guard operand.expressionType == .variable, let arguments = expression.arguments else { return nil }
            switch (operand.variable, expression.function) {
            case ("source", "valueForKey:"):
                guard arguments.count == 1, arguments[0].expressionType == .constantValue else { return nil }
                return arguments[0].constantValue as? String
            case ("manager", "destinationInstancesForSourceRelationshipNamed:sourceInstances:"),
                 ("manager", "destinationInstancesForEntityMappingNamed:sourceInstances:"):
                guard arguments.count == 2 else { return nil }
                return sourceKey(of: arguments[1])
            default:
                return nil
            }
        default:
            return nil
        }
    }

    /// `$source.key`, as an inferred mapping reads an attribute.
    static func readingSource(_ key: String) -> NSExpression {
        // A name the format parser reads otherwise (a reserved word) takes Apple's long form.
        if let parsed = try? NSExpression(validatingFormat: "$source." + key), sourceKey(of: parsed) == key { return parsed }
        return NSExpression(forFunction: NSExpression(forVariable: "source"), selectorName: "valueForKey:", arguments: [key])
    }

    /// Apple's inferred relationship expression: the migrated objects of the source destinations.
    static func migratedDestinations(relationship key: String) -> NSExpression {
        NSExpression(
            forFunction: NSExpression(forVariable: "manager"),
            selectorName: "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
            arguments: [NSExpression(forConstantValue: key), readingSource(key)])
    }

    open override var description: String {
        "<NSPropertyMapping \(name ?? "nil") = \(valueExpression.map { "\($0)" } ?? "default")>"
    }
}

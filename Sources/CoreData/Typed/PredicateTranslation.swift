import CoreDataModel
import CoreDataPredicate
import Foundation

/// The translation of a Foundation `Predicate` over a managed object subclass into the predicate
/// tree Core Data's stores execute, so that `#Predicate` and `NSPredicate(format:)` fetches run
/// alike (and both can use a store's indexes).
///
/// Each `PredicateExpressions` node type that has an equivalent conforms to
/// ``PredicateTranslatable``; the first node that does not stops the translation with a
/// ``PredicateTranslationError`` that names it. Key paths are named by ``KeyPathProbe``.
struct PredicateTranslation {
    /// What each `#Predicate` variable stands for: the evaluated object (`SELF`) for the
    /// predicate's input, `$_local_N` for the element of a `contains(where:)`/`allSatisfy`/`filter`,
    /// and for an optional's unwrapped value (`author?.name`) the optional's own expression.
    private var variables: [PredicateExpressions.VariableID: CoreDataPredicate.NSExpression] = [:]
    private var nextLocal = 1
    /// The entity of the predicate's input, when known; used to find the entity of a class.
    let rootEntity: NSEntityDescription?

    init(rootEntity: NSEntityDescription?) {
        self.rootEntity = rootEntity
    }

    /// Translates `predicate`, whose input is the evaluated object.
    static func translate<Input: NSManagedObject>(_ predicate: Predicate<Input>, entity: NSEntityDescription?) throws -> CoreDataPredicate.NSPredicate {
        var state = PredicateTranslation(rootEntity: entity ?? EntityClassRegistry.entityInAnyModel(for: Input.self))
        state.variables[predicate.variable.key] = CoreDataPredicate.NSExpression.expressionForEvaluatedObject()
        return try predicate.expression.translatedPredicate(&state)
    }

    func expression(for variable: PredicateExpressions.VariableID) throws -> CoreDataPredicate.NSExpression {
        guard let expression = variables[variable] else {
            throw PredicateTranslationError.unsupportedExpression("a variable that is not the predicate's input nor bound by contains(where:), allSatisfy or filter")
        }
        return expression
    }

    mutating func bind(_ variable: PredicateExpressions.VariableID, to expression: CoreDataPredicate.NSExpression) {
        variables[variable] = expression
    }

    /// Binds `variable` to a new `$_local_N` variable and returns its name.
    mutating func bindLocal(_ variable: PredicateExpressions.VariableID) -> String {
        let name = "_local_\(nextLocal)"
        nextLocal += 1
        variables[variable] = CoreDataPredicate.NSExpression(forVariable: name)
        return name
    }

    /// The entity whose objects have class `type`: looked up in the input entity's model first.
    func entity(for type: NSManagedObject.Type) throws -> NSEntityDescription {
        if let model = rootEntity?.managedObjectModel, let entity = EntityClassRegistry.entity(for: type, in: model) { return entity }
        if let entity = EntityClassRegistry.entityInAnyModel(for: type) { return entity }
        throw PredicateTranslationError.noEntity(
            "no loaded model has an entity whose class is \(type); create the container or coordinator for the model first")
    }
}

/// A node of a `#Predicate` tree, translated: a value or a condition.
enum TranslatedNode {
    case expression(CoreDataPredicate.NSExpression)
    case predicate(CoreDataPredicate.NSPredicate)
}

/// A `PredicateExpressions` node with an equivalent in Core Data's predicate tree.
protocol PredicateTranslatable {
    func translate(_ state: inout PredicateTranslation) throws -> TranslatedNode
}

extension PredicateExpression {
    /// This node translated, or an error naming its type.
    ///
    /// A node with no equivalent that needs no input (a computation on captured values only) is
    /// evaluated once and becomes a constant, as Apple's translation does.
    func translated(_ state: inout PredicateTranslation) throws -> TranslatedNode {
        if let node = self as? any PredicateTranslatable {
            return try node.translate(&state)
        }
        if let value = try? evaluate(PredicateBindings()) {
            return .expression(CoreDataPredicate.NSExpression(forConstantValue: try PredicateConstant.storable(value)))
        }
        throw PredicateTranslationError.unsupportedExpression(
            "\(PredicateConstant.constructName(Self.self)) has no Core Data equivalent (in \(Self.self))")
    }

    /// This node as a value; a condition becomes `TERNARY(condition, true, false)`.
    func translatedExpression(_ state: inout PredicateTranslation) throws -> CoreDataPredicate.NSExpression {
        switch try translated(&state) {
        case .expression(let expression): return expression
        case .predicate(let predicate):
            return CoreDataPredicate.NSExpression(
                forConditional: predicate, trueExpression: CoreDataPredicate.NSExpression(forConstantValue: true),
                falseExpression: CoreDataPredicate.NSExpression(forConstantValue: false))
        }
    }

    /// This node as a condition; a Boolean value `v` becomes `v == YES`.
    func translatedPredicate(_ state: inout PredicateTranslation) throws -> CoreDataPredicate.NSPredicate {
        switch try translated(&state) {
        case .predicate(let predicate): return predicate
        case .expression(let expression):
            return CoreDataPredicate.NSComparisonPredicate(
                leftExpression: expression, rightExpression: CoreDataPredicate.NSExpression(forConstantValue: true),
                modifier: .direct, type: .equalTo, options: [])
        }
    }
}

/// Helpers shared by the node translations.
enum PredicateConstant {
    /// `PredicateExpressions.Equal` for `PredicateExpressions.Equal<KeyPath<…>, Value<…>>`.
    static func constructName(_ type: Any.Type) -> String {
        let name = String(describing: type)
        let base = name.split(separator: "<", maxSplits: 1).first.map(String.init) ?? name
        return "PredicateExpressions.\(base)"
    }

    /// A captured value in a form predicates hold: numbers, strings, dates, UUIDs, data, URLs,
    /// managed objects and IDs as they are; collections element by element; ranges as their
    /// bounds; characters as strings.
    ///
    /// - Throws: ``PredicateTranslationError/unsupportedValue(_:)`` for other types.
    static func storable(_ value: Any) throws -> Any? {
        switch value {
        case Optional<Any>.none:
            return nil
        case is String, is UUID, is Date, is Data, is URL, is Decimal, is Bool, is NSNumber,
             is Int, is Int8, is Int16, is Int32, is Int64, is UInt, is UInt8, is UInt16, is UInt32, is UInt64,
             is Double, is Float, is NSManagedObject, is NSManagedObjectID:
            return value
        case let character as Character:
            return String(character)
        case let substring as Substring:
            return String(substring)
        case let range as any ClosedRangeBounds:
            return [try storable(range.lowerBoundValue), try storable(range.upperBoundValue)]
        case let sequence as any Sequence:
            return try sequence.map { try storable($0) ?? NSNull() }
        default:
            throw PredicateTranslationError.unsupportedValue("a value of type \(type(of: value)) cannot be stored in a Core Data predicate")
        }
    }
}

/// The bounds of a `ClosedRange`, whatever its bound type.
protocol ClosedRangeBounds {
    var lowerBoundValue: Any { get }
    var upperBoundValue: Any { get }
}

extension ClosedRange: ClosedRangeBounds {
    var lowerBoundValue: Any { lowerBound }
    var upperBoundValue: Any { upperBound }
}

extension CoreDataPredicate.NSExpression {
    /// This expression followed by `key`: `author` + `name` is `author.name`, `$x` + `name` is
    /// `$x.name`, anything else reads `key` from its value.
    func addingKey(_ key: String) -> CoreDataPredicate.NSExpression {
        switch expressionType {
        case .evaluatedObject:
            return CoreDataPredicate.NSExpression(forKeyPath: key)
        case .keyPath where !keyPath.contains("@"):
            let operand = self.operand
            return .keyPath("\(keyPath).\(key)", operand: operand.expressionType == .evaluatedObject ? nil : operand)
        default:
            return .keyPath(key, operand: self)
        }
    }
}

extension CoreDataPredicate.NSComparisonPredicate {
    /// A direct comparison without options.
    static func make(_ left: CoreDataPredicate.NSExpression, _ type: Operator, _ right: CoreDataPredicate.NSExpression) -> CoreDataPredicate.NSComparisonPredicate {
        CoreDataPredicate.NSComparisonPredicate(leftExpression: left, rightExpression: right, modifier: .direct, type: type, options: [])
    }
}

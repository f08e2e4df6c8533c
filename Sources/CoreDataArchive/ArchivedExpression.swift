import CoreDataPredicate
import Foundation

private typealias Expression = CoreDataPredicate.NSExpression

/// Decodes archived `NSExpression` and `NSPredicate` objects (Formats/keyed-archive.md §6) into the
/// classes of CoreDataPredicate, so that a mapping model's value expressions or a compiled model's
/// predicates evaluate and print as parsed ones do.
///
/// ```swift
/// let archive = try KeyedArchive(data: valueExpressionData)
/// let expression = try ArchivedExpressionDecoder(archive: archive).expression(at: archive.rootReference())
/// print(expression)   // FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)
/// ```
///
/// Classes it does not know (Core Data's `NSFetchRequestExpression`, which this module cannot
/// build) go to the ``Hook`` given at creation; it returns an expression, or nil to leave the
/// class unknown, which is an error naming the class and the object. A hook decodes the object's
/// nested expressions through the decoder it is handed, so the limits keep applying.
///
/// Limits: those of the ``KeyedUnarchiver`` underneath (depth, cycles, object budget), and
/// ``maximumNesting`` levels of expressions and predicates.
///
/// Threading: not `Sendable` (it keeps the unarchiver's path and count); use it on one thread.
/// The expressions it returns are immutable and `Sendable`.
public final class ArchivedExpressionDecoder {
    /// Decodes an archived object of a class the decoder does not know; returns nil to leave it
    /// unknown. Errors it throws that are not ``KeyedArchiveError`` are reported as `.hookFailed`.
    public typealias Hook = (ArchivedObject, ArchivedExpressionDecoder) throws -> CoreDataPredicate.NSExpression?

    /// The deepest nesting of expressions and predicates, 100: what the predicate parser accepts
    /// (its tree height limit), so every decoded tree prints, compares and evaluates within the
    /// stack depth the rest of the package was built for.
    /// Formats/keyed-archive.md §6; exceeding it throws "expressions and predicates nested deeper than 100 levels".
    public static let maximumNesting = 100

    /// The unarchiver whose limits the decoding counts against.
    public let unarchiver: KeyedUnarchiver
    private let hook: Hook?
    private var nesting = 0

    /// A decoder over `unarchiver`, with `hook` for classes it does not know.
    public init(unarchiver: KeyedUnarchiver, hook: Hook? = nil) {
        self.unarchiver = unarchiver
        self.hook = hook
    }

    /// A decoder of `archive` with a fresh ``KeyedUnarchiver`` (default budget).
    public convenience init(archive: KeyedArchive, hook: Hook? = nil) {
        self.init(unarchiver: KeyedUnarchiver(archive: archive), hook: hook)
    }

    /// The archive being decoded.
    public var archive: KeyedArchive { unarchiver.archive }

    /// The root expression of the keyed archive in `data` (`$top[rootKey]`).
    /// - Throws: ``KeyedArchiveError`` for an unreadable archive or anything ``expression(at:)`` throws.
    public static func expression(fromArchive data: Data, rootKey: String = "root", hook: Hook? = nil) throws(KeyedArchiveError) -> CoreDataPredicate.NSExpression {
        let archive = try KeyedArchive(data: data)
        return try ArchivedExpressionDecoder(archive: archive, hook: hook).expression(at: archive.rootReference(rootKey))
    }

    // MARK: - Expressions

    /// The expression archived at `reference`.
    ///
    /// - Throws: ``KeyedArchiveError``: `.unknownClass` for an expression class neither the
    ///   decoder nor the hook knows, `.wrongClass` for an object that is not an expression,
    ///   `.malformed` for missing or wrong fields, `.tooDeep`, `.referenceCycle`,
    ///   `.budgetExceeded`, and `.hookFailed`.
    /// - Complexity: proportional to the objects visited, at most the unarchiver's budget.
    public func expression(at reference: ArchiveReference) throws(KeyedArchiveError) -> CoreDataPredicate.NSExpression {
        try nested(reference) { () throws(KeyedArchiveError) -> Expression in
            try unarchiver.withEntry(reference) { (entry) throws(KeyedArchiveError) -> Expression in
                switch entry {
                case .object(let object): return try decodeExpression(object)
                case .null:
                    throw KeyedArchiveError(.malformed, "\(reference) is $null, expected an expression", object: reference.index)
                case .value(let value):
                    throw KeyedArchiveError(.malformed, "\(reference) is \(value.kindDescription), expected an expression", object: reference.index)
                }
            }
        }
    }

    /// The expression in field `key` of `object`; nil when the field is missing or `$null`.
    public func expression(forKey key: String, in object: ArchivedObject) throws(KeyedArchiveError) -> CoreDataPredicate.NSExpression? {
        guard let reference = try object.reference(forKey: key) else { return nil }
        return try expression(at: reference)
    }

    /// The expressions of the collection (`NSArray`, `NSSet`, `NSOrderedSet`) in field `key` of
    /// `object`; empty when the field is missing or `$null`.
    public func expressions(forKey key: String, in object: ArchivedObject) throws(KeyedArchiveError) -> [CoreDataPredicate.NSExpression] {
        try collection(forKey: key, in: object) { (reference) throws(KeyedArchiveError) -> Expression in
            try expression(at: reference)
        }
    }

    /// Each element of the collection in field `key`, decoded by `element`.
    func collection<T>(
        forKey key: String, in object: ArchivedObject, _ element: (ArchiveReference) throws(KeyedArchiveError) -> T
    ) throws(KeyedArchiveError) -> [T] {
        guard let reference = try object.reference(forKey: key) else { return [] }
        let elements = try unarchiver.withObject(reference) { (collection) throws(KeyedArchiveError) -> [ArchiveReference] in
            try unarchiver.elements(of: collection)
        }
        var results: [T] = []
        results.reserveCapacity(elements.count)
        for (position, reference) in elements.enumerated() {
            guard !reference.isNull else {
                throw KeyedArchiveError(.malformed, "\(object.label): element \(position) of \(key) is $null", object: object.reference.index)
            }
            results.append(try element(reference))
        }
        return results
    }

    /// Counts one level of expression or predicate nesting around `body`.
    func nested<T>(_ reference: ArchiveReference, _ body: () throws(KeyedArchiveError) -> T) throws(KeyedArchiveError) -> T {
        guard nesting < Self.maximumNesting else {
            throw KeyedArchiveError(
                .tooDeep, "expressions and predicates nested deeper than \(Self.maximumNesting) levels at \(reference) (maximumNesting)",
                object: reference.index)
        }
        nesting += 1
        defer { nesting -= 1 }
        return try body()
    }

    private func decodeExpression(_ object: ArchivedObject) throws(KeyedArchiveError) -> Expression {
        switch object.className {
        case "NSConstantValueExpression":
            if let className = try object.string(forKey: "NSConstantValueClassName") {
                throw KeyedArchiveError(
                    .malformed, "\(object.label) holds the class \(className), which is read only as the target of a built-in function",
                    object: object.reference.index)
            }
            let value = try unarchiver.decode(forKey: "NSConstantValue", in: object) ?? .null
            return Expression(forConstantValue: try constant(value, of: object))
        case "NSVariableExpression":
            return Expression(forVariable: try required(object.string(forKey: "NSVariable"), "NSVariable", object))
        case "NSSelfExpression":
            return Expression.expressionForEvaluatedObject()
        case "NSAnyKeyExpression":
            return Expression.expressionForAnyKey()
        case "NSKeyPathSpecifierExpression":
            return Expression(forKeyPath: try required(object.string(forKey: "NSKeyPath"), "NSKeyPath", object))
        case "NSKeyPathExpression":
            return try decodeKeyPath(object)
        case "NSFunctionExpression":
            return try decodeFunction(object)
        case "NSAggregateExpression":
            guard object.value(forKey: "NSCollection") != nil else { throw missing("NSCollection", object) }
            return Expression(forAggregate: try expressions(forKey: "NSCollection", in: object))
        case "NSSetExpression":
            let left = try required(expression(forKey: "NSLeftExpression", in: object), "NSLeftExpression", object)
            let right = try required(expression(forKey: "NSRightExpression", in: object), "NSRightExpression", object)
            switch try object.integer(forKey: "NSExpressionType") {
            case 5: return Expression(forUnionSet: left, with: right)
            case 6: return Expression(forIntersectSet: left, with: right)
            case 7: return Expression(forMinusSet: left, with: right)
            case let type:
                throw KeyedArchiveError(
                    .malformed, "\(object.label): NSExpressionType \(type.map(String.init) ?? "missing") is not 5 (union), 6 (intersect) or 7 (minus)",
                    object: object.reference.index)
            }
        case "NSSubqueryExpression":
            let collection = try required(expression(forKey: "NSExpression", in: object), "NSExpression", object)
            let variable = try subqueryVariable(object)
            let predicate = try required(predicate(forKey: "NSSubpredicate", in: object), "NSSubpredicate", object)
            return Expression(forSubquery: collection, usingIteratorVariable: variable, predicate: predicate)
        case "NSTernaryExpression":
            let predicate = try required(predicate(forKey: "NSPredicate", in: object), "NSPredicate", object)
            let whenTrue = try required(expression(forKey: "NSTrueExpression", in: object), "NSTrueExpression", object)
            let whenFalse = try required(expression(forKey: "NSFalseExpression", in: object), "NSFalseExpression", object)
            return Expression(forConditional: predicate, trueExpression: whenTrue, falseExpression: whenFalse)
        default:
            if let decoded = try callHook(object) { return decoded }
            if object.isKind(of: "NSExpression") {
                throw KeyedArchiveError(
                    .unknownClass, "unknown expression class \(object.className) at \(object.reference) (no hook decoded it)",
                    object: object.reference.index)
            }
            throw KeyedArchiveError(
                .wrongClass, "\(object.reference) is \(KeyedArchive.withArticle(object.className)), expected an NSExpression",
                object: object.reference.index)
        }
    }

    /// `NSKeyPathExpression`: a `valueForKeyPath:` function whose one argument is the key path.
    /// On the evaluated object it is a plain key path (`name`); on any other operand a key path
    /// read from that operand (`$source.owner`).
    private func decodeKeyPath(_ object: ArchivedObject) throws(KeyedArchiveError) -> Expression {
        if let selector = try object.string(forKey: "NSSelectorName"), selector != "valueForKeyPath:", selector != "valueForKey:" {
            throw KeyedArchiveError(
                .malformed, "\(object.label): NSSelectorName is \"\(selector)\", expected \"valueForKeyPath:\"", object: object.reference.index)
        }
        let operand = try expression(forKey: "NSOperand", in: object)
        let paths = try collection(forKey: "NSArguments", in: object) { (reference) throws(KeyedArchiveError) -> String in
            try keyPathArgument(reference)
        }
        guard paths.count == 1, let path = paths.first else {
            throw KeyedArchiveError(
                .malformed, "\(object.label): NSArguments holds \(paths.count) arguments, expected one key path", object: object.reference.index)
        }
        guard let operand, operand.expressionType != .evaluatedObject else { return Expression(forKeyPath: path) }
        return Expression.keyPath(path, operand: operand)
    }

    /// The key path argument of an `NSKeyPathExpression`: a key path specifier, or a string constant.
    private func keyPathArgument(_ reference: ArchiveReference) throws(KeyedArchiveError) -> String {
        try nested(reference) { () throws(KeyedArchiveError) -> String in
            try unarchiver.withObject(reference) { (argument) throws(KeyedArchiveError) -> String in
                switch argument.className {
                case "NSKeyPathSpecifierExpression":
                    return try required(argument.string(forKey: "NSKeyPath"), "NSKeyPath", argument)
                case "NSConstantValueExpression":
                    guard case .string(let path)? = try unarchiver.decode(forKey: "NSConstantValue", in: argument) else {
                        throw KeyedArchiveError(.malformed, "\(argument.label) does not hold a key path string", object: reference.index)
                    }
                    return path
                default:
                    throw KeyedArchiveError(
                        .wrongClass, "\(reference) is \(KeyedArchive.withArticle(argument.className)), expected an NSKeyPathSpecifierExpression",
                        object: reference.index)
                }
            }
        }
    }

    /// `NSFunctionExpression`: `FUNCTION(operand, selector, arguments…)`, or a built-in function
    /// when the operand is the constant class `_NSPredicateUtilities` (how Foundation archives
    /// `sum:`, `add:to:`, …) or missing.
    private func decodeFunction(_ object: ArchivedObject) throws(KeyedArchiveError) -> Expression {
        let selector = try required(object.string(forKey: "NSSelectorName"), "NSSelectorName", object)
        let arguments = try expressions(forKey: "NSArguments", in: object)
        guard let operandReference = try object.reference(forKey: "NSOperand") else {
            return Expression(forFunction: selector, arguments: arguments)
        }
        let targetClass = try unarchiver.withEntry(operandReference) { (entry) throws(KeyedArchiveError) -> String? in
            guard case .object(let operand) = entry, operand.className == "NSConstantValueExpression" else { return nil }
            return try operand.string(forKey: "NSConstantValueClassName")
        }
        switch targetClass {
        case nil:
            return Expression(forFunction: try expression(at: operandReference), selectorName: selector, arguments: arguments)
        case "_NSPredicateUtilities"?:
            return Expression(forFunction: selector, arguments: arguments)
        case let other?:
            throw KeyedArchiveError(
                .malformed, "\(object.label): the function's target is the class \(other); only _NSPredicateUtilities (built-in functions) is supported",
                object: object.reference.index)
        }
    }

    /// The iterator variable of a subquery: a string (as Foundation writes it) or a variable expression.
    private func subqueryVariable(_ object: ArchivedObject) throws(KeyedArchiveError) -> String {
        if case .reference(let reference)? = object.value(forKey: "NSVariable"), !reference.isNull,
           case .object(let variable) = try archive.entry(at: reference), variable.className == "NSVariableExpression" {
            return try required(variable.string(forKey: "NSVariable"), "NSVariable", variable)
        }
        return try required(object.string(forKey: "NSVariable"), "NSVariable", object)
    }

    /// A constant's value as Foundation hands it out; objects of classes that are not values are
    /// rejected (an archived constant holds numbers, strings, dates, data, collections of them).
    private func constant(_ value: UnarchivedValue, of object: ArchivedObject) throws(KeyedArchiveError) -> Any? {
        if let stray = Self.firstObject(in: value) {
            throw KeyedArchiveError(
                .wrongClass,
                "\(object.label): NSConstantValue holds \(KeyedArchive.withArticle(stray.className)) at \(stray.reference), which is not a constant value",
                object: stray.reference.index)
        }
        return value.foundationValue
    }

    /// The first undecoded object in a decoded value (a tree no deeper than the unarchiver's limit).
    private static func firstObject(in value: UnarchivedValue) -> ArchivedObject? {
        switch value {
        case .object(let object): return object
        case .array(let elements), .set(let elements), .orderedSet(let elements):
            for element in elements { if let found = firstObject(in: element) { return found } }
            return nil
        case .dictionary(let keys, let values):
            for element in keys + values { if let found = firstObject(in: element) { return found } }
            return nil
        default:
            return nil
        }
    }

    private func callHook(_ object: ArchivedObject) throws(KeyedArchiveError) -> Expression? {
        guard let hook else { return nil }
        do {
            return try hook(object, self)
        } catch let error as KeyedArchiveError {
            throw error
        } catch {
            throw KeyedArchiveError(.hookFailed, "the hook failed on \(object.label): \(error)", object: object.reference.index)
        }
    }

    // MARK: - Fields

    func required<T>(_ value: T?, _ key: String, _ object: ArchivedObject) throws(KeyedArchiveError) -> T {
        guard let value else { throw missing(key, object) }
        return value
    }

    func missing(_ key: String, _ object: ArchivedObject) -> KeyedArchiveError {
        KeyedArchiveError(.malformed, "\(object.label) has no \(key)", object: object.reference.index)
    }
}

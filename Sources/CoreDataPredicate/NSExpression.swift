import Foundation

/// A value in a predicate: a constant, a key path, a variable, a function call, a subquery, …
///
/// The same tree that ``NSPredicate`` parses from a format string: stores read it to translate a
/// fetch into their own query language, and ``expressionValue(with:context:)`` evaluates it with the
/// reference evaluator. Apple's accessors apply to one kind of expression each; as on Apple
/// platforms, reading one that does not apply (``keyPath`` of a constant) is a programmer error
/// and traps with a message that names both.
///
/// Threading: immutable after creation and `Sendable`; evaluate it from any thread. A constant
/// holding a class instance, or a block expression, is only as thread-safe as that value.
open class NSExpression: NSObject, @unchecked Sendable {
    /// The kind of expression, with Apple's raw values.
    public enum ExpressionType: UInt, Sendable {
        case constantValue = 0
        case evaluatedObject = 1
        case variable = 2
        case keyPath = 3
        case function = 4
        case unionSet = 5
        case intersectSet = 6
        case minusSet = 7
        case subquery = 13
        case aggregate = 14
        case anyKey = 15
        case block = 19
        case conditional = 20
    }

    /// Apple's block signature: the evaluated object, the evaluated arguments, the context.
    public typealias Block = (Any?, [Any], NSMutableDictionary?) -> Any

    /// The tree node. One case per kind; the public accessors read it.
    enum Node {
        case constant(Any?)
        case evaluatedObject
        case variable(String)
        /// `operand` nil means the evaluated object (`name`, `SELF.name`); otherwise the key path
        /// applies to the operand's value (`$x.name`, `SUBQUERY(…).@count`).
        case keyPath(operand: NSExpression?, path: String, components: [String])
        /// `operand` is the receiver of `FUNCTION(receiver, 'selector', …)`; nil for built-in functions.
        case function(name: String, operand: NSExpression?, arguments: [NSExpression])
        case aggregate([NSExpression])
        case union(NSExpression, NSExpression)
        case intersect(NSExpression, NSExpression)
        case minus(NSExpression, NSExpression)
        case subquery(collection: NSExpression, variable: String, predicate: NSPredicate)
        case anyKey
        case block(Block, arguments: [NSExpression])
        case conditional(NSPredicate, NSExpression, NSExpression)
    }

    let node: Node
    /// Levels of nesting below and including this node; the parser bounds it.
    let height: Int
    /// Computed once from the children's hashes (the tree is immutable).
    let structuralHash: Int

    init(node: Node) {
        self.node = node
        self.height = ExpressionStructure.height(of: node)
        self.structuralHash = ExpressionStructure.hash(of: node)
        super.init()
    }

    /// An expression that evaluates as `expression` does: the designated initializer for
    /// subclasses in the package's other modules (Core Data's `NSFetchRequestExpression`), whose
    /// public initializers are all convenience ones, as Apple's are.
    package init(standingFor expression: NSExpression) {
        self.node = expression.node
        self.height = expression.height
        self.structuralHash = expression.structuralHash
        super.init()
    }

    // MARK: - Creating expressions

    /// An expression that always returns `obj`. Optionals are unwrapped and `NSNull` is nil.
    public convenience init(forConstantValue obj: Any?) {
        self.init(node: .constant(ValueKinds.unwrap(obj)))
    }

    /// An expression that returns the object being evaluated (`SELF`).
    open class func expressionForEvaluatedObject() -> NSExpression {
        NSExpression(node: .evaluatedObject)
    }

    /// An expression that returns the value bound to `string` (`$string`) in the substitution
    /// variables.
    public convenience init(forVariable string: String) {
        self.init(node: .variable(string))
    }

    /// An expression that reads `keyPath` (dot-separated keys, `@count`-style operators) from the
    /// evaluated object.
    public convenience init(forKeyPath keyPath: String) {
        self.init(node: .keyPath(operand: nil, path: keyPath, components: NSExpression.components(of: keyPath)))
    }

    /// A built-in function (`sum:`, `add:to:`, `now`, …; see Apple's `NSExpression` documentation).
    /// Elements of `parameters` that are not expressions become constants. An unknown name or a
    /// wrong number of parameters is not rejected here (Apple raises): it evaluates to nil, and
    /// ``validatedExpressionValue(with:context:)`` throws for it.
    public convenience init(forFunction name: String, arguments parameters: [Any]) {
        self.init(node: .function(name: name, operand: nil, arguments: parameters.map(NSExpression.wrap)))
    }

    /// `FUNCTION(target, 'name', parameters…)`: a method call on `target`. Objective-C messaging does
    /// not exist on Linux; such a call evaluates through ``PredicateFunctionReceiver`` when the
    /// target conforms, reads a key for `valueForKey:` and `valueForKeyPath:` whatever the target,
    /// gives nil for a nil target, and otherwise gives nil (where Apple raises an unrecognized
    /// selector; ``validatedExpressionValue(with:context:)`` throws).
    public convenience init(forFunction target: NSExpression, selectorName name: String, arguments parameters: [Any]?) {
        self.init(node: .function(name: name, operand: target, arguments: (parameters ?? []).map(NSExpression.wrap)))
    }

    /// A collection of the subexpressions' values (`{a, b, c}`).
    public convenience init(forAggregate subexpressions: [Any]) {
        self.init(node: .aggregate(subexpressions.map(NSExpression.wrap)))
    }

    /// The union of two collections, as an array without duplicates.
    public convenience init(forUnionSet left: NSExpression, with right: NSExpression) {
        self.init(node: .union(left, right))
    }

    /// The elements of `left` that are also in `right`.
    public convenience init(forIntersectSet left: NSExpression, with right: NSExpression) {
        self.init(node: .intersect(left, right))
    }

    /// The elements of `left` that are not in `right`.
    public convenience init(forMinusSet left: NSExpression, with right: NSExpression) {
        self.init(node: .minus(left, right))
    }

    /// `SUBQUERY(expression, $variable, predicate)`: the elements of the collection for which the
    /// predicate holds, each bound to `variable` (and also the evaluated object) while it is tested.
    /// `predicate` must be an ``NSPredicate`` (Apple types it `Any`); anything else is a programmer
    /// error and traps.
    public convenience init(forSubquery expression: NSExpression, usingIteratorVariable variable: String, predicate: Any) {
        guard let predicate = predicate as? NSPredicate else {
            preconditionFailure("NSExpression(forSubquery:usingIteratorVariable:predicate:) needs an NSPredicate, got \(type(of: predicate))")
        }
        self.init(node: .subquery(collection: expression, variable: variable, predicate: predicate))
    }

    /// An expression that stands for any key of the evaluated object (Spotlight's `ANYKEY`); it
    /// evaluates to nil here.
    open class func expressionForAnyKey() -> NSExpression {
        NSExpression(node: .anyKey)
    }

    /// An expression that calls `block` with the evaluated object and the evaluated `arguments`
    /// (nil values passed as `NSNull`). It cannot be printed as a parseable format string.
    public convenience init(block: @escaping Block, arguments: [NSExpression]?) {
        self.init(node: .block(block, arguments: arguments ?? []))
    }

    /// `TERNARY(predicate, trueExpression, falseExpression)`. `predicate` must be an ``NSPredicate``
    /// (Apple types it `Any`); anything else traps.
    public convenience init(forConditional predicate: Any, trueExpression: NSExpression, falseExpression: NSExpression) {
        guard let predicate = predicate as? NSPredicate else {
            preconditionFailure("NSExpression(forConditional:trueExpression:falseExpression:) needs an NSPredicate, got \(type(of: predicate))")
        }
        self.init(node: .conditional(predicate, trueExpression, falseExpression))
    }

    static func wrap(_ value: Any) -> NSExpression {
        value as? NSExpression ?? NSExpression(forConstantValue: value)
    }

    static func components(of keyPath: String) -> [String] {
        keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// A key path read from `operand`'s value (`$x.name`, `SUBQUERY(…).@count`); nil operand
    /// reads from the evaluated object. Apple builds these only through the parser; the typed
    /// predicate translation of the `CoreData` module builds them directly.
    package static func keyPath(_ path: String, operand: NSExpression?) -> NSExpression {
        NSExpression(node: .keyPath(operand: operand, path: path, components: components(of: path)))
    }

    // MARK: - Evaluating

    /// The expression's value for `object`.
    ///
    /// Variables (`$name`) are read from `context` (as Apple does); a variable missing there
    /// evaluates to nil. Nothing here traps: a value of the wrong kind for an operation evaluates
    /// to nil (``validatedExpressionValue(with:context:)`` throws instead where Apple raises). A numeric result is an `NSNumber` (`NSDecimalNumber` for decimals), as on Apple
    /// platforms, so `as? Int` works for `2 ** 3` (a Double) and `as? Double` for `sum:` of integers.
    ///
    /// Complexity: proportional to the size of the tree times the sizes of the collections it walks.
    open func expressionValue(with object: Any?, context: NSMutableDictionary?) -> Any? {
        let value = ExpressionEvaluator.value(of: self, in: EvaluationContext(object: object, variables: NSExpression.variables(in: context)))
        return FoundationBridge.object(value)
    }

    /// The expression's value for `object`, like ``expressionValue(with:context:)``, but throwing
    /// where Apple's Foundation raises during evaluation instead of giving nil: an unknown
    /// function, a function given the wrong number or kind of arguments (`sqrt:("x")`), an index
    /// beyond the end of a collection, a `FUNCTION` selector the receiver does not answer, an
    /// unknown collection operator (`@foo`), a UTI conformance that needs the UTI database.
    ///
    /// For expressions from untrusted sources, where a nil result cannot tell a missing value from
    /// a mistake. Evaluates the tree itself: an override of ``expressionValue(with:context:)`` in
    /// a subclass is not called.
    ///
    /// - Throws: ``NSExpressionEvaluationError`` for the first such failure.
    public func validatedExpressionValue(with object: Any?, context: NSMutableDictionary?) throws(NSExpressionEvaluationError) -> Any? {
        let failures = EvaluationFailures()
        let evaluation = EvaluationContext(object: object, variables: NSExpression.variables(in: context), failures: failures)
        let value = ExpressionEvaluator.value(of: self, in: evaluation)
        if let failure = failures.first { throw failure }
        return FoundationBridge.object(value)
    }

    /// The string-keyed entries of an evaluation context: the values of `$name` variables.
    private static func variables(in context: NSMutableDictionary?) -> [String: Any] {
        var variables: [String: Any] = [:]
        if let context {
            for (key, value) in context {
                if let key = key as? String { variables[key] = value }
            }
        }
        return variables
    }

    /// Securely decoded expressions must be allowed before evaluation on Apple platforms; there is
    /// no archiving here, so this does nothing.
    open func allowEvaluation() {}

    // MARK: - Describing

    /// The expression in format syntax; it parses back to an equal expression (see
    /// ``NSPredicate/predicateFormat``).
    open override var description: String { Printer.format(self) }

    /// Whether `object` is an expression with the same structure: same kinds, names and operators,
    /// and constants equal by value (`3 == 3.0`). A constant array equals an aggregate of equal
    /// constants (`%@` with an array prints as `{…}`, which parses as an aggregate).
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSExpression else { return false }
        return ExpressionStructure.equal(self, other)
    }

    /// Consistent with ``isEqual(_:)``; computed when the tree is built.
    open override var hash: Int { structuralHash }
}

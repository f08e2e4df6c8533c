import Foundation

// Apple's accessors. Each applies to some kinds of expression; reading one that does not apply is a
// programmer error, as on Apple platforms (where it raises), and traps naming the kind.

extension NSExpression {
    /// The kind of this expression.
    public var expressionType: ExpressionType {
        switch node {
        case .constant: return .constantValue
        case .evaluatedObject: return .evaluatedObject
        case .variable: return .variable
        case .keyPath: return .keyPath
        case .function: return .function
        case .aggregate: return .aggregate
        case .union: return .unionSet
        case .intersect: return .intersectSet
        case .minus: return .minusSet
        case .subquery: return .subquery
        case .anyKey: return .anyKey
        case .block: return .block
        case .conditional: return .conditional
        }
    }

    private func notApplicable(_ accessor: String) -> Never {
        preconditionFailure("NSExpression.\(accessor) is not defined for an expression of type \(expressionType): \(self)")
    }

    /// The value of a constant expression (nil for `nil`), as Apple's Foundation gives it:
    /// numbers and booleans (`3`, `2.5`, `YES`, a `%d` argument, a substitution variable's value)
    /// as `NSNumber`, decimals as `NSDecimalNumber`, so that `as? Int`, `as? Double` and
    /// `as? Bool` cast as they do on Apple platforms.
    public var constantValue: Any? {
        guard case .constant(let value) = node else { notApplicable("constantValue") }
        return FoundationBridge.object(value)
    }

    /// The constant as it was given or parsed (a Swift `Int`, not the `NSNumber`
    /// ``constantValue`` hands callers), for the stores' translators.
    package var storedConstantValue: Any? {
        guard case .constant(let value) = node else { notApplicable("constantValue") }
        return value
    }

    /// The key path of a key path expression, dot-separated (`author.name`, `@count`).
    public var keyPath: String {
        guard case .keyPath(_, let path, _) = node else { notApplicable("keyPath") }
        return path
    }

    /// The function name of a function expression (`sum:`, `add:to:`, or the selector of `FUNCTION`).
    public var function: String {
        guard case .function(let name, _, _) = node else { notApplicable("function") }
        return name
    }

    /// The variable name of a variable expression, without `$`; for a subquery, its iterator variable.
    public var variable: String {
        switch node {
        case .variable(let name): return name
        case .subquery(_, let name, _): return name
        default: notApplicable("variable")
        }
    }

    /// What a key path or function applies to: the evaluated object for plain key paths, the
    /// variable in `$x.name`, the receiver of `FUNCTION(receiver, …)`. For built-in functions, which
    /// have no receiver here, a constant nil expression.
    public var operand: NSExpression {
        switch node {
        case .keyPath(let operand, _, _): return operand ?? NSExpression.expressionForEvaluatedObject()
        case .function(_, let operand, _): return operand ?? NSExpression(forConstantValue: nil)
        default: notApplicable("operand")
        }
    }

    /// The arguments of a function or block expression; nil for other kinds.
    public var arguments: [NSExpression]? {
        switch node {
        case .function(_, _, let arguments): return arguments
        case .block(_, let arguments): return arguments
        default: return nil
        }
    }

    /// For an aggregate, its subexpressions (`[NSExpression]`); for a subquery, the expression of
    /// the collection it filters.
    public var collection: Any {
        switch node {
        case .aggregate(let elements): return elements
        case .subquery(let collection, _, _): return collection
        default: notApplicable("collection")
        }
    }

    /// The predicate of a subquery or conditional expression.
    public var predicate: NSPredicate {
        switch node {
        case .subquery(_, _, let predicate): return predicate
        case .conditional(let predicate, _, _): return predicate
        default: notApplicable("predicate")
        }
    }

    /// The left operand of a union, intersect or minus expression.
    public var left: NSExpression {
        switch node {
        case .union(let left, _), .intersect(let left, _), .minus(let left, _): return left
        default: notApplicable("left")
        }
    }

    /// The right operand of a union, intersect or minus expression.
    public var right: NSExpression {
        switch node {
        case .union(_, let right), .intersect(_, let right), .minus(_, let right): return right
        default: notApplicable("right")
        }
    }

    /// The expression a conditional returns when its predicate holds.
    public var trueExpression: NSExpression {
        guard case .conditional(_, let value, _) = node else { notApplicable("trueExpression") }
        return value
    }

    /// The expression a conditional returns when its predicate does not hold.
    public var falseExpression: NSExpression {
        guard case .conditional(_, _, let value) = node else { notApplicable("falseExpression") }
        return value
    }

    /// The block of a block expression.
    public var expressionBlock: Block {
        guard case .block(let block, _) = node else { notApplicable("expressionBlock") }
        return block
    }
}

import CoreDataModel
import CoreDataPredicate
import Foundation

/// A computed column of a dictionary fetch: a name, an expression, and the type of its value.
///
/// Matches Apple's `NSExpressionDescription`. Put it in a fetch request's `propertiesToFetch`
/// (with `resultType = .dictionaryResultType`); each result dictionary holds the expression's
/// value under `name`:
///
/// ```swift
/// let total = NSExpressionDescription()
/// total.name = "totalPages"
/// total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "pages")])
/// total.expressionResultType = .integer64AttributeType
/// ```
///
/// An expression that is a function of the aggregate family (`sum:`, `average:`, `min:`, `max:`,
/// `count:`, `median:`, `stddev:`, `mode:`) over key paths is computed over all the objects of a
/// group (see `propertiesToGroupBy`), or over every matching object when the request does not
/// group. Any other expression is evaluated once per object, with the object as `SELF`; a
/// managed object value (`SELF`, a to-one key path) becomes its `NSManagedObjectID`.
///
/// The value is converted to ``expressionResultType``: integer types give `Int16`/`Int32`/`Int64`
/// (truncating fractions, as SQL does), `doubleAttributeType`/`floatAttributeType` give
/// `Double`/`Float`, `decimalAttributeType` a `Decimal`; `undefinedAttributeType` keeps the
/// computed value as it is.
///
/// Threading: configure it before the fetch; a fetch only reads it.
open class NSExpressionDescription: NSPropertyDescription, @unchecked Sendable {
    /// The expression computed for each result dictionary.
    public var expression: CoreDataPredicate.NSExpression?

    /// The type the value is converted to.
    public var expressionResultType: NSAttributeType = .undefinedAttributeType

    /// Creates an empty description; set `name` and ``expression`` before use.
    public override init() { super.init() }

    open override var description: String {
        "(NSExpressionDescription) name \(name), expression \(expression.map { "\($0)" } ?? "nil"), resultType \(expressionResultType)"
    }
}

import CoreDataPredicate
import Foundation

/// An expression whose value is the result of a fetch: `FETCH(request, context, countOnly)`.
///
/// Matches Apple's `NSFetchRequestExpression`. Mapping models use one as an entity mapping's
/// ``NSEntityMapping/sourceExpression``: `FETCH(FUNCTION($manager,
/// "fetchRequestForSourceEntityNamed:predicateString:", "Car", "TRUEPREDICATE"),
/// $manager.sourceContext, NO)` fetches the objects the mapping migrates.
///
/// ``expressionValue(with:context:)`` evaluates ``requestExpression`` to an ``NSFetchRequest`` and
/// ``contextExpression`` to an ``NSManagedObjectContext``, then fetches: the objects, or their
/// count when ``isCountOnlyRequest``. A fetch that fails, or operands of the wrong kinds, evaluate
/// to nil (an expression has no way to throw).
///
/// Linux difference: Apple reports `expressionType` 50 (`NSFetchRequestExpressionType`), which
/// Foundation's enumeration does not declare; here `expressionType` is that of the function the
/// expression stands for (`.function`). Only a fetch expression at the top of an evaluation runs
/// the fetch; nested inside another expression it evaluates as that function (to nil).
///
/// Threading: evaluate it on the queue of the context it fetches with.
open class NSFetchRequestExpression: NSExpression, @unchecked Sendable {
    /// The expression whose value is the fetch request.
    public let requestExpression: NSExpression
    /// The expression whose value is the context to fetch with.
    public let contextExpression: NSExpression
    /// Whether the value is the number of matching objects instead of the objects.
    public let isCountOnlyRequest: Bool

    init(request: NSExpression, context: NSExpression, countOnly: Bool) {
        requestExpression = request
        contextExpression = context
        isCountOnlyRequest = countOnly
        super.init(standingFor: NSExpression(forFunction: context, selectorName: "executeFetchRequest:", arguments: [request]))
    }

    /// A fetch expression: `fetch` evaluates to an ``NSFetchRequest``, `context` to the
    /// ``NSManagedObjectContext`` that executes it.
    open class func expression(forFetch fetch: NSExpression, context: NSExpression, countOnly countFlag: Bool) -> NSExpression {
        NSFetchRequestExpression(request: fetch, context: context, countOnly: countFlag)
    }

    open override func expressionValue(with object: Any?, context: NSMutableDictionary?) -> Any? {
        guard let request = requestExpression.expressionValue(with: object, context: context) as? NSFetchRequest<NSFetchRequestResult>,
              let managedContext = contextExpression.expressionValue(with: object, context: context) as? NSManagedObjectContext
        else { return nil }
        if isCountOnlyRequest { return (try? managedContext.count(for: request)).map { NSNumber(value: $0) } }
        return try? managedContext.fetch(request)
    }

    open override var description: String {
        "FETCH(\(requestExpression), \(contextExpression), \(isCountOnlyRequest ? "YES" : "NO"))"
    }
}

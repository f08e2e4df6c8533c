import Foundation

/// An object whose values a predicate can read by key: what key-value coding provides on Apple
/// platforms, where it does not exist on Linux.
///
/// Managed objects and store rows conform; so can any class or struct. `NSObject` on Linux declares
/// no `value(forKey:)`, so an `NSObject` subclass conforms by declaring it with no `override`, and the
/// signature is Apple's (`NSManagedObject.value(forKey:)`), so shared code that calls it compiles
/// on both platforms.
///
/// Values the evaluator does not find through this protocol: `[String: Any]` dictionaries and
/// `NSDictionary` are read by key; other values have their stored properties read by name
/// through `Mirror` (slower; conform for speed or for computed properties).
public protocol KeyValueReadable {
    /// The value for `key`, or nil when there is none. To-many relationships return a collection
    /// (array or set) of objects; to-one relationships the object.
    ///
    /// Threading: called from whatever thread evaluates the predicate.
    func value(forKey key: String) -> Any?
}

extension KeyValueReadable {
    /// The value at a dot-separated key path (`author.name`, `books.@count`), read as a predicate
    /// reads it: through to-one values, and through to-many values into a flattened collection.
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyPathReader.value(of: self, components: NSExpression.components(of: keyPath)[...])
    }
}

/// A receiver of `FUNCTION(receiver, 'selector', arguments…)` calls.
///
/// Apple's framework sends the selector as an Objective-C message; Linux has none, so a receiver
/// that wants to answer such calls conforms to this protocol instead.
public protocol PredicateFunctionReceiver {
    /// The result of the function named `selector` (as written, e.g. `"distanceTo:"`) with the
    /// evaluated `arguments`; nil when the receiver does not know the function (which
    /// ``NSExpression/validatedExpressionValue(with:context:)`` reports as an error, as Apple
    /// raises for an unrecognized selector).
    func predicateFunction(_ selector: String, arguments: [Any?]) -> Any?
}

import Foundation

/// Values as Apple's Core Data and Foundation hand them to callers: Foundation objects.
///
/// Apple's frameworks are Objective-C: a number they return in an `Any` is an `NSNumber`, a
/// decimal an `NSDecimalNumber`, and Swift's casts from those convert (`as? Int`, `as? Double`,
/// `as? Int64`, `as? Bool` for 0 and 1). A Swift `Int16` in an `Any` casts only to `Int16` and
/// `NSNumber`, so code that works on Apple platforms (`row["count"] as? Int`) would fail here.
/// The places that return such values through `Any` (expression values and constants, dictionary
/// fetch results, collection operators, committed and changed values, history tombstones, batch
/// results, and a managed object's `value(forKey:)` and `primitiveValue(forKey:)`) pass them
/// through ``object(_:)``.
///
/// Not used for typed accessors (`@Managed`) and the framework's own reads: a cast from an
/// `NSNumber` costs about ten times a cast from the Swift value, and those are the hot read path.
package enum FoundationBridge {
    /// `value` as Apple would return it: numbers and booleans as `NSNumber`, `Decimal` as
    /// `NSDecimalNumber`, the elements of arrays and the values of dictionaries likewise;
    /// anything else unchanged.
    ///
    /// Complexity: O(1) for a scalar, O(n) for a collection.
    package static func object(_ value: Any?) -> Any? {
        guard let value else { return nil }
        switch value {
        case let array as [Any]: return array.map { object($0) }
        case let dictionary as [String: Any]: return dictionary.mapValues { object($0) }
        case let dictionary as [AnyHashable: Any]: return dictionary.mapValues { object($0) }
        default: return scalar(value)
        }
    }

    /// ``object(_:)`` for a value that is present.
    package static func object(_ value: Any) -> Any {
        object(Optional(value)) ?? value
    }

    /// ``object(_:)`` for a value an `NSDictionary` will hold: a boolean becomes an integer
    /// `NSNumber` (0 or 1). Foundation on Linux hands an `NSNumber` made from a `Bool` back out
    /// of an `NSDictionary` as a Swift `Bool`, which `as? Int` does not convert; an integer
    /// `NSNumber` converts to `Int` and to `Bool` both, as Apple's boolean `NSNumber` does, and
    /// prints as Apple's does (`1`).
    package static func dictionaryObject(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if !(type(of: value) is NSNumber.Type), let flag = value as? Bool { return NSNumber(value: flag ? 1 : 0) }
        return object(value)
    }

    /// ``object(_:)`` for a scalar only: collections are left as they are (a batch result's array
    /// of object IDs stays `[NSManagedObjectID]`).
    package static func scalar(_ value: Any) -> Any {
        // Already a Foundation object (Swift numbers in an `Any` answer `is NSNumber` on Linux,
        // so the check is on the dynamic type).
        guard !(type(of: value) is NSNumber.Type), let number = Number(value) else { return value }
        if let bool = value as? Bool { return NSNumber(value: bool) }
        switch number {
        case .int(let v): return NSNumber(value: v)
        case .uint(let v): return NSNumber(value: v)
        case .double(let v): return NSNumber(value: v)
        case .decimal(let v): return NSDecimalNumber(decimal: v)
        }
    }
}

import Foundation

/// Values as Apple's Core Data hands them to callers: Foundation objects.
///
/// Apple's framework is Objective-C: a number it returns in an `Any` is an `NSNumber`, a decimal
/// an `NSDecimalNumber`, and Swift's casts from those convert (`as? Int`, `as? Double`,
/// `as? Int64`, `as? Bool` for 0 and 1). A Swift `Int16` in an `Any` casts only to `Int16` and
/// `NSNumber`, so code that works on Apple platforms (`row["count"] as? Int`) would fail here.
/// The places that return such values through `Any` (constants of parsed predicates, dictionary
/// fetch results, collection operators, committed and changed values, history tombstones, batch
/// results) pass them through ``object(_:)``.
///
/// Not used for `value(forKey:)` and typed accessors: a cast from an `NSNumber` costs about ten
/// times a cast from the Swift value, and those are the hot read path.
package enum FoundationBridge {
    /// `value` as Apple's Core Data would return it: numbers and booleans as `NSNumber`,
    /// `Decimal` as `NSDecimalNumber`, the elements of arrays and dictionaries likewise; anything
    /// else unchanged.
    ///
    /// Complexity: O(1) for a scalar, O(n) for a collection.
    package static func object(_ value: Any?) -> Any? {
        guard let value else { return nil }
        return object(value)
    }

    /// ``object(_:)`` for a scalar only: collections are left as they are (a batch result's array
    /// of object IDs stays `[NSManagedObjectID]`).
    package static func scalar(_ value: Any) -> Any {
        switch value {
        case is [Any], is [AnyHashable: Any]: return value
        default: return object(value)
        }
    }

    /// ``object(_:)`` for a value known to be present.
    package static func object(_ value: Any) -> Any {
        // Already a Foundation object (Swift numbers in an `Any` answer `is NSNumber` on Linux,
        // so the check is on the dynamic type).
        if type(of: value) is NSNumber.Type { return value }
        switch value {
        case let v as Bool: return NSNumber(value: v)
        case let v as Int: return NSNumber(value: v)
        case let v as Int16: return NSNumber(value: v)
        case let v as Int32: return NSNumber(value: v)
        case let v as Int64: return NSNumber(value: v)
        case let v as Double: return NSNumber(value: v)
        case let v as Float: return NSNumber(value: v)
        case let v as Int8: return NSNumber(value: v)
        case let v as UInt8: return NSNumber(value: v)
        case let v as UInt16: return NSNumber(value: v)
        case let v as UInt32: return NSNumber(value: v)
        case let v as UInt64: return NSNumber(value: v)
        case let v as UInt: return NSNumber(value: v)
        case let v as Decimal: return NSDecimalNumber(decimal: v)
        case let v as [Any]: return v.map { object($0) }
        case let v as [String: Any]: return v.mapValues { object($0) }
        case let v as [AnyHashable: Any]: return v.mapValues { object($0) }
        default: return value
        }
    }
}

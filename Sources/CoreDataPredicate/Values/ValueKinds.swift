import Foundation

// How the evaluator sees the values it meets: object graphs hand it Swift values, Foundation
// objects and optionals wrapped in `Any`, and each kind has to be recognised the same way everywhere.

/// Lets `unwrap` see through an `Optional` hidden inside an `Any`.
private protocol AnyOptional {
    var wrappedAny: Any? { get }
}

extension Optional: AnyOptional {
    fileprivate var wrappedAny: Any? { map { $0 as Any } }
}

enum ValueKinds {
    /// The value with every level of `Optional` removed; `NSNull` counts as nil (as in Foundation
    /// collections, where it stands for a missing value).
    static func unwrap(_ value: Any?) -> Any? {
        guard var current = value else { return nil }
        // Each step removes one level; the nesting of optionals is finite, so this ends.
        while let optional = current as? AnyOptional {
            guard let inner = optional.wrappedAny else { return nil }
            current = inner
        }
        if current is NSNull { return nil }
        return current
    }

    /// A String from String, Substring, Character or NSString; nil for anything else.
    static func string(_ value: Any) -> String? {
        switch value {
        case let string as String: return string
        case let substring as Substring: return String(substring)
        case let character as Character: return String(character)
        default:
            if type(of: value) is NSString.Type, let string = value as? String { return string }
            return nil
        }
    }

    /// A Date from Date or NSDate.
    static func date(_ value: Any) -> Date? {
        value as? Date
    }

    /// The elements of an ordered or unordered collection: Array, Set, NSArray, NSSet, NSOrderedSet.
    /// Strings, Data and dictionaries are not collections here (dictionaries are objects whose keys
    /// are read as key paths; `IN` and `CONTAINS` look at their values separately).
    static func collection(_ value: Any) -> [Any?]? {
        if value is String || value is Data { return nil }
        if let array = value as? [Any] { return array.map { unwrap($0) } }
        if let set = value as? Set<AnyHashable> { return set.map { unwrap($0.base) } }
        if let ordered = value as? NSOrderedSet { return ordered.array.map { unwrap($0) } }
        if let array = value as? NSArray { return array.map { unwrap($0) } }
        if let set = value as? NSSet { return set.allObjects.map { unwrap($0) } }
        return nil
    }

    /// Whether the value is an unordered collection (Set, NSSet): compared without regard to order.
    static func isUnordered(_ value: Any) -> Bool {
        value is Set<AnyHashable> || (value is NSSet && !(value is [Any]))
    }

    /// A dictionary's entries, from Swift dictionaries and NSDictionary.
    static func dictionary(_ value: Any) -> [AnyHashable: Any]? {
        if value is String { return nil }
        if let dictionary = value as? [AnyHashable: Any] { return dictionary }
        if let dictionary = value as? NSDictionary {
            var result: [AnyHashable: Any] = [:]
            for (key, element) in dictionary {
                if let key = key as? AnyHashable { result[key] = element }
            }
            return result
        }
        return nil
    }

    /// Whether the value is an instance of a class (compared by identity when not Hashable).
    static func isObject(_ value: Any) -> Bool {
        type(of: value) is AnyObject.Type
    }
}

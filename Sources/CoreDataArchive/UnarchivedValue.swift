import Foundation

/// An archived object graph decoded into Swift values by ``KeyedUnarchiver``: Foundation's value
/// classes become cases, and objects of other classes stay ``object(_:)`` for the caller's own
/// per-class code.
///
/// A decoded value is a tree: the unarchiver expands shared references once per use, within its
/// budget, and rejects cycles.
public indirect enum UnarchivedValue: Sendable, Equatable {
    /// `$null`, `NSNull`, or a property list null.
    case null
    /// An `NSNumber` holding a boolean.
    case bool(Bool)
    /// An `NSNumber` holding an integer.
    case integer(Int64)
    /// An `NSNumber` holding an integer above `Int64.max`.
    case unsignedInteger(UInt64)
    /// An `NSNumber` holding a real.
    case real(Double)
    /// `NSString`, `NSMutableString`, or a plain string.
    case string(String)
    /// `NSData`, `NSMutableData`, or plain data.
    case data(Data)
    /// `NSDate` (`NS.time`), or a property list date.
    case date(Date)
    /// `NSUUID` (`NS.uuidbytes`).
    case uuid(UUID)
    /// `NSURL` (`NS.relative` against `NS.base`).
    case url(URL)
    /// `NSArray`, `NSMutableArray`.
    case array([UnarchivedValue])
    /// `NSSet`, `NSMutableSet`, `NSCountedSet`: elements in archive order.
    case set([UnarchivedValue])
    /// `NSOrderedSet`, `NSMutableOrderedSet`.
    case orderedSet([UnarchivedValue])
    /// `NSDictionary`, `NSMutableDictionary`: keys and values pairwise, in archive order.
    case dictionary(keys: [UnarchivedValue], values: [UnarchivedValue])
    /// An object of a class the unarchiver does not decode itself.
    case object(ArchivedObject)

    /// The value as Foundation would hand it out: `String`, `Int`, `UInt64`, `Double`, `Bool`,
    /// `Data`, `Date`, `UUID`, `URL`, `[Any]` (`NSNull` for null elements), `Set<AnyHashable>`,
    /// `NSOrderedSet`, `[AnyHashable: Any]`, and nil for null. Elements that are not `Hashable`
    /// (arrays inside a set or as dictionary keys) become `NSArray`/`NSDictionary` objects. An
    /// undecoded ``object(_:)`` stays an ``ArchivedObject``.
    ///
    /// Complexity: O(size of the tree).
    public var foundationValue: Any? {
        switch self {
        case .null: return nil
        case .bool(let value): return value
        case .integer(let value): return Int(exactly: value) ?? value
        case .unsignedInteger(let value): return value
        case .real(let value): return value
        case .string(let value): return value
        case .data(let value): return value
        case .date(let value): return value
        case .uuid(let value): return value
        case .url(let value): return value
        case .array(let elements): return elements.map { $0.foundationValue ?? NSNull() }
        case .set(let elements): return Set(elements.map(\.hashableValue))
        case .orderedSet(let elements): return NSOrderedSet(array: elements.map { $0.foundationValue ?? NSNull() })
        case .dictionary(let keys, let values):
            var dictionary: [AnyHashable: Any] = [:]
            for (key, value) in zip(keys, values) { dictionary[key.hashableValue] = value.foundationValue ?? NSNull() }
            return dictionary
        case .object(let object): return object
        }
    }

    /// ``foundationValue`` as a hashable value, for set elements and dictionary keys.
    var hashableValue: AnyHashable {
        switch self {
        case .null: return AnyHashable(NSNull())
        case .bool(let value): return AnyHashable(value)
        case .integer(let value): return Int(exactly: value).map { AnyHashable($0) } ?? AnyHashable(value)
        case .unsignedInteger(let value): return AnyHashable(value)
        case .real(let value): return AnyHashable(value)
        case .string(let value): return AnyHashable(value)
        case .data(let value): return AnyHashable(value)
        case .date(let value): return AnyHashable(value)
        case .uuid(let value): return AnyHashable(value)
        case .url(let value): return AnyHashable(value)
        case .array(let elements), .orderedSet(let elements):
            return AnyHashable(NSArray(array: elements.map { $0.foundationValue ?? NSNull() }))
        case .set(let elements): return AnyHashable(Set(elements.map(\.hashableValue)))
        case .dictionary: return AnyHashable(NSDictionary(dictionary: (foundationValue as? [AnyHashable: Any]) ?? [:]))
        case .object(let object): return AnyHashable(object.reference)
        }
    }
}

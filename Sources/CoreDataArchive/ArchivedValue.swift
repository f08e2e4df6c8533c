import Foundation

/// A value as a keyed archive stores it: a field of an archived object (`NSExpressionType = 4`,
/// `NSOperand = UID 3`), or an `$objects` entry that is a plain property list value (a string,
/// a number). Nothing is resolved or decoded: ``reference(_:)`` is a UID into `$objects`.
public enum ArchivedValue: Sendable, Equatable {
    /// A property list null.
    case null
    /// `encodeBool:forKey:`, or an `NSNumber` holding a boolean.
    case bool(Bool)
    /// `encodeInteger:forKey:` and friends, or an `NSNumber` holding an integer.
    case integer(Int64)
    /// An integer above `Int64.max`.
    case unsignedInteger(UInt64)
    /// `encodeDouble:forKey:`, or an `NSNumber` holding a real.
    case real(Double)
    /// A property list date (NSKeyedArchiver writes `NSDate` as an object with `NS.time` instead).
    case date(Date)
    /// `encodeBytes:length:forKey:`, or an `NSData` stored as plain data.
    case data(Data)
    /// A string stored inline (`$classname`) or as an `$objects` entry.
    case string(String)
    /// A UID: a reference to another `$objects` entry (UID 0 is `$null`).
    case reference(ArchiveReference)
    /// An inline array, such as `NS.objects`, `NS.keys` or `$classes`. Its elements are never arrays.
    case array([ArchivedValue])

    /// The kind of value, with its article, for messages ("an integer", "a reference to object 4").
    public var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .unsignedInteger: return "an integer"
        case .real: return "a real"
        case .date: return "a date"
        case .data: return "data"
        case .string: return "a string"
        case .reference(let reference): return "a reference to \(reference)"
        case .array(let elements): return "an array of \(elements.count)"
        }
    }

    /// The value of property list object `number` of `list`, one level deep: an array's elements
    /// must be plain values or UIDs, and dictionaries and sets are not values (NSKeyedArchiver
    /// stores them as objects). Nested containers are rejected rather than walked, so a hostile
    /// list of shared containers cannot make this expensive.
    static func shallow(_ number: Int, in list: BinaryPropertyList, nested: Bool = false) -> ArchivedValue? {
        guard let object = list.object(number) else { return nil }
        switch object {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .integer(let value): return .integer(value)
        case .unsignedInteger(let value): return .unsignedInteger(value)
        case .real(let value): return .real(value)
        case .date(let value): return .date(value)
        case .data(let bytes): return .data(Data(bytes))
        case .string(let value): return .string(value)
        case .uid(let value): return .reference(ArchiveReference(value <= UInt64(Int.max) ? Int(value) : Int.max))
        case .array(let elements):
            guard !nested else { return nil }
            var values: [ArchivedValue] = []
            values.reserveCapacity(elements.count)
            for element in elements {
                guard let value = shallow(element, in: list, nested: true) else { return nil }
                values.append(value)
            }
            return .array(values)
        case .set, .dictionary:
            return nil
        }
    }
}

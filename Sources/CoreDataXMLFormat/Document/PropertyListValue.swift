import Foundation

/// One value of the metadata property list (`Formats/xml-store.md §4`), in a form that compares
/// and converts both ways to the `[String: Any]` of ``StoreMetadata``.
public indirect enum PropertyListValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// Equal values; reals compare by bit pattern so that a NaN equals itself after a round trip.
    public static func == (lhs: PropertyListValue, rhs: PropertyListValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a.bitPattern == b.bitPattern
        case (.bool(let a), .bool(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)): return a == b
        default: return false
        }
    }

    /// The value of a property-list object (`String`, integers, `Double`/`Float`, `Bool`, `Date`,
    /// `Data`, arrays and string-keyed dictionaries of those); `nil` for anything else.
    public init?(_ value: Any) {
        switch value {
        case let v as String: self = .string(v)
        case let v as Bool: self = .bool(v)
        case let v as Int: self = .integer(Int64(v))
        case let v as Int64: self = .integer(v)
        case let v as Int32: self = .integer(Int64(v))
        case let v as Int16: self = .integer(Int64(v))
        case let v as Int8: self = .integer(Int64(v))
        case let v as UInt8: self = .integer(Int64(v))
        case let v as UInt16: self = .integer(Int64(v))
        case let v as UInt32: self = .integer(Int64(v))
        case let v as UInt64:
            guard let exact = Int64(exactly: v) else { return nil }
            self = .integer(exact)
        case let v as UInt:
            guard let exact = Int64(exactly: v) else { return nil }
            self = .integer(exact)
        case let v as Double: self = .real(v)
        case let v as Float: self = .real(Double(v))
        case let v as Date: self = .date(v)
        case let v as Data: self = .data(v)
        case let v as NSNumber:
            let double = v.doubleValue
            self = double == double.rounded(.towardZero) && abs(double) < 9.2e18 ? .integer(v.int64Value) : .real(double)
        case let v as [Any]:
            var items: [PropertyListValue] = []
            for item in v {
                guard let converted = PropertyListValue(item) else { return nil }
                items.append(converted)
            }
            self = .array(items)
        case let v as [String: Any]:
            var entries: [String: PropertyListValue] = [:]
            for (key, item) in v {
                guard let converted = PropertyListValue(item) else { return nil }
                entries[key] = converted
            }
            self = .dictionary(entries)
        default: return nil
        }
    }

    /// The value as Foundation's property-list objects: `Int` for integers, `Double` for reals.
    public var object: Any {
        switch self {
        case .string(let v): return v
        case .integer(let v): return Int(truncatingIfNeeded: v)
        case .real(let v): return v
        case .bool(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .array(let v): return v.map(\.object)
        case .dictionary(let v): return v.mapValues(\.object)
        }
    }
}

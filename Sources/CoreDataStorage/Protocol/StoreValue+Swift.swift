import CoreDataModel
import Foundation

extension StoreValue {
    /// The Swift value of an attribute value: what a managed object's `value(forKey:)` returns
    /// for the attribute's type (`Int16`, `Int32`, `Int64`, `Float`, …). `nil` for ``null``.
    public func attributeValue(as type: NSAttributeType) -> Any? {
        switch self {
        case .null: return nil
        case .bool(let v): return v
        case .integer(let v):
            switch type {
            case .integer16AttributeType: return Int16(truncatingIfNeeded: v)
            case .integer32AttributeType: return Int32(truncatingIfNeeded: v)
            case .booleanAttributeType: return v != 0
            default: return v
            }
        case .double(let v): return type == .floatAttributeType ? Float(v) : v
        case .decimal(let v): return v
        case .string(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .uuid(let v): return v
        case .uri(let v): return v
        case .reference(let id): return id
        case .references(let ids): return ids
        }
    }

    /// The store value of a Swift attribute value, or `nil` when the value does not fit the type
    /// (the object graph reports that as a validation error before it reaches a store).
    public init?(attributeValue value: Any?, type: NSAttributeType) {
        guard let value else { self = .null; return }
        // The value's exact type first, read through the opened existential (`exactValue` sees
        // `Any` opened to the value's own type): no dynamic cast. A cast that fails (Any → Double
        // holding an Int64) looks through Foundation's bridging and costs far more than comparing
        // metatypes; one that succeeds still costs a few hundred instructions.
        if let exact = Self.exactValue(value, type) { self = exact; return }
        // Anything else (NSNumber, other widths, bridged values) goes through casts.
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            guard let v = StoreValue.integer(from: value) else { return nil }
            self = .integer(v)
        case .booleanAttributeType:
            if let v = value as? Bool { self = .bool(v) } else if let v = StoreValue.integer(from: value) { self = .bool(v != 0) } else { return nil }
        case .doubleAttributeType, .floatAttributeType:
            if let v = value as? Double { self = .double(v) }
            else if let v = value as? Float { self = .double(Double(v)) }
            else if let v = StoreValue.integer(from: value) { self = .double(Double(v)) }
            else if let v = value as? Decimal { self = .double(NSDecimalNumber(decimal: v).doubleValue) }
            else { return nil }
        case .decimalAttributeType:
            if let v = value as? Decimal { self = .decimal(v) }
            else if let v = StoreValue.integer(from: value) { self = .decimal(Decimal(v)) }
            else if let v = value as? Double { self = .decimal(Decimal(v)) }
            else { return nil }
        case .stringAttributeType:
            guard let v = value as? String else { return nil }
            self = .string(v)
        case .dateAttributeType:
            guard let v = value as? Date else { return nil }
            self = .date(v)
        case .binaryDataAttributeType, .transformableAttributeType:
            guard let v = value as? Data else { return nil }
            self = .data(v)
        case .UUIDAttributeType:
            guard let v = value as? UUID else { return nil }
            self = .uuid(v)
        case .URIAttributeType:
            guard let v = value as? URL else { return nil }
            self = .uri(v)
        case .undefinedAttributeType, .objectIDAttributeType, .compositeAttributeType:
            return nil
        }
    }

    /// The store value of `value` when ``attributeValue(as:)`` gives it back as a value of the
    /// same Swift type, equal to it: `Int64`, `Int32` or `Int16` for an integer attribute of that
    /// width, `Double`, `Float` (but a signalling NaN), `String`, `Date`, `Bool`. `nil` for any
    /// other value (an `Int` set on a 64-bit attribute reads back as `Int64`), and for `nil`. A
    /// holder may then keep the store value alone and convert it on each read without changing
    /// what reads return.
    ///
    /// Complexity: a few metatype comparisons; no dynamic cast, and no copy of `value`.
    package static func roundTripping(_ value: Any?, type: NSAttributeType) -> StoreValue? {
        guard value != nil else { return nil }
        // Read in place: binding the optional's payload copies the `Any` (a retain and a
        // release of a string's storage). A single-payload enum keeps its payload at its start.
        return withUnsafePointer(to: value) { optional in
            optional.withMemoryRebound(to: Any.self, capacity: 1) { roundTrippingValue($0.pointee, type) }
        }
    }

    /// ``roundTripping(_:type:)`` with `T` the value's own type (an opened existential), so the
    /// checks are metatype comparisons and the reads need no cast. Swift 6 opens an `Any`
    /// passed to `T` (the package's language mode); were `T` `Any`, every value would be kept
    /// as set, which is correct but slower.
    @inline(__always)
    private static func roundTrippingValue<T>(_ value: T, _ type: NSAttributeType) -> StoreValue? {
        switch type {
        case .integer64AttributeType: if T.self == Int64.self { return .integer(read(value, as: Int64.self)) }
        case .integer32AttributeType: if T.self == Int32.self { return .integer(Int64(read(value, as: Int32.self))) }
        case .integer16AttributeType: if T.self == Int16.self { return .integer(Int64(read(value, as: Int16.self))) }
        case .doubleAttributeType: if T.self == Double.self { return .double(read(value, as: Double.self)) }
        case .floatAttributeType:
            // A signalling NaN comes back from Double quieted: not the same bits.
            if T.self == Float.self, case let float = read(value, as: Float.self), !float.isSignalingNaN { return .double(Double(float)) }
        case .stringAttributeType: if T.self == String.self { return .string(read(value, as: String.self)) }
        case .dateAttributeType: if T.self == Date.self { return .date(read(value, as: Date.self)) }
        case .booleanAttributeType: if T.self == Bool.self { return .bool(read(value, as: Bool.self)) }
        default: break
        }
        return nil
    }

    /// `value` read as `U`; the caller has checked that `T` is `U`.
    @inline(__always)
    private static func read<T, U>(_ value: T, as _: U.Type) -> U {
        // Not `withUnsafePointer(to:)`: with `T` opened at run time it is an unspecialized
        // generic call, some 120 instructions; the cast is a load.
        unsafeBitCast(value, to: U.self)
    }

    /// The store value of `value` when its type is exactly the Swift type `type` stores (or a
    /// narrower integer or `Float`); `nil` otherwise. `T` is the value's own type (an opened
    /// existential), so the checks are metatype comparisons and the reads need no cast.
    @inline(__always)
    private static func exactValue<T>(_ value: T, _ type: NSAttributeType) -> StoreValue? {
        if let same = roundTrippingValue(value, type) { return same }
        switch type {
        case .integer64AttributeType, .integer32AttributeType, .integer16AttributeType:
            if T.self == Int64.self { return .integer(read(value, as: Int64.self)) }
            if T.self == Int.self { return .integer(Int64(read(value, as: Int.self))) }
            if T.self == Int32.self { return .integer(Int64(read(value, as: Int32.self))) }
            if T.self == Int16.self { return .integer(Int64(read(value, as: Int16.self))) }
        case .doubleAttributeType, .floatAttributeType:
            if T.self == Double.self { return .double(read(value, as: Double.self)) }
            if T.self == Float.self { return .double(Double(read(value, as: Float.self))) }
        default:
            break
        }
        return nil
    }

    /// The Int64 a Swift integer of any width holds (when it fits), or an NSNumber's value:
    /// truncated, or with `exactly`, only when the number is whole and not a floating-point or
    /// decimal value. Shared by attribute conversion and fetch-result conversion.
    package static func integer(from value: Any, exactly: Bool = false) -> Int64? {
        switch value {
        case let v as Int: return Int64(v)
        case let v as Int64: return v
        case let v as Int32: return Int64(v)
        case let v as Int16: return Int64(v)
        case let v as Int8: return Int64(v)
        case let v as UInt8: return Int64(v)
        case let v as UInt16: return Int64(v)
        case let v as UInt32: return Int64(v)
        case let v as UInt: return Int64(exactly: v)
        case let v as UInt64: return Int64(exactly: v)
        case is Double where exactly, is Float where exactly, is Decimal where exactly: return nil
        case let v as NSNumber:
            guard exactly else { return v.int64Value }
            let double = v.doubleValue
            return double == double.rounded(.towardZero) ? v.int64Value : nil
        default: return nil
        }
    }
}

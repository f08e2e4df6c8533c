import Foundation

/// A number read from any of Swift's and Foundation's numeric types, kept exact: integers stay
/// integers, so `Int64.max` and `Int64.max - 1` remain different, and mixed comparisons are exact.
enum Number: Sendable {
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case decimal(Decimal)

    /// The number in `value`, or nil when it holds no number. `Bool` is 0 or 1 (as NSNumber treats it).
    init?(_ value: Any) {
        // A real NSNumber object first: its objCType says what it holds. (Swift numbers in an `Any`
        // also answer `is NSNumber` on Linux, so the check is on the dynamic type.)
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            self.init(number: number)
            return
        }
        switch value {
        case let v as Int: self = .int(Int64(v))
        case let v as Int8: self = .int(Int64(v))
        case let v as Int16: self = .int(Int64(v))
        case let v as Int32: self = .int(Int64(v))
        case let v as Int64: self = .int(v)
        case let v as UInt: self = Number(unsigned: UInt64(v))
        case let v as UInt8: self = .int(Int64(v))
        case let v as UInt16: self = .int(Int64(v))
        case let v as UInt32: self = .int(Int64(v))
        case let v as UInt64: self = Number(unsigned: v)
        case let v as Double: self = .double(v)
        case let v as Float: self = .double(Double(v))
        case let v as CGFloat: self = .double(Double(v))
        case let v as Decimal: self = .decimal(v)
        case let v as Bool: self = .int(v ? 1 : 0)
        default: return nil
        }
    }

    init(unsigned value: UInt64) {
        self = value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)
    }

    private init(number: NSNumber) {
        if let decimal = number as? NSDecimalNumber {
            self = .decimal(decimal.decimalValue)
            return
        }
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"): self = .double(number.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"): self = Number(unsigned: number.uint64Value)
        default: self = .int(number.int64Value)
        }
    }

    /// The number as a Swift value: Int when it fits, else Int64, UInt64, Double or Decimal.
    var value: Any {
        switch self {
        case .int(let v): return Int(exactly: v).map { $0 as Any } ?? v
        case .uint(let v): return v
        case .double(let v): return v
        case .decimal(let v): return v
        }
    }

    var doubleValue: Double {
        switch self {
        case .int(let v): return Double(v)
        case .uint(let v): return Double(v)
        case .double(let v): return v
        case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
        }
    }

    /// The value as Int64 when it is integral and in range (bitwise functions, indexes).
    var int64Value: Int64? {
        switch self {
        case .int(let v): return v
        case .uint: return nil
        case .double(let v):
            guard v.isFinite, v.rounded(.towardZero) == v, v >= -9.223372036854775808e18, v < 9.223372036854775808e18
            else { return nil }
            return Int64(v)
        case .decimal(let v): return Number.double(NSDecimalNumber(decimal: v).doubleValue).int64Value
        }
    }

    var isNaN: Bool {
        switch self {
        case .double(let v): return v.isNaN
        case .decimal(let v): return v.isNaN
        case .int, .uint: return false
        }
    }

    /// Exact comparison across kinds; nil when either side is NaN (NaN is unordered).
    static func compare(_ a: Number, _ b: Number) -> ComparisonResult? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return order(x, y)
        case (.uint(let x), .uint(let y)): return order(x, y)
        case (.int(let x), .uint(let y)): return x < 0 ? .orderedAscending : order(UInt64(x), y)
        case (.uint(let x), .int(let y)): return y < 0 ? .orderedDescending : order(x, UInt64(y))
        case (.double(let x), .double(let y)): return x.isNaN || y.isNaN ? nil : order(x, y)
        case (.int(let x), .double(let y)): return compare(int: x, double: y)
        case (.double(let x), .int(let y)): return compare(int: y, double: x).map(reverse)
        case (.uint(let x), .double(let y)): return compare(uint: x, double: y)
        case (.double(let x), .uint(let y)): return compare(uint: y, double: x).map(reverse)
        case (.decimal(let x), .decimal(let y)): return x.isNaN || y.isNaN ? nil : order(x, y)
        case (.decimal(let x), .int(let y)): return x.isNaN ? nil : order(x, Decimal(y))
        case (.int(let x), .decimal(let y)): return y.isNaN ? nil : order(Decimal(x), y)
        case (.decimal(let x), .uint(let y)): return x.isNaN ? nil : order(x, Decimal(y))
        case (.uint(let x), .decimal(let y)): return y.isNaN ? nil : order(Decimal(x), y)
        case (.decimal, .double), (.double, .decimal):
            // Decimal(Double) is itself inexact; comparing as Double is as good as it gets.
            let (x, y) = (a.doubleValue, b.doubleValue)
            return x.isNaN || y.isNaN ? nil : order(x, y)
        }
    }

    private static func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
        x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
    }

    private static func reverse(_ result: ComparisonResult) -> ComparisonResult {
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// `x` against `y` without rounding `x` to Double (Int64 values above 2^53 are not all Doubles).
    private static func compare(int x: Int64, double y: Double) -> ComparisonResult? {
        if y.isNaN { return nil }
        if y >= 9.223372036854775808e18 { return .orderedAscending }
        if y < -9.223372036854775808e18 { return .orderedDescending }
        let floor = y.rounded(.down)
        let whole = Int64(floor)  // Safe: -2^63 <= floor < 2^63 after the checks above.
        if x != whole { return order(x, whole) }
        return y > floor ? .orderedAscending : .orderedSame
    }

    private static func compare(uint x: UInt64, double y: Double) -> ComparisonResult? {
        if y.isNaN { return nil }
        if y < 0 { return .orderedDescending }
        if y >= 1.8446744073709551616e19 { return .orderedAscending }
        let floor = y.rounded(.down)
        let whole = UInt64(floor)  // Safe: 0 <= floor < 2^64 after the checks above.
        if x != whole { return order(x, whole) }
        return y > floor ? .orderedAscending : .orderedSame
    }
}

import CoreDataModel
import CoreDataStorage
import Foundation

/// Converts the value an `NSExpressionDescription` computes to its `expressionResultType`, as
/// Core Data's SQL store does when it reads the column: integers truncate, floating-point
/// types widen or narrow, other types keep values of their kind. A value that cannot be
/// converted (a string for an integer type) is kept as it is; `nil` stays `nil`.
enum ExpressionResultConversion {
    static func convert(_ value: Any?, to type: NSAttributeType) -> Any? {
        guard let value else { return nil }
        switch type {
        case .integer16AttributeType:
            return int64(value).map { Int16(truncatingIfNeeded: $0) } ?? value
        case .integer32AttributeType:
            return int64(value).map { Int32(truncatingIfNeeded: $0) } ?? value
        case .integer64AttributeType:
            return int64(value) ?? value
        case .doubleAttributeType:
            return double(value) ?? value
        case .floatAttributeType:
            return double(value).map { Float($0) } ?? value
        case .decimalAttributeType:
            if let decimal = value as? Decimal { return decimal }
            if let integer = StoreValue.integer(from: value, exactly: true) { return Decimal(integer) }
            return double(value).map { Decimal($0) } ?? value
        case .booleanAttributeType:
            if let bool = value as? Bool { return bool }
            return int64(value).map { $0 != 0 } ?? value
        case .stringAttributeType:
            return value as? String ?? String(describing: value)
        default:
            return value
        }
    }

    /// The value as a whole number, truncating fractions; `nil` when it is not a number.
    static func int64(_ value: Any) -> Int64? {
        if let integer = StoreValue.integer(from: value, exactly: true) { return integer }
        if let double = double(value), double.isFinite, let integer = Int64(exactly: double.rounded(.towardZero)) { return integer }
        return nil
    }

    /// The value as a `Double`; `nil` when it is not a number.
    static func double(_ value: Any) -> Double? {
        switch value {
        case let v as Double: return v
        case let v as Float: return Double(v)
        case let v as Decimal: return NSDecimalNumber(decimal: v).doubleValue
        case let v as NSNumber: return v.doubleValue
        default: return StoreValue.integer(from: value, exactly: true).map(Double.init)
        }
    }
}

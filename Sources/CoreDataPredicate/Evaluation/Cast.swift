import Foundation

/// `CAST(value, 'Type')`: conversions between the value kinds the format syntax can name.
///
/// Type names: `NSDate`/`Date` (from seconds since 2001-01-01, a numeric string, or an ISO 8601
/// string), `NSNumber` (from numbers, numeric strings, dates as seconds since 2001), `NSString`,
/// `NSDecimalNumber`, `NSUUID`/`UUID`, `NSURL`/`URL`, `NSData`/`Data` (from Base64). Any other type
/// name returns the value unchanged (Apple uses it with class names); a value that cannot be
/// converted gives nil.
enum Cast {
    static func value(_ value: Any?, to typeName: String) -> Any? {
        guard let value = ValueKinds.unwrap(value) else { return nil }
        switch typeName {
        case "NSDate", "Date":
            if let date = ValueKinds.date(value) { return date }
            if let number = Number(value) { return Date(timeIntervalSinceReferenceDate: number.doubleValue) }
            if let string = ValueKinds.string(value) {
                if let seconds = Double(string) { return Date(timeIntervalSinceReferenceDate: seconds) }
                return ISO8601DateFormatter().date(from: string)
            }
            return nil
        case "NSNumber":
            if let number = Number(value) { return number.value }
            if let date = ValueKinds.date(value) { return date.timeIntervalSinceReferenceDate }
            if let string = ValueKinds.string(value) { return number(from: string) }
            return nil
        case "NSString", "String":
            if let string = ValueKinds.string(value) { return string }
            if let number = Number(value) { return String(describing: number.value) }
            if let uuid = value as? UUID { return uuid.uuidString }
            if let url = value as? URL { return url.absoluteString }
            return String(describing: value)
        case "NSDecimalNumber", "Decimal":
            if let number = Number(value) {
                if case .decimal(let decimal) = number { return decimal }
                return Decimal(string: String(describing: number.value))
            }
            if let string = ValueKinds.string(value) { return Decimal(string: string, locale: Locale(identifier: "en_US_POSIX")) }
            return nil
        case "NSUUID", "UUID":
            if let uuid = value as? UUID { return uuid }
            return ValueKinds.string(value).flatMap(UUID.init(uuidString:))
        case "NSURL", "URL":
            if let url = value as? URL { return url }
            return ValueKinds.string(value).flatMap { URL(string: $0) }
        case "NSData", "Data":
            if let data = value as? Data { return data }
            return ValueKinds.string(value).flatMap { Data(base64Encoded: $0) }
        default:
            return value
        }
    }

    /// A number in a string: Int when integral and in range, else Double (also "nan", "inf").
    static func number(from string: String) -> Any? {
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        if let integer = Int(trimmed) { return integer }
        return Double(trimmed)
    }

    /// The constant a CAST of constants stands for, when the printer writes that constant as this
    /// CAST: dates (`CAST(123.0, "NSDate")`), non-finite numbers (`CAST("nan", "NSNumber")`),
    /// decimals, UUIDs, URLs and Data. Other casts stay function expressions.
    static func folded(_ value: NSExpression, to type: NSExpression) -> NSExpression? {
        guard case .constant(let raw?) = value.node, case .constant(let typeValue?) = type.node,
              let typeName = ValueKinds.string(typeValue) else { return nil }
        let isString = ValueKinds.string(raw) != nil
        let isNumber = Number(raw) != nil
        switch typeName {
        case "NSDate" where isNumber:
            return self.value(raw, to: typeName).map(NSExpression.init(forConstantValue:))
        case "NSNumber" where isString, "NSUUID" where isString, "NSURL" where isString, "NSData" where isString:
            return self.value(raw, to: typeName).map(NSExpression.init(forConstantValue:))
        case "NSDecimalNumber" where isString:
            // Only decimals that print back as the same string: NaN prints as "NaN", which does not parse.
            guard let decimal = self.value(raw, to: typeName) as? Decimal, !decimal.isNaN else { return nil }
            return NSExpression(forConstantValue: decimal)
        default:
            return nil
        }
    }
}

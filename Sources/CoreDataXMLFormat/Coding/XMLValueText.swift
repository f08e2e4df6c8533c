import CoreDataModel
import CoreDataStorage
import Foundation

/// Attribute values as the text of `<attribute>` elements (`Formats/xml-store.md §6`).
enum XMLValueText {
    /// The `type` name written for an attribute type (§6); `nil` for types a store cannot hold.
    static func typeName(_ type: NSAttributeType) -> String? {
        switch type {
        case .integer16AttributeType: return "int16"
        case .integer32AttributeType: return "int32"
        case .integer64AttributeType: return "int64"
        case .decimalAttributeType: return "decimal"
        case .doubleAttributeType: return "double"
        case .floatAttributeType: return "float"
        case .stringAttributeType: return "string"
        case .booleanAttributeType: return "bool"
        case .dateAttributeType: return "date"
        case .binaryDataAttributeType: return "binary"
        case .transformableAttributeType: return "transformable"
        case .UUIDAttributeType: return "uuid"
        case .URIAttributeType: return "uri"
        default: return nil
        }
    }

    /// The attribute type a `type` name stands for (§6); `nil` for a name no type has.
    static func attributeType(named name: String) -> NSAttributeType? {
        NSAttributeType.allCases.first { typeName($0) == name }
    }

    /// Every `type` name a file may use (§6).
    static let knownTypeNames: Set<String> = [
        "int16", "int32", "int64", "decimal", "double", "float", "string", "bool", "date", "binary", "transformable", "uuid", "uri",
    ]

    /// Shortest text that reads back to the same double; `nan`, `inf`, `-inf` (§6).
    static func double(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        return "\(value)"
    }

    /// The text of `value` for an attribute of `type`, and whether it is base64 of a string (§10).
    /// `nil` when the value is not of the attribute's kind.
    static func encode(_ value: StoreValue, as type: NSAttributeType) -> (text: String, isBase64: Bool)? {
        switch (type, value) {
        case (.integer16AttributeType, .integer(let v)), (.integer32AttributeType, .integer(let v)), (.integer64AttributeType, .integer(let v)):
            return (String(v), false)
        case (.decimalAttributeType, .decimal(let v)): return (v.description, false)
        case (.doubleAttributeType, .double(let v)), (.floatAttributeType, .double(let v)): return (double(v), false)
        case (.dateAttributeType, .date(let v)): return (double(v.timeIntervalSinceReferenceDate), false)
        case (.booleanAttributeType, .bool(let v)): return (v ? "1" : "0", false)
        case (.stringAttributeType, .string(let v)):
            return XMLCharacters.canHold(v) ? (v, false) : (Base64Text.encode(Data(v.utf8)), true)
        case (.binaryDataAttributeType, .data(let v)), (.transformableAttributeType, .data(let v)): return (Base64Text.encode(v), false)
        case (.UUIDAttributeType, .uuid(let v)): return (v.uuidString, false)
        case (.URIAttributeType, .uri(let v)): return XMLCharacters.canHold(v.absoluteString) ? (v.absoluteString, false) : nil
        default: return nil
        }
    }

    /// The value `text` spells for an attribute of `type`; `nil` when it spells none.
    static func decode(_ text: String, isBase64: Bool, as type: NSAttributeType) -> StoreValue? {
        let trimmed = type == .stringAttributeType ? text : trimmingWhitespace(text)
        switch type {
        case .integer16AttributeType:
            return Int16(trimmed).map { .integer(Int64($0)) }
        case .integer32AttributeType:
            return Int32(trimmed).map { .integer(Int64($0)) }
        case .integer64AttributeType:
            return Int64(trimmed).map { .integer($0) }
        case .decimalAttributeType:
            guard isDecimalNumber(trimmed), let value = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN else {
                return nil
            }
            return .decimal(value)
        case .doubleAttributeType, .floatAttributeType:
            return Double(trimmed).map { .double($0) }
        case .dateAttributeType:
            guard let seconds = Double(trimmed), seconds.isFinite else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .booleanAttributeType:
            switch trimmed {
            case "1", "true", "YES": return .bool(true)
            case "0", "false", "NO": return .bool(false)
            default: return nil
            }
        case .stringAttributeType:
            guard isBase64 else { return .string(text) }
            guard let bytes = Base64Text.decode(text), let string = String(validating: bytes, as: UTF8.self) else { return nil }
            return .string(string)
        case .binaryDataAttributeType, .transformableAttributeType:
            return Base64Text.decode(text).map { .data($0) }
        case .UUIDAttributeType:
            return UUID(uuidString: trimmed).map { .uuid($0) }
        case .URIAttributeType:
            return URL(string: trimmed).map { .uri($0) }
        default:
            return nil
        }
    }

    /// `text` without leading and trailing whitespace; O(1) when there is none (the usual case:
    /// Foundation's trimming costs more than parsing the value).
    private static func trimmingWhitespace(_ text: String) -> String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        guard let first = text.utf8.first, let last = text.utf8.last, isSpace(first) || isSpace(last) else { return text }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `-12.25`, `3`, `1.5e-7`: what `Decimal(string:)` reads whole (it stops at the first
    /// character it does not know, so the text is checked first).
    private static func isDecimalNumber(_ text: String) -> Bool {
        var scalars = Substring(text).unicodeScalars[...]
        if scalars.first == "-" || scalars.first == "+" { scalars = scalars.dropFirst() }
        var digits = 0
        while let c = scalars.first, ("0"..."9").contains(c) { digits += 1; scalars = scalars.dropFirst() }
        if scalars.first == "." {
            scalars = scalars.dropFirst()
            while let c = scalars.first, ("0"..."9").contains(c) { digits += 1; scalars = scalars.dropFirst() }
        }
        guard digits > 0 else { return false }
        if scalars.first == "e" || scalars.first == "E" {
            scalars = scalars.dropFirst()
            if scalars.first == "-" || scalars.first == "+" { scalars = scalars.dropFirst() }
            var exponent = 0
            while let c = scalars.first, ("0"..."9").contains(c) { exponent += 1; scalars = scalars.dropFirst() }
            guard exponent > 0, exponent <= 3 else { return false }
        }
        return scalars.isEmpty
    }
}

/// The characters XML 1.0 can carry (`Formats/xml-store.md §10`).
enum XMLCharacters {
    /// Whether every character of `text` is allowed in an XML 1.0 document.
    static func canHold(_ text: String) -> Bool {
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x20 {
                if value != 0x09 && value != 0x0A && value != 0x0D { return false }
            } else if value == 0xFFFE || value == 0xFFFF {
                return false
            }
        }
        return true
    }
}

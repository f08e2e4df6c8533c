import CoreDataStorage
import Foundation

/// Stored values as `dump` prints them: JSON values, table cells and XML text. Dates are ISO
/// 8601, binary data Base64, relationships the destination IDs (`Entity/pN`).
enum StoreValueFormatting {
    /// The XML element type of a value (`dump --format xml`).
    static func typeName(_ value: StoreValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer: return "integer"
        case .double: return "double"
        case .decimal: return "decimal"
        case .string: return "string"
        case .date: return "date"
        case .data: return "binary"
        case .uuid: return "uuid"
        case .uri: return "uri"
        case .reference: return "to-one"
        case .references: return "to-many"
        }
    }

    static func json(_ value: StoreValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let v): return .bool(v)
        case .integer(let v): return .integer(v)
        case .double(let v): return .number(v)
        case .decimal(let v): return .string(v.description)
        case .string(let v): return .string(v)
        case .date(let v): return .string(date(v))
        case .data(let v): return .string(v.base64EncodedString())
        case .uuid(let v): return .string(v.uuidString)
        case .uri(let v): return .string(v.absoluteString)
        case .reference(let id): return .string(id.description)
        case .references(let ids): return .array(ids.map { .string($0.description) })
        }
    }

    /// The value as plain text (table cells, XML element text).
    static func text(_ value: StoreValue) -> String {
        switch value {
        case .null: return ""
        case .references(let ids): return ids.map(\.description).joined(separator: " ")
        default:
            if case .string(let text) = json(value) { return text }
            return json(value).compact
        }
    }

    static func date(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    static func xmlEscaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            // XML 1.0 has no way to write the other control characters.
            case let c where c.value < 0x20 && c != "\n" && c != "\t" && c != "\r": out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

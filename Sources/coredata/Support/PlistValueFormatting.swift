import Foundation

/// Store metadata values (property-list types) as text and JSON; `Data` (the model version
/// hashes) as Base64.
enum PlistValueFormatting {
    static func json(_ value: Any) -> JSONValue {
        switch value {
        case let value as String: return .string(value)
        case let value as Bool: return .bool(value)
        case let value as Int: return .integer(Int64(value))
        case let value as Int64: return .integer(value)
        case let value as Double: return .number(value)
        case let value as Data: return .string(value.base64EncodedString())
        case let value as Date: return .string(ISO8601DateFormatter().string(from: value))
        case let value as [Any]: return .array(value.map(json))
        case let value as [String: Any]: return .object(value.keys.sorted().map { ($0, json(value[$0] as Any)) })
        default: return .string("\(value)")
        }
    }

    /// Indented `key  value` lines; dictionaries nest.
    static func lines(_ values: [String: Any], indent: String) -> [String] {
        var lines: [String] = []
        for key in values.keys.sorted() {
            let value = values[key] as Any
            if let nested = value as? [String: Any] {
                lines.append("\(indent)\(key)")
                lines += self.lines(nested, indent: indent + "  ")
            } else if let list = value as? [Any] {
                lines.append("\(indent)\(key)  \(list.map { text($0) }.joined(separator: ", "))")
            } else {
                lines.append("\(indent)\(key)  \(text(value))")
            }
        }
        return lines
    }

    static func text(_ value: Any) -> String {
        switch json(value) {
        case .string(let text): return text
        case let other: return other.compact
        }
    }
}

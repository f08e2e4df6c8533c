/// JSON for `--json` and `dump --format jsonl`: objects keep their keys in the order written,
/// so output reads in a stable, logical order (`entity`, `id`, then the values).
indirect enum JSONValue {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// Counts by name, as an object with the names in order.
    static func counts(_ counts: [String: Int]) -> JSONValue {
        .object(counts.keys.sorted().map { ($0, .integer(Int64(counts[$0] ?? 0))) })
    }

    /// One line, no spaces (JSON Lines).
    var compact: String {
        var out = ""
        write(into: &out, indent: nil, depth: 0)
        return out
    }

    /// Indented by two spaces, for whole documents.
    var pretty: String {
        var out = ""
        write(into: &out, indent: "  ", depth: 0)
        return out
    }

    private func write(into out: inout String, indent: String?, depth: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .number(let value):
            // JSON has no NaN or infinity; they travel as strings.
            out += value.isFinite ? "\(value)" : Self.quoted("\(value)")
        case .string(let value): out += Self.quoted(value)
        case .array(let items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "["
            for (position, item) in items.enumerated() {
                if position > 0 { out += "," }
                newline(&out, indent, depth + 1)
                item.write(into: &out, indent: indent, depth: depth + 1)
            }
            newline(&out, indent, depth)
            out += "]"
        case .object(let members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{"
            for (position, (key, value)) in members.enumerated() {
                if position > 0 { out += "," }
                newline(&out, indent, depth + 1)
                out += Self.quoted(key)
                out += indent == nil ? ":" : ": "
                value.write(into: &out, indent: indent, depth: depth + 1)
            }
            newline(&out, indent, depth)
            out += "}"
        }
    }

    private func newline(_ out: inout String, _ indent: String?, _ depth: Int) {
        guard let indent else { return }
        out += "\n" + String(repeating: indent, count: depth)
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

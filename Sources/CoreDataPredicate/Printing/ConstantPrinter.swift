import Foundation

/// Constants in format syntax. Values with no literal syntax are written as the CAST that the
/// parser folds back into the same constant: dates as `CAST(<seconds since 2001>, "NSDate")`,
/// NaN and infinities as `CAST("nan", "NSNumber")`, decimals, UUIDs, URLs and Data likewise.
/// Booleans print as 1 and 0, as on Apple platforms (they are NSNumbers there).
enum ConstantPrinter {
    static func constant(_ value: Any?) -> (text: String, precedence: Precedence) {
        guard let value = ValueKinds.unwrap(value) else { return ("nil", .postfix) }
        if let string = ValueKinds.string(value) { return (quoted(string), .postfix) }
        if let number = Number(value) { return self.number(number) }
        if let date = ValueKinds.date(value) {
            return ("CAST(" + self.number(.double(date.timeIntervalSinceReferenceDate)).text + ", \"NSDate\")", .postfix)
        }
        if let uuid = value as? UUID { return ("CAST(" + quoted(uuid.uuidString) + ", \"NSUUID\")", .postfix) }
        if let url = value as? URL { return ("CAST(" + quoted(url.absoluteString) + ", \"NSURL\")", .postfix) }
        if let data = value as? Data { return ("CAST(" + quoted(data.base64EncodedString()) + ", \"NSData\")", .postfix) }
        if let symbol = value as? PredicateIndexSymbol { return (symbol.rawValue, .postfix) }
        if let elements = ValueKinds.collection(value) {
            var texts = elements.map { constant($0).text }
            if ValueKinds.isUnordered(value) { texts.sort() }  // A stable text for a set.
            return ("{" + texts.joined(separator: ", ") + "}", .postfix)
        }
        if let dictionary = ValueKinds.dictionary(value) {
            // No dictionary literal exists; IN and CONTAINS look only at the values.
            return ("{" + dictionary.values.map { constant($0).text }.sorted().joined(separator: ", ") + "}", .postfix)
        }
        return (String(describing: value), .postfix)
    }

    /// A number; a negative one binds like a unary minus (so `(-5).x` keeps its parentheses).
    static func number(_ number: Number) -> (text: String, precedence: Precedence) {
        let text: String
        switch number {
        case .int(let v): text = String(v)
        case .uint(let v): text = String(v)
        case .double(let v):
            if v.isNaN { return ("CAST(\"nan\", \"NSNumber\")", .postfix) }
            if v.isInfinite { return (v < 0 ? "CAST(\"-inf\", \"NSNumber\")" : "CAST(\"inf\", \"NSNumber\")", .postfix) }
            text = v.description  // Swift's shortest representation that reads back exactly.
        case .decimal(let v):
            return ("CAST(" + quoted(v.description) + ", \"NSDecimalNumber\")", .postfix)
        }
        return (text, text.hasPrefix("-") ? .prefix : .postfix)
    }

    /// A double-quoted string literal with escapes for quotes, backslashes and control characters.
    /// Runs of two or more `%` are doubled, because the lexer reads `%%` as one `%` (a lone `%`
    /// stays as it is, which keeps the common `'50%'` readable).
    static func quoted(_ string: String) -> String {
        var output = "\""
        var percentRun = 0
        func flushPercents() {
            if percentRun == 1 { output += "%" } else if percentRun > 1 { output += String(repeating: "%", count: percentRun * 2) }
            percentRun = 0
        }
        for scalar in string.unicodeScalars {
            if scalar == "%" {
                percentRun += 1
                continue
            }
            flushPercents()
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\t": output += "\\t"
            case "\r": output += "\\r"
            default:
                if scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}" {
                    output += unicodeEscape(scalar)
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        flushPercents()
        return output + "\""
    }

    /// `\uXXXX`, or a surrogate pair of them above U+FFFF.
    private static func unicodeEscape(_ scalar: Unicode.Scalar) -> String {
        func hex4(_ value: UInt32) -> String {
            let digits = String(value, radix: 16, uppercase: true)
            return "\\u" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
        guard scalar.value > 0xFFFF else { return hex4(scalar.value) }
        let offset = scalar.value - 0x10000
        return hex4(0xD800 + (offset >> 10)) + hex4(0xDC00 + (offset & 0x3FF))
    }
}

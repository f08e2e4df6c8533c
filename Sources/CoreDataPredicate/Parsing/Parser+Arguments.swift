import Foundation

// Format arguments: `%@`, `%K`, `%d`, `%f`, `%s`, positional `%2$@`.

extension PredicateParser {
    /// The expression for a format specifier, from the next (or the numbered) argument.
    mutating func argument(_ specifier: FormatSpecifier, at token: Token) throws(NSPredicateSyntaxError) -> NSExpression {
        let index: Int
        if let position = specifier.position {
            index = position
        } else {
            index = nextArgument
            nextArgument += 1
        }
        guard index < arguments.count else {
            throw error("missing argument for \(specifier.text): argument \(index + 1) is needed, \(arguments.count) given", at: token)
        }
        let value = ValueKinds.unwrap(arguments[index])
        switch specifier.conversion {
        case .object:
            return NSExpression(forConstantValue: value)
        case .keyPath:
            guard let value, let keyPath = ValueKinds.string(value) else {
                throw error("\(specifier.text) needs a String key path, got \(typeName(value))", at: token)
            }
            return NSExpression(forKeyPath: keyPath)
        case .integer:
            guard let value, let number = Number(value), let integer = integerValue(number) else {
                throw error("\(specifier.text) needs an integer, got \(typeName(value))", at: token)
            }
            return NSExpression(forConstantValue: integer)
        case .double:
            guard let value, let number = Number(value) else {
                throw error("\(specifier.text) needs a number, got \(typeName(value))", at: token)
            }
            return NSExpression(forConstantValue: number.doubleValue)
        case .string:
            guard let value, let string = ValueKinds.string(value) else {
                throw error("\(specifier.text) needs a String, got \(typeName(value))", at: token)
            }
            return NSExpression(forConstantValue: string)
        }
    }

    /// An integral number as Int (or UInt64 above Int.max); nil for fractions.
    private func integerValue(_ number: Number) -> Any? {
        switch number {
        case .int: return number.value
        case .uint(let value): return value
        case .double, .decimal: return number.int64Value.map { Number.int($0).value }
        }
    }

    private func typeName(_ value: Any?) -> String {
        guard let value else { return "nil" }
        return String(describing: type(of: value))
    }
}

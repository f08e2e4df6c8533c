import Foundation

/// Writes trees in Apple's format syntax: `predicateFormat` and expression descriptions.
///
/// The output parses back to an equal tree (see ``NSPredicate/predicateFormat`` for the
/// exceptions). Parentheses are written where ``Precedence`` needs them and around nested AND/OR
/// groups, so that `(a AND b) AND c` keeps its shape.
enum Printer {
    static func format(_ predicate: NSPredicate) -> String {
        var output = ""
        write(predicate, into: &output)
        return output
    }

    static func format(_ expression: NSExpression) -> String {
        write(expression).text
    }

    // MARK: - Predicates

    private static func write(_ predicate: NSPredicate, into output: inout String) {
        switch predicate.node {
        case .constant(let value):
            output += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .block:
            output += "BLOCKPREDICATE"
        case .comparison(let c):
            switch c.modifier {
            case .direct: break
            case .any: output += "ANY "
            case .all: output += "ALL "
            }
            output += write(c.left, atLeast: .setOperation)
            output += " " + symbol(for: c.type) + options(c.options) + " "
            output += write(c.right, atLeast: .setOperation)
        case .compound(let type, let subpredicates):
            switch (type, subpredicates.count) {
            case (.and, 0): output += "TRUEPREDICATE"
            case (.or, 0): output += "FALSEPREDICATE"
            case (.not, 0): output += "NOT TRUEPREDICATE"
            case (.not, 1):
                output += "NOT "
                writeGrouped(subpredicates[0], into: &output)
            case (.not, _):
                output += "NOT ("
                write(NSCompoundPredicate(type: .and, subpredicates: subpredicates), into: &output)
                output += ")"
            case (_, 1):
                write(subpredicates[0], into: &output)
            default:
                for (index, subpredicate) in subpredicates.enumerated() {
                    if index > 0 { output += type == .and ? " AND " : " OR " }
                    writeGrouped(subpredicate, into: &output)
                }
            }
        }
    }

    /// A subpredicate of AND, OR or NOT: AND and OR groups in parentheses.
    private static func writeGrouped(_ predicate: NSPredicate, into output: inout String) {
        if case .compound(let type, let subpredicates) = predicate.node, type != .not, subpredicates.count > 1 {
            output += "("
            write(predicate, into: &output)
            output += ")"
        } else {
            write(predicate, into: &output)
        }
    }

    static func symbol(for type: NSComparisonPredicate.Operator) -> String {
        switch type {
        case .lessThan: return "<"
        case .lessThanOrEqualTo: return "<="
        case .greaterThan: return ">"
        case .greaterThanOrEqualTo: return ">="
        case .equalTo: return "=="
        case .notEqualTo: return "!="
        case .matches: return "MATCHES"
        case .like: return "LIKE"
        case .beginsWith: return "BEGINSWITH"
        case .endsWith: return "ENDSWITH"
        case .in: return "IN"
        case .customSelector: return "CUSTOMSELECTOR"
        case .contains: return "CONTAINS"
        case .between: return "BETWEEN"
        case .utiEquals: return "UTI-EQUALS"
        case .utiConformsTo: return "UTI-CONFORMS-TO"
        }
    }

    private static func options(_ options: NSComparisonPredicate.Options) -> String {
        var letters = ""
        if options.contains(.caseInsensitive) { letters += "c" }
        if options.contains(.diacriticInsensitive) { letters += "d" }
        if options.contains(.normalized) { letters += "n" }
        return letters.isEmpty ? "" : "[" + letters + "]"
    }

    // MARK: - Expressions

    /// The expression, in parentheses if it binds more weakly than `minimum`.
    private static func write(_ expression: NSExpression, atLeast minimum: Precedence) -> String {
        let (text, precedence) = write(expression)
        return precedence >= minimum ? text : "(" + text + ")"
    }

    private static func list(_ expressions: [NSExpression]) -> String {
        expressions.map { write($0, atLeast: .setOperation) }.joined(separator: ", ")
    }

    private static func write(_ expression: NSExpression) -> (text: String, precedence: Precedence) {
        switch expression.node {
        case .constant(let value):
            return ConstantPrinter.constant(value)
        case .evaluatedObject:
            return ("SELF", .postfix)
        case .variable(let name):
            return ("$" + name, .postfix)
        case .keyPath(let operand, _, let components):
            let escaped = components.map(escapedKey).joined(separator: ".")
            guard let operand else { return (escaped, .postfix) }
            return (write(operand, atLeast: .postfix) + "." + escaped, .postfix)
        case .function(let name, let operand, let arguments):
            return function(name, operand: operand, arguments: arguments)
        case .aggregate(let elements):
            return ("{" + list(elements) + "}", .postfix)
        case .union(let l, let r):
            return (write(l, atLeast: .setOperation) + " UNION " + write(r, atLeast: Precedence.setOperation.stronger), .setOperation)
        case .intersect(let l, let r):
            return (write(l, atLeast: .setOperation) + " INTERSECT " + write(r, atLeast: Precedence.setOperation.stronger), .setOperation)
        case .minus(let l, let r):
            return (write(l, atLeast: .setOperation) + " MINUS " + write(r, atLeast: Precedence.setOperation.stronger), .setOperation)
        case .subquery(let collection, let variable, let predicate):
            return ("SUBQUERY(" + write(collection, atLeast: .setOperation) + ", $" + variable + ", " + format(predicate) + ")", .postfix)
        case .anyKey:
            return ("ANYKEY", .postfix)
        case .block(_, let arguments):
            return ("BLOCK(<block>, " + list(arguments) + ")", .postfix)
        case .conditional(let predicate, let t, let f):
            return ("TERNARY(" + format(predicate) + ", " + write(t, atLeast: .setOperation) + ", " + write(f, atLeast: .setOperation) + ")", .postfix)
        }
    }

    private static func function(_ name: String, operand: NSExpression?, arguments: [NSExpression]) -> (text: String, precedence: Precedence) {
        if let operand {
            let rest = arguments.isEmpty ? "" : ", " + list(arguments)
            return ("FUNCTION(" + write(operand, atLeast: .setOperation) + ", " + ConstantPrinter.quoted(name) + rest + ")", .postfix)
        }
        if name == BuiltinFunctions.complementName, arguments.count == 1 {
            return ("~" + write(arguments[0], atLeast: .prefix), .prefix)
        }
        if arguments.count == 2 {
            if let infix = BuiltinFunctions.infix[name] {
                // Left-associative operators need a stronger right operand; `**` (right-associative)
                // a stronger left one.
                let isPower = infix.precedence == .power
                let left = write(arguments[0], atLeast: isPower ? infix.precedence.stronger : infix.precedence)
                let right = write(arguments[1], atLeast: isPower ? infix.precedence : infix.precedence.stronger)
                return (left + " " + infix.symbol + " " + right, infix.precedence)
            }
            if name == BuiltinFunctions.castName {
                return ("CAST(" + list(arguments) + ")", .postfix)
            }
            if name == BuiltinFunctions.indexName {
                return (write(arguments[0], atLeast: .postfix) + "[" + write(arguments[1], atLeast: .setOperation) + "]", .postfix)
            }
        }
        // Apple's printed form: the selector-style name, then the arguments (`sum:(numbers)`,
        // `uppercase:(name)`, `now()`); the parser reads it back for built-in names, as it reads
        // the short form (`sum(numbers)`) people write.
        return (name + "(" + list(arguments) + ")", .postfix)
    }

    /// A key path component, with `#` before reserved words.
    static func escapedKey(_ key: String) -> String {
        Keyword.named(key) != nil ? "#" + key : key
    }
}

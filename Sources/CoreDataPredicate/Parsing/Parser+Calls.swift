import Foundation

// Calls: built-in functions by short name (`sum(x)`) or selector name (`sum:(x)`),
// FUNCTION(receiver, 'selector', …), TERNARY(…), SUBQUERY(…), CAST(…).

extension PredicateParser {
    /// At an identifier followed by `(` or `:`.
    mutating func parseCall(named name: String) throws(NSPredicateSyntaxError) -> NSExpression {
        let nameToken = current
        try advance()
        if current.isSymbol(.colon) {
            return try parseSelectorCall(firstPart: name, at: nameToken)
        }
        switch name.uppercased() {
        case "FUNCTION": return try parseFunction(at: nameToken)
        case "TERNARY": return try parseTernary(at: nameToken)
        default: break
        }
        try expect(.leftParen)
        let arguments = try parseList(closing: .rightParen)
        guard let function = BuiltinFunctions.resolve(shortName: name, argumentCount: arguments.count) else {
            if BuiltinFunctions.hasShortName(name) {
                throw error("wrong number of arguments (\(arguments.count)) for function '\(name)'", at: nameToken)
            }
            throw error("unknown function '\(name)'", at: nameToken)
        }
        return try builtin(function.name, arguments: arguments, at: nameToken)
    }

    /// `add:to:(1, 2)`: Apple's printed form of a function expression.
    private mutating func parseSelectorCall(firstPart: String, at nameToken: Token) throws(NSPredicateSyntaxError) -> NSExpression {
        var name = firstPart
        while current.isSymbol(.colon) {
            name += ":"
            try advance()
            // Another part only when a colon follows it: `add:to:(`.
            guard case .identifier(let part) = current.kind, next.isSymbol(.colon) else { break }
            name += part
            try advance()
        }
        try expect(.leftParen, "after the function name")
        let arguments = try parseList(closing: .rightParen)
        guard let function = BuiltinFunctions.named(name) else {
            throw error("unknown function '\(name)'", at: nameToken)
        }
        guard function.accepts(arguments.count) else {
            throw error("wrong number of arguments (\(arguments.count)) for function '\(name)'", at: nameToken)
        }
        return try builtin(name, arguments: arguments, at: nameToken)
    }

    private func builtin(_ name: String, arguments: [NSExpression], at token: Token) throws(NSPredicateSyntaxError) -> NSExpression {
        if name == BuiltinFunctions.castName, arguments.count == 2, let folded = Cast.folded(arguments[0], to: arguments[1]) {
            return folded
        }
        return try checked(NSExpression(node: .function(name: name, operand: nil, arguments: arguments)), at: token)
    }

    /// `FUNCTION(receiver, 'selector', arguments…)`.
    private mutating func parseFunction(at token: Token) throws(NSPredicateSyntaxError) -> NSExpression {
        try expect(.leftParen)
        let list = try parseList(closing: .rightParen)
        guard list.count >= 2, case .constant(let selector?) = list[1].node, let name = ValueKinds.string(selector) else {
            throw error("FUNCTION needs a receiver and a selector name string, as in FUNCTION(SELF, 'name:', x)", at: token)
        }
        return try checked(NSExpression(forFunction: list[0], selectorName: name, arguments: Array(list.dropFirst(2))), at: token)
    }

    /// `TERNARY(predicate, valueIfTrue, valueIfFalse)`.
    private mutating func parseTernary(at token: Token) throws(NSPredicateSyntaxError) -> NSExpression {
        try expect(.leftParen)
        let condition = try parsePredicateOperand(.lowest)
        try expect(.comma, "after the TERNARY condition")
        let ifTrue = try parseExpressionOperand(.setOperation)
        try expect(.comma, "after the TERNARY true value")
        let ifFalse = try parseExpressionOperand(.setOperation)
        try expect(.rightParen, "to close TERNARY")
        return try checked(NSExpression(forConditional: condition, trueExpression: ifTrue, falseExpression: ifFalse), at: token)
    }

    /// `SUBQUERY(collection, $variable, predicate)`.
    mutating func parseSubquery() throws(NSPredicateSyntaxError) -> NSExpression {
        let token = current
        try advance()
        try expect(.leftParen, "after SUBQUERY")
        let collection = try parseExpressionOperand(.setOperation)
        try expect(.comma, "after the SUBQUERY collection")
        guard case .variable(let variable) = current.kind else {
            throw error("expected the SUBQUERY iterator variable such as $x, found \(describe(current))", at: current)
        }
        try advance()
        try expect(.comma, "after the SUBQUERY variable")
        let predicate = try parsePredicateOperand(.lowest)
        try expect(.rightParen, "to close SUBQUERY")
        let subquery = NSExpression(node: .subquery(collection: collection, variable: variable, predicate: predicate))
        return try checked(subquery, at: token)
    }

    /// `CAST(value, 'Type')`. A constant that the printer writes as a CAST (a date, a UUID, …) is
    /// folded back into that constant.
    mutating func parseCast() throws(NSPredicateSyntaxError) -> NSExpression {
        let token = current
        try advance()
        try expect(.leftParen, "after CAST")
        let value = try parseExpressionOperand(.setOperation)
        try expect(.comma, "after the CAST value")
        let type = try parseExpressionOperand(.setOperation)
        try expect(.rightParen, "to close CAST")
        return try builtin(BuiltinFunctions.castName, arguments: [value, type], at: token)
    }
}

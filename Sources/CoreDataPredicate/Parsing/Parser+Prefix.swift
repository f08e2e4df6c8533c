import Foundation

// What can start an operand: literals, key paths, variables, format arguments, calls, `(`, `{`,
// NOT, ANY/ALL/NONE/SOME, unary minus.

extension PredicateParser {
    mutating func parsePrefix() throws(NSPredicateSyntaxError) -> Parsed {
        let token = current
        func expression(_ expression: NSExpression) -> Parsed {
            Parsed(value: .expression(expression), offset: token.offset)
        }
        func predicate(_ predicate: NSPredicate) -> Parsed {
            Parsed(value: .predicate(predicate), offset: token.offset)
        }
        switch token.kind {
        case .symbol(.leftParen):
            try advance()
            let inner = try parse(.lowest)
            try expect(.rightParen, "to close the '(' at offset \(token.offset)")
            return Parsed(value: inner.value, offset: token.offset)
        case .symbol(.bang), .keyword(.not):
            try advance()
            let operand = try parsePredicateOperand(.not)
            return predicate(try checked(NSCompoundPredicate(notPredicateWithSubpredicate: operand), at: token))
        case .symbol(.minus):
            try advance()
            let operand = try parseExpressionOperand(.prefix)
            return expression(try checked(PredicateParser.negated(operand), at: token))
        case .symbol(.tilde):
            // Unlike unary minus, never folded: Apple's tree keeps `onesComplement:` of a constant.
            try advance()
            let operand = try parseExpressionOperand(.prefix)
            let complement = NSExpression(node: .function(name: "onesComplement:", operand: nil, arguments: [operand]))
            return expression(try checked(complement, at: token))
        case .symbol(.leftBrace):
            return expression(try parseAggregate())
        case .keyword(let keyword):
            return try parseKeyword(keyword, token: token)
        case .identifier(let name):
            if next.isSymbol(.leftParen) || next.isSymbol(.colon) {
                return expression(try parseCall(named: name))
            }
            try advance()
            return expression(NSExpression(forKeyPath: name))
        case .escapedIdentifier(let name):
            try advance()
            return expression(NSExpression(forKeyPath: name))
        case .collectionOperator(let name):
            try advance()
            return expression(NSExpression(forKeyPath: "@" + name))
        case .variable(let name):
            try advance()
            if current.isSymbol(.colon), next.isSymbol(.equal) {
                throw error("variable assignment ($\(name) := …) is not supported", at: token)
            }
            return expression(NSExpression(forVariable: name))
        case .string(let text):
            try advance()
            return expression(NSExpression(forConstantValue: text))
        case .number(let number):
            try advance()
            return expression(NSExpression(forConstantValue: number.value))
        case .argument(let specifier):
            let value = try argument(specifier, at: token)
            try advance()
            return expression(value)
        default:
            throw error("expected an expression, found \(describe(token))", at: token)
        }
    }

    private mutating func parseKeyword(_ keyword: Keyword, token: Token) throws(NSPredicateSyntaxError) -> Parsed {
        func expression(_ expression: NSExpression) -> Parsed {
            Parsed(value: .expression(expression), offset: token.offset)
        }
        switch keyword {
        case .truePredicate, .falsePredicate:
            try advance()
            return Parsed(value: .predicate(NSPredicate(value: keyword == .truePredicate)), offset: token.offset)
        case .any, .some, .all, .none:
            try advance()
            let left = try parseExpressionOperand(.setOperation)
            let comparison = try parseComparison(left: left, modifier: keyword == .all ? .all : .any)
            // NONE is NOT ANY: Apple's modifier enum has no NONE.
            let predicate = keyword == .none ? NSCompoundPredicate(notPredicateWithSubpredicate: comparison) : comparison
            return Parsed(value: .predicate(try checked(predicate, at: token)), offset: token.offset)
        case .nil, .null:
            try advance()
            return expression(NSExpression(forConstantValue: nil))
        case .true, .yes:
            try advance()
            return expression(NSExpression(forConstantValue: true))
        case .false, .no:
            try advance()
            return expression(NSExpression(forConstantValue: false))
        case .self:
            try advance()
            return expression(NSExpression.expressionForEvaluatedObject())
        case .anyKey:
            try advance()
            return expression(NSExpression.expressionForAnyKey())
        case .subquery:
            return expression(try parseSubquery())
        case .cast:
            return expression(try parseCast())
        case .fetch:
            throw error("FETCH(…) is not supported in format strings (build it with NSFetchRequestExpression); write #\(Lexer.text(of: token, in: scalars)) for a key of that name", at: token)
        case .first, .last, .size:
            throw error("\(describe(token)) is only meaningful as an index, as in tags[\(keyword.rawValue)]; write #\(Lexer.text(of: token, in: scalars)) for a key of that name", at: token)
        default:
            throw error("expected an expression, found the reserved word \(describe(token)) (write #\(Lexer.text(of: token, in: scalars)) for a key of that name)", at: token)
        }
    }

    /// `-x`: a negative constant for a number, `0 - x` otherwise (so it prints and parses back).
    static func negated(_ operand: NSExpression) -> NSExpression {
        if case .constant(let value?) = operand.node, let number = Number(value) {
            return NSExpression(forConstantValue: Arithmetic.negate(number).value)
        }
        return NSExpression(node: .function(name: "from:subtract:", operand: nil, arguments: [NSExpression(forConstantValue: 0), operand]))
    }

    /// After `.`: one key path component, joined to the key path before it.
    mutating func parseMember(of operand: NSExpression) throws(NSPredicateSyntaxError) -> NSExpression {
        let token = current
        let component: String
        switch token.kind {
        case .identifier(let name), .escapedIdentifier(let name): component = name
        case .collectionOperator(let name): component = "@" + name
        case .keyword: component = Lexer.text(of: token, in: scalars)  // After a dot a keyword can only be a key.
        default: throw error("expected a key after '.', found \(describe(token))", at: token)
        }
        try advance()
        switch operand.node {
        case .keyPath(let base, let path, _): return NSExpression.keyPath(path + "." + component, operand: base)
        case .evaluatedObject: return NSExpression(forKeyPath: component)
        default: return NSExpression.keyPath(component, operand: operand)
        }
    }

    /// After `[`: `FIRST`, `LAST`, `SIZE` or an index expression, then `]`.
    mutating func parseSubscript(of collection: NSExpression) throws(NSPredicateSyntaxError) -> NSExpression {
        let index: NSExpression
        if case .keyword(let keyword) = current.kind, next.isSymbol(.rightBracket),
           let symbol = PredicateIndexSymbol(rawValue: keyword.rawValue) {
            index = NSExpression(forConstantValue: symbol)
            try advance()
        } else {
            index = try parseExpressionOperand(.setOperation)
        }
        try expect(.rightBracket, "to close the index")
        return NSExpression(node: .function(name: BuiltinFunctions.indexName, operand: nil, arguments: [collection, index]))
    }

    /// `{a, b, …}`.
    private mutating func parseAggregate() throws(NSPredicateSyntaxError) -> NSExpression {
        let open = current
        try advance()
        let elements = try parseList(closing: .rightBrace)
        return try checked(NSExpression(forAggregate: elements), at: open)
    }

    /// Comma-separated expressions up to and including `closing`.
    mutating func parseList(closing: Symbol) throws(NSPredicateSyntaxError) -> [NSExpression] {
        var elements: [NSExpression] = []
        if current.isSymbol(closing) {
            try advance()
            return elements
        }
        while true {
            elements.append(try parseExpressionOperand(.setOperation))
            if current.isSymbol(.comma) {
                try advance()
                continue
            }
            guard current.isSymbol(closing) else {
                throw error("expected ',' or '\(closing.rawValue)', found \(describe(current))", at: current)
            }
            try advance()
            return elements
        }
    }
}

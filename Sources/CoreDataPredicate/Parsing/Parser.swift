import Foundation

// The format syntax this parser accepts: Apple's "Predicate Format String Syntax", with the
// additions noted. Keywords match without regard to case; a key named like a keyword is written
// with `#` (`#size`). Operators from weakest to strongest (see Precedence):
//
//   predicate   := predicate ("OR" | "||") predicate            n-ary: a OR b OR c is one compound
//                | predicate ("AND" | "&&") predicate           n-ary likewise
//                | ("NOT" | "!") predicate
//                | ("ANY" | "SOME" | "ALL" | "NONE") expr comparison-op options? expr
//                | expr comparison-op options? expr             not associative: a < b < c is an error
//                | "TRUEPREDICATE" | "FALSEPREDICATE" | "(" predicate ")"
//   comparison-op := "==" | "=" | "!=" | "<>" | "<" | "<=" | "=<" | ">" | ">=" | "=>"
//                | "IN" | "CONTAINS" | "BEGINSWITH" | "ENDSWITH" | "LIKE" | "MATCHES" | "BETWEEN"
//                | "UTI-CONFORMS-TO" | "UTI-EQUALS"                 no options
//   options     := "[" letters from c, d, n (and l, ignored) "]"
//   expr        := expr ("UNION" | "INTERSECT" | "MINUS") expr  contextual words, not reserved
//                | expr "|" expr | expr "^" expr | expr "&" expr | expr ("<<" | ">>") expr
//                | expr ("+" | "-") expr | expr ("*" | "/") expr | expr "**" expr (right-assoc.)
//                | "-" expr                                      a number literal folds to a constant
//                | "~" expr                                      onesComplement:
//                | expr "." key | expr "[" (expr | "FIRST" | "LAST" | "SIZE") "]"
//                | literal | key | "$" name | "SELF" | "ANYKEY" | format-argument | "{" exprs? "}"
//                | name "(" exprs? ")"                           built-in function by short name
//                | name ":" (name ":")* "(" exprs? ")"           built-in function by selector name
//                | "FUNCTION(" expr "," string ("," exprs)? ")" | "TERNARY(" predicate "," expr "," expr ")"
//                | "SUBQUERY(" expr "," "$" name "," predicate ")" | "CAST(" expr "," expr ")"
//                | "(" expr ")"
//   key         := name | "#" name | "@" name                   name: letters, digits, "_"
//   literal     := "nil" | "NULL" | "TRUE" | "YES" | "FALSE" | "NO" | string | number
//   string      := '…' | "…"   escapes \n \t \r \0 \" \' \\ \uXXXX (pairs for surrogates); an
//                  unknown escape such as \d stays as written; "%%" is one "%"
//   number      := digits ("." digits)? (("e" | "E") ("+" | "-")? digits)? | 0x… | 0o… | 0b…
//   format-argument := "%" (position "$")? length? ("@" | "K" | "d" | "i" | "u" | "x" | "o" |
//                  "f" | "e" | "g" | "s" | "c")            inside quotes a "%" is literal text
//
// Not accepted, with a message saying so: Apple's variable assignment `$x := expr` (its meaning
// depends on evaluation order through a shared mutable context) and `FETCH(…)` (built with
// NSFetchRequestExpression in the CoreData module instead).
//
// Constants with no literal syntax print as the CAST that folds back into them when parsed:
// `CAST(<seconds since 2001>, "NSDate")`, `CAST("nan", "NSNumber")`, `CAST("…", "NSDecimalNumber")`,
// `CAST("…", "NSUUID")`, `CAST("…", "NSURL")`, `CAST("<base64>", "NSData")`.

/// A recursive-descent parser for Apple's predicate format syntax, with operator precedence
/// (see ``Precedence``). Predicates and expressions are parsed by one precedence climber so that a
/// parenthesis can open either without backtracking; each operator then checks that its operands
/// are of the right kind (`AND` needs predicates, `+` needs expressions).
///
/// Two limits keep any input from exhausting the stack: trees taller than ``maximumHeight`` are
/// rejected (the printer and the evaluator recurse once per level), and so is recursion deeper
/// than ``maximumRecursion``. The printed form of a tree of height h needs at most 2h + 2 levels
/// of recursion to parse (one operand and one pair of parentheses per level, as in
/// `0 - (0 - (0 - x))`), so the recursion limit is set above that: every tree the parser accepts
/// prints to a string it accepts again. Stack needed by the deepest accepted input (x86_64 Linux):
/// under 256 KiB in release builds, under 2 MiB in debug builds.
struct PredicateParser {
    static let maximumHeight = 100
    static let maximumRecursion = 2 * maximumHeight + 8

    /// What a sub-parse produced, and where it started.
    struct Parsed {
        enum Value {
            case predicate(NSPredicate)
            case expression(NSExpression)
        }

        var value: Value
        var offset: Int
    }

    let format: String
    let scalars: [Unicode.Scalar]
    let tokens: [Token]
    var position = 0
    let arguments: [Any?]
    var nextArgument = 0
    var depth = 0

    private init(_ format: String, arguments: [Any?]) {
        self.format = format
        self.scalars = Array(format.unicodeScalars)
        self.tokens = Lexer.tokenize(format)
        self.arguments = arguments
    }

    // MARK: - Entry points

    /// Parses a whole predicate.
    static func parsePredicate(_ format: String, arguments: [Any?]) throws(NSPredicateSyntaxError) -> NSPredicate {
        var parser = PredicateParser(format, arguments: arguments)
        try parser.checkCurrentToken()
        let parsed = try parser.parse(.lowest)
        let predicate = try parser.requirePredicate(parsed)
        try parser.expectEnd(after: "the predicate")
        return predicate
    }

    /// Parses a whole expression.
    static func parseExpression(_ format: String, arguments: [Any?]) throws(NSPredicateSyntaxError) -> NSExpression {
        var parser = PredicateParser(format, arguments: arguments)
        try parser.checkCurrentToken()
        let parsed = try parser.parse(.setOperation)
        let expression = try parser.requireExpression(parsed)
        try parser.expectEnd(after: "the expression")
        return expression
    }

    // MARK: - Tokens

    var current: Token {
        // `tokens` always ends with `.end` or `.error`, and `advance` never moves past it.
        tokens[min(position, tokens.count - 1)]
    }

    var next: Token {
        tokens[min(position + 1, tokens.count - 1)]
    }

    /// Moves to the next token; a lexical error there is reported now, once everything before it
    /// has parsed.
    mutating func advance() throws(NSPredicateSyntaxError) {
        if position < tokens.count - 1 { position += 1 }
        try checkCurrentToken()
    }

    func checkCurrentToken() throws(NSPredicateSyntaxError) {
        if case .error(let message) = current.kind { throw error(message, at: current) }
    }

    func error(_ message: String, at token: Token) -> NSPredicateSyntaxError {
        NSPredicateSyntaxError(formatString: format, offset: token.offset, message: message)
    }

    func error(_ message: String, offset: Int) -> NSPredicateSyntaxError {
        NSPredicateSyntaxError(formatString: format, offset: offset, message: message)
    }

    /// `'AND'`, `end of input`: a token as messages show it.
    func describe(_ token: Token) -> String {
        switch token.kind {
        case .end: return "end of input"
        case .string: return Lexer.text(of: token, in: scalars)  // Already quoted.
        default: return "'\(Lexer.text(of: token, in: scalars))'"
        }
    }

    mutating func expect(_ symbol: Symbol, _ role: String = "") throws(NSPredicateSyntaxError) {
        guard current.isSymbol(symbol) else {
            let what = role.isEmpty ? "'\(symbol.rawValue)'" : "'\(symbol.rawValue)' \(role)"
            throw error("expected \(what), found \(describe(current))", at: current)
        }
        try advance()
    }

    private func expectEnd(after what: String) throws(NSPredicateSyntaxError) {
        guard case .end = current.kind else {
            throw error("expected end of input after \(what), found \(describe(current))", at: current)
        }
    }

    // MARK: - Kinds

    /// The predicate in `parsed`; an expression where a predicate belongs is missing its comparison,
    /// reported at the token that follows it.
    func requirePredicate(_ parsed: Parsed) throws(NSPredicateSyntaxError) -> NSPredicate {
        switch parsed.value {
        case .predicate(let predicate): return predicate
        case .expression:
            throw error("expected a comparison operator, found \(describe(current))", at: current)
        }
    }

    func requireExpression(_ parsed: Parsed) throws(NSPredicateSyntaxError) -> NSExpression {
        switch parsed.value {
        case .expression(let expression): return expression
        case .predicate:
            throw error("expected an expression, found a predicate", offset: parsed.offset)
        }
    }

    /// Parses an operand that must be a predicate. (The check runs after the parse, as a separate
    /// statement, so that it reports the token the parse stopped at.)
    mutating func parsePredicateOperand(_ minimum: Precedence) throws(NSPredicateSyntaxError) -> NSPredicate {
        let parsed = try parse(minimum)
        return try requirePredicate(parsed)
    }

    /// Parses an operand that must be an expression.
    mutating func parseExpressionOperand(_ minimum: Precedence) throws(NSPredicateSyntaxError) -> NSExpression {
        let parsed = try parse(minimum)
        return try requireExpression(parsed)
    }

    /// Rejects trees taller than ``maximumHeight`` (long chains such as `1+1+1+…` grow the tree
    /// without deepening the parser's recursion).
    func checked(_ expression: NSExpression, at token: Token) throws(NSPredicateSyntaxError) -> NSExpression {
        guard expression.height <= PredicateParser.maximumHeight else {
            throw error("nesting deeper than \(PredicateParser.maximumHeight) levels", at: token)
        }
        return expression
    }

    func checked(_ predicate: NSPredicate, at token: Token) throws(NSPredicateSyntaxError) -> NSPredicate {
        guard predicate.height <= PredicateParser.maximumHeight else {
            throw error("nesting deeper than \(PredicateParser.maximumHeight) levels", at: token)
        }
        return predicate
    }

    // MARK: - Precedence climbing

    /// Parses operators binding at least as strongly as `minimum`.
    mutating func parse(_ minimum: Precedence) throws(NSPredicateSyntaxError) -> Parsed {
        depth += 1
        defer { depth -= 1 }
        guard depth <= PredicateParser.maximumRecursion else {
            throw error("parentheses and operators nested deeper than \(PredicateParser.maximumRecursion) levels", at: current)
        }
        var left = try parsePrefix()
        while let infix = InfixOperator(current), infix.precedence >= minimum {
            left = try parseInfix(infix, left: left)
        }
        return left
    }

    private mutating func parseInfix(_ infix: InfixOperator, left: Parsed) throws(NSPredicateSyntaxError) -> Parsed {
        let token = current
        switch infix {
        case .logical(let type):
            return try parseLogical(type, first: left)
        case .comparison:
            guard case .expression(let lhs) = left.value else {
                throw error("unexpected \(describe(token)) after a complete predicate (join comparisons with AND or OR)", at: token)
            }
            let predicate = try parseComparison(left: lhs, modifier: .direct)
            return Parsed(value: .predicate(predicate), offset: left.offset)
        case .arithmetic(let name, let precedence):
            let lhs = try requireExpression(left)
            try advance()
            // `**` is right-associative: its right side may hold another `**`.
            let right = try parse(precedence == .power ? .power : precedence.stronger)
            let rhs = try requireExpression(right)
            let function = NSExpression(node: .function(name: name, operand: nil, arguments: [lhs, rhs]))
            return Parsed(value: .expression(try checked(function, at: token)), offset: left.offset)
        case .set(let kind):
            let lhs = try requireExpression(left)
            try advance()
            let rhs = try parseExpressionOperand(Precedence.setOperation.stronger)
            let node: NSExpression.Node
            switch kind {
            case .union: node = .union(lhs, rhs)
            case .intersect: node = .intersect(lhs, rhs)
            case .minus: node = .minus(lhs, rhs)
            }
            return Parsed(value: .expression(try checked(NSExpression(node: node), at: token)), offset: left.offset)
        case .member:
            let operand = try requireExpression(left)
            try advance()
            let expression = try parseMember(of: operand)
            return Parsed(value: .expression(try checked(expression, at: token)), offset: left.offset)
        case .subscript:
            let collection = try requireExpression(left)
            try advance()
            let expression = try parseSubscript(of: collection)
            return Parsed(value: .expression(try checked(expression, at: token)), offset: left.offset)
        }
    }

    /// `a AND b AND c` as one compound of three; a parenthesized `(a AND b)` operand stays one
    /// subpredicate, so the printer's parentheses give back the same tree.
    private mutating func parseLogical(_ type: NSCompoundPredicate.LogicalType, first: Parsed) throws(NSPredicateSyntaxError) -> Parsed {
        let token = current
        var operands = [try requirePredicate(first)]
        while let infix = InfixOperator(current), case .logical(let t) = infix, t == type {
            try advance()
            let operand = try parse(type == .and ? .not : .and)
            operands.append(try requirePredicate(operand))
        }
        let compound = NSCompoundPredicate(type: type, subpredicates: operands)
        return Parsed(value: .predicate(try checked(compound, at: token)), offset: first.offset)
    }

    /// The operator at `current`, its options, and the right side.
    mutating func parseComparison(left: NSExpression, modifier: NSComparisonPredicate.Modifier) throws(NSPredicateSyntaxError) -> NSPredicate {
        let token = current
        guard let infix = InfixOperator(token), case .comparison(let type) = infix else {
            throw error("expected a comparison operator, found \(describe(token))", at: token)
        }
        try advance()
        let options = try parseOptions()
        if type == .utiConformsTo || type == .utiEquals, !options.isEmpty {
            throw error("\(describe(token)) takes no comparison options", at: token)
        }
        let right = try parseExpressionOperand(.setOperation)
        let predicate = NSComparisonPredicate(leftExpression: left, rightExpression: right, modifier: modifier, type: type, options: options)
        return try checked(predicate, at: token)
    }

    /// `[c]`, `[d]`, `[n]` and combinations such as `[cd]`, right after a comparison operator.
    private mutating func parseOptions() throws(NSPredicateSyntaxError) -> NSComparisonPredicate.Options {
        guard current.isSymbol(.leftBracket) else { return [] }
        try advance()
        let token = current
        guard case .identifier(let letters) = token.kind else {
            throw error("expected comparison options such as c, d or cd, found \(describe(token))", at: token)
        }
        var options: NSComparisonPredicate.Options = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": options.insert(.normalized)
            case "l": break  // Apple's locale-sensitive flag; comparisons here are not locale-dependent.
            default:
                throw error("unknown comparison option '\(letter)' (expected c, d or n)", at: token)
            }
        }
        try advance()
        try expect(.rightBracket, "after comparison options")
        return options
    }
}

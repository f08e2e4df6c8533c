// Splits a format string into tokens. Works on Unicode scalars, not Characters: a combining mark
// after a quote must not merge with it into one Character and hide the quote.

struct Lexer {
    let scalars: [Unicode.Scalar]
    var index = 0

    init(_ source: String) {
        scalars = Array(source.unicodeScalars)
    }

    /// Every token up to `.end`, or up to and including an `.error` token at the first lexical error.
    ///
    /// Complexity: O(n) in the length of the source.
    static func tokenize(_ source: String) -> [Token] {
        var lexer = Lexer(source)
        var tokens: [Token] = []
        while true {
            let token = lexer.nextToken()
            tokens.append(token)
            switch token.kind {
            case .end, .error: return tokens
            default: continue
            }
        }
    }

    /// The source text of `token`, for error messages (long tokens shortened).
    static func text(of token: Token, in source: [Unicode.Scalar]) -> String {
        let start = min(max(token.offset, 0), source.count)
        let end = min(start + max(token.length, 0), source.count)
        var text = String(String.UnicodeScalarView(source[start..<end]))
        if text.unicodeScalars.count > 24 {
            text = String(String.UnicodeScalarView(text.unicodeScalars.prefix(21))) + "..."
        }
        return text
    }

    // MARK: - Scanning

    func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        let position = index + ahead
        return position < scalars.count ? scalars[position] : nil
    }

    mutating func nextToken() -> Token {
        skipWhitespace()
        let start = index
        guard let scalar = peek() else { return Token(kind: .end, offset: start, length: 0) }
        let kind: TokenKind
        switch scalar {
        case "\"", "'": kind = scanString(quote: scalar)
        case "$": kind = scanPrefixedName(.variable, what: "a variable name after '$'")
        case "#": kind = scanPrefixedName(.escapedIdentifier, what: "a name after '#'")
        case "@": kind = scanPrefixedName(.collectionOperator, what: "an operator name after '@'")
        case "%": kind = scanFormatSpecifier()
        case "0"..."9": kind = scanNumber()
        default:
            if Lexer.isIdentifierStart(scalar) {
                let name = scanName()
                if let uti = scanUTIOperator(after: name) {
                    kind = .symbol(uti)
                } else {
                    kind = Keyword.named(name).map(TokenKind.keyword) ?? .identifier(name)
                }
            } else {
                kind = scanSymbol()
            }
        }
        return Token(kind: kind, offset: start, length: index - start)
    }

    mutating func skipWhitespace() {
        while let scalar = peek(), scalar.properties.isWhitespace { index += 1 }
    }

    static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic
    }

    static func isIdentifierContinue(_ scalar: Unicode.Scalar) -> Bool {
        if isIdentifierStart(scalar) || ("0"..."9").contains(scalar) { return true }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .connectorPunctuation: return true
        default: return false
        }
    }

    mutating func scanName() -> String {
        var name = String.UnicodeScalarView()
        while let scalar = peek(), Lexer.isIdentifierContinue(scalar) {
            name.append(scalar)
            index += 1
        }
        return String(name)
    }

    enum NamePrefix { case variable, escapedIdentifier, collectionOperator }

    mutating func scanPrefixedName(_ prefix: NamePrefix, what: String) -> TokenKind {
        index += 1
        guard let scalar = peek(), Lexer.isIdentifierStart(scalar) else { return .error("expected \(what)") }
        let name = scanName()
        switch prefix {
        case .variable: return .variable(name)
        case .escapedIdentifier: return .escapedIdentifier(name)
        case .collectionOperator: return .collectionOperator(name)
        }
    }

    mutating func scanSymbol() -> TokenKind {
        guard let scalar = peek() else { return .error("unexpected end of input") }
        index += 1
        let next = peek()
        func take(_ symbol: Symbol) -> TokenKind {
            index += 1
            return .symbol(symbol)
        }
        switch scalar {
        case "(": return .symbol(.leftParen)
        case ")": return .symbol(.rightParen)
        case "{": return .symbol(.leftBrace)
        case "}": return .symbol(.rightBrace)
        case "[": return .symbol(.leftBracket)
        case "]": return .symbol(.rightBracket)
        case ",": return .symbol(.comma)
        case ".": return .symbol(.dot)
        case ":": return .symbol(.colon)
        case "+": return .symbol(.plus)
        case "-": return .symbol(.minus)
        case "/": return .symbol(.slash)
        case "*": return next == "*" ? take(.power) : .symbol(.star)
        case "=":
            // `==`, `=`, and Apple's `=<` / `=>` spellings.
            switch next {
            case "=": return take(.equal)
            case "<": return take(.lessOrEqual)
            case ">": return take(.greaterOrEqual)
            default: return .symbol(.equal)
            }
        case "!": return next == "=" ? take(.notEqual) : .symbol(.bang)
        case "<":
            switch next {
            case "=": return take(.lessOrEqual)
            case ">": return take(.notEqual)
            case "<": return take(.shiftLeft)
            default: return .symbol(.less)
            }
        case ">":
            switch next {
            case "=": return take(.greaterOrEqual)
            case ">": return take(.shiftRight)
            default: return .symbol(.greater)
            }
        case "&": return next == "&" ? take(.andAnd) : .symbol(.ampersand)
        case "|": return next == "|" ? take(.orOr) : .symbol(.pipe)
        case "^": return .symbol(.caret)
        case "~": return .symbol(.tilde)
        default: return .error("unexpected character '\(Lexer.printable(scalar))'")
        }
    }

    /// After the name `UTI` (any case): the rest of `UTI-CONFORMS-TO` or `UTI-EQUALS`, consumed
    /// when it follows at once and is not itself followed by more of a name.
    mutating func scanUTIOperator(after name: String) -> Symbol? {
        guard name.uppercased() == "UTI" else { return nil }
        for (symbol, rest) in [(Symbol.utiConformsTo, "-CONFORMS-TO"), (.utiEquals, "-EQUALS")] {
            let expected = Array(rest.unicodeScalars)
            var matches = true
            for (offset, scalar) in expected.enumerated() {
                guard let actual = peek(offset), String(actual).uppercased() == String(scalar) else {
                    matches = false
                    break
                }
            }
            guard matches else { continue }
            if let after = peek(expected.count), Lexer.isIdentifierContinue(after) { continue }
            index += expected.count
            return symbol
        }
        return nil
    }

    /// A scalar as it can be shown in a message: control characters as `\u{…}`.
    static func printable(_ scalar: Unicode.Scalar) -> String {
        if scalar.properties.generalCategory == .control || scalar.properties.isWhitespace {
            return "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        }
        return String(scalar)
    }
}

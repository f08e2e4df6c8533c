// The tokens of Apple's predicate format syntax, as the lexer produces them and the parser reads them.

/// A reserved word of the format syntax. Matched without regard to case; a key path component
/// spelled like one must be escaped with `#` (`#size`). The list is Apple's reserved words.
enum Keyword: String, CaseIterable, Sendable {
    case and = "AND", or = "OR", not = "NOT", `in` = "IN", like = "LIKE", matches = "MATCHES"
    case contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", between = "BETWEEN"
    case any = "ANY", some = "SOME", all = "ALL", none = "NONE"
    case truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
    case `nil` = "NIL", null = "NULL", `true` = "TRUE", yes = "YES", `false` = "FALSE", no = "NO"
    case `self` = "SELF", subquery = "SUBQUERY", cast = "CAST", first = "FIRST", last = "LAST", size = "SIZE"
    case anyKey = "ANYKEY", caseInsensitive = "CASEINSENSITIVE", ci = "CI", fetch = "FETCH"

    /// Keywords by their upper-case spelling, for the lexer.
    static let byName: [String: Keyword] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The keyword spelled by `word` (any case), or nil. Only ASCII words can be keywords, which
    /// keeps Unicode case mapping (`ı` → `I`) from turning an identifier into a keyword.
    static func named(_ word: String) -> Keyword? {
        guard word.utf8.count <= 15, word.unicodeScalars.allSatisfy(\.isASCII) else { return nil }
        return byName[word.uppercased()]
    }
}

/// Punctuation and operators.
enum Symbol: String, Sendable {
    case leftParen = "(", rightParen = ")", leftBrace = "{", rightBrace = "}"
    case leftBracket = "[", rightBracket = "]", comma = ",", dot = ".", colon = ":"
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case plus = "+", minus = "-", star = "*", slash = "/", power = "**"
    case andAnd = "&&", orOr = "||", bang = "!"
    /// The bitwise operators, which Apple's printer writes for `bitwiseAnd:with:` and its kin.
    case ampersand = "&", pipe = "|", caret = "^", tilde = "~", shiftLeft = "<<", shiftRight = ">>"
    /// Apple's two hyphenated operators, lexed whole so that `UTI - EQUALS` (with spaces) stays
    /// a subtraction of two key paths.
    case utiConformsTo = "UTI-CONFORMS-TO", utiEquals = "UTI-EQUALS"
}

/// A number as written: integers stay exact, anything with a fraction or exponent is a Double.
enum NumberLiteral: Sendable, Equatable {
    case int(Int64)
    case uint(UInt64)
    case double(Double)

    var value: Any {
        switch self {
        case .int(let value): return Number.int(value).value
        case .uint(let value): return value
        case .double(let value): return value
        }
    }
}

/// A `%` specifier: which argument it takes and how the argument is read.
struct FormatSpecifier: Sendable, Equatable {
    enum Conversion: Sendable, Equatable {
        /// `%@`: any value, as a constant.
        case object
        /// `%K`: a String, as a key path.
        case keyPath
        /// `%d %i %ld %lld %u %lu %x %o …`: an integer.
        case integer
        /// `%f %lf %e %g …`: a floating-point number.
        case double
        /// `%s %c`: a string.
        case string
    }

    /// The argument's index from `%1$@`-style positions (0-based), or nil for the next argument.
    var position: Int?
    var conversion: Conversion
    /// The specifier as written, for messages.
    var text: String
}

enum TokenKind: Sendable {
    /// A name that is not a keyword: a key path component or a function name.
    case identifier(String)
    /// `#name`: a name that is never a keyword.
    case escapedIdentifier(String)
    case keyword(Keyword)
    /// `$name`.
    case variable(String)
    /// `@count`, `@sum`, …: the name without `@`.
    case collectionOperator(String)
    case string(String)
    case number(NumberLiteral)
    case argument(FormatSpecifier)
    case symbol(Symbol)
    case end
    /// A lexical error at this position. The lexer stops here; the parser reports it on reaching it,
    /// so an earlier syntax error is reported first.
    case error(String)
}

struct Token: Sendable {
    var kind: TokenKind
    /// Unicode scalars from the start of the format string.
    var offset: Int
    /// Length in Unicode scalars.
    var length: Int

    func isSymbol(_ symbol: Symbol) -> Bool {
        if case .symbol(let s) = kind { return s == symbol }
        return false
    }

    func isKeyword(_ keyword: Keyword) -> Bool {
        if case .keyword(let k) = kind { return k == keyword }
        return false
    }
}

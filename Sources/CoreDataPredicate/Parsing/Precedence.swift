/// Binding strength of the format syntax's operators, weakest first. The parser and the printer
/// share it, which is what makes printed predicates parse back to the same tree.
enum Precedence: Int, Comparable {
    case lowest = 0
    case or = 1
    case and = 2
    case not = 3
    /// `==`, `<`, `IN`, … (not associative: `a < b < c` is an error).
    case comparison = 4
    /// `UNION`, `INTERSECT`, `MINUS`.
    case setOperation = 5
    // The bitwise operators bind as in C relative to one another and to `+` and `*`. Apple
    // documents no precedence for them; its printer writes them infix (`a & b`), and this order
    // is the one a reader of such output expects.
    /// `|` (`bitwiseOr:with:`).
    case bitwiseOr = 6
    /// `^` (`bitwiseXor:with:`).
    case bitwiseXor = 7
    /// `&` (`bitwiseAnd:with:`).
    case bitwiseAnd = 8
    /// `<<`, `>>` (`leftshift:by:`, `rightshift:by:`).
    case shift = 9
    /// `+`, `-`.
    case additive = 10
    /// `*`, `/`.
    case multiplicative = 11
    /// `**`, right-associative.
    case power = 12
    /// Unary minus and `~`; a negative number literal prints at this level.
    case prefix = 13
    /// `.key`, `[index]`, and every literal, key path and call.
    case postfix = 14

    static func < (a: Precedence, b: Precedence) -> Bool { a.rawValue < b.rawValue }

    /// The next stronger level (for the right operand of a left-associative operator).
    var stronger: Precedence { Precedence(rawValue: rawValue + 1) ?? .postfix }
}

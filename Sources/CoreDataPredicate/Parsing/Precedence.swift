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
    /// `+`, `-`.
    case additive = 6
    /// `*`, `/`.
    case multiplicative = 7
    /// `**`, right-associative.
    case power = 8
    /// Unary minus; a negative number literal prints at this level.
    case prefix = 9
    /// `.key`, `[index]`, and every literal, key path and call.
    case postfix = 10

    static func < (a: Precedence, b: Precedence) -> Bool { a.rawValue < b.rawValue }

    /// The next stronger level (for the right operand of a left-associative operator).
    var stronger: Precedence { Precedence(rawValue: rawValue + 1) ?? .postfix }
}

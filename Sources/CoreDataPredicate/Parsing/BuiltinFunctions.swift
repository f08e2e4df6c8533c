/// The functions Apple's `NSExpression` documents, by their selector-style names (`sum:`,
/// `add:to:`), with the short names the format syntax calls them by (`sum(…)`) and their arity.
struct BuiltinFunction: Sendable {
    /// The name `NSExpression.function` reports: `sum:`, `add:to:`, `now`.
    var name: String
    /// The name used in `name(args)` calls: the first part of `name`.
    var shortName: String
    var minimumArguments: Int
    var maximumArguments: Int

    func accepts(_ count: Int) -> Bool {
        count >= minimumArguments && count <= maximumArguments
    }
}

enum BuiltinFunctions {
    private static func function(_ name: String, _ minimum: Int, _ maximum: Int? = nil) -> BuiltinFunction {
        let short = name.split(separator: ":").first.map(String.init) ?? name
        return BuiltinFunction(name: name, shortName: short, minimumArguments: minimum, maximumArguments: maximum ?? minimum)
    }

    /// Every built-in function. Aggregates take their values either as one collection argument or
    /// as several arguments.
    static let all: [BuiltinFunction] = [
        function("sum:", 1, Int.max), function("count:", 1, Int.max), function("min:", 1, Int.max),
        function("max:", 1, Int.max), function("average:", 1, Int.max), function("median:", 1, Int.max),
        function("mode:", 1, Int.max), function("stddev:", 1, Int.max),
        function("add:to:", 2), function("from:subtract:", 2), function("multiply:by:", 2),
        function("divide:by:", 2), function("modulus:by:", 2), function("raise:toPower:", 2),
        function("sqrt:", 1), function("log:", 1), function("ln:", 1), function("exp:", 1),
        function("floor:", 1), function("ceiling:", 1), function("abs:", 1), function("trunc:", 1),
        function("uppercase:", 1), function("lowercase:", 1), function("canonical:", 1), function("length:", 1),
        function("random", 0), function("random:", 1), function("randomn:", 1), function("now", 0),
        function("bitwiseAnd:with:", 2), function("bitwiseOr:with:", 2), function("bitwiseXor:with:", 2),
        function("leftshift:by:", 2), function("rightshift:by:", 2), function("onesComplement:", 1),
        function("noindex:", 1), function("distinct:", 1), function("distanceToLocation:fromLocation:", 2),
        function("castObject:toType:", 2), function("objectFrom:withIndex:", 2),
    ]

    private static let byName: [String: BuiltinFunction] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The function with this selector-style name.
    static func named(_ name: String) -> BuiltinFunction? { byName[name] }

    /// The function a short-name call `shortName(…)` with `count` arguments means: `random()` is
    /// `random`, `random(10)` is `random:`.
    static func resolve(shortName: String, argumentCount count: Int) -> BuiltinFunction? {
        if shortName == "randomn" { return nil }  // Reachable only by its full name `randomn:`.
        return all.first { $0.shortName == shortName && $0.accepts(count) }
    }

    /// Whether some built-in function has this short name (for "wrong number of arguments" messages).
    static func hasShortName(_ shortName: String) -> Bool {
        all.contains { $0.shortName == shortName }
    }

    /// Functions written as infix operators, with their symbol and precedence: Apple's printer
    /// writes these, and the bitwise ones, as operators.
    static let infix: [String: (symbol: String, precedence: Precedence)] = [
        "add:to:": ("+", .additive), "from:subtract:": ("-", .additive),
        "multiply:by:": ("*", .multiplicative), "divide:by:": ("/", .multiplicative),
        "raise:toPower:": ("**", .power),
        "bitwiseAnd:with:": ("&", .bitwiseAnd), "bitwiseOr:with:": ("|", .bitwiseOr), "bitwiseXor:with:": ("^", .bitwiseXor),
        "leftshift:by:": ("<<", .shift), "rightshift:by:": (">>", .shift),
    ]

    /// `onesComplement:`, written as the prefix operator `~`.
    static let complementName = "onesComplement:"

    /// "1 argument", "2 arguments", "1 or more arguments": for messages.
    static func arity(of function: BuiltinFunction) -> String {
        func count(_ n: Int) -> String { n == 1 ? "1 argument" : "\(n) arguments" }
        if function.maximumArguments == Int.max { return "\(function.minimumArguments) or more arguments" }
        if function.minimumArguments == function.maximumArguments { return count(function.minimumArguments) }
        return "\(function.minimumArguments) to \(count(function.maximumArguments))"
    }

    static let castName = "castObject:toType:"
    static let indexName = "objectFrom:withIndex:"
}

/// The symbolic indexes of `array[FIRST]`, `array[LAST]` and `array[SIZE]`, held as the constant
/// value of the index expression (the second argument of `objectFrom:withIndex:`).
public enum PredicateIndexSymbol: String, Sendable, Hashable {
    /// The first element.
    case first = "FIRST"
    /// The last element.
    case last = "LAST"
    /// The number of elements.
    case size = "SIZE"
}

// Fuzz target: arbitrary bytes as a predicate format string. The parser must throw an
// NSPredicateSyntaxError or return a predicate; a returned predicate must print to a string that
// parses back to an equal predicate which prints the same, and both must evaluate alike. Any crash,
// hang, failed precondition or sanitizer report is a bug.
import CoreData

/// The body of the `FuzzPredicateParser` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzPredicateParser {
    /// Arguments for `%@`, `%K`, `%d`, `%f`, `%s` and `%1$@`-style positions; all of them print as
    /// parseable constants, so round trips must hold with them too.
    /// (Computed, not stored: a static of `[Any?]` is not Sendable.)
    private static var arguments: [Any?] { ["name", "Ada", 36, 1.5, [1, 2, 3], nil, Date(timeIntervalSinceReferenceDate: 12.5), ["x", "y"]] }

    /// An object with a bit of everything: scalars, nil, a to-many of objects, a to-one.
    private static var object: [String: Any] {
        [
            "name": "Ada", "age": 36, "height": 1.65, "nickname": NSNull(), "tags": ["math", "poetry"],
            "books": [["title": "Notes", "pages": 60], ["title": "Engine", "pages": 250]],
            "spouse": ["name": "William", "age": Int16(40)], "birthday": Date(timeIntervalSinceReferenceDate: -5e9),
        ]
    }

    /// Parses `bytes` (as UTF-8, invalid sequences replaced) as a predicate format string, then
    /// prints, re-parses and evaluates what parses.
    ///
    /// Traps (`precondition`) when a round trip changes the predicate, its hash, its printed form
    /// or its result.
    public static func run(_ bytes: [UInt8]) {
        let format = String(decoding: bytes, as: UTF8.self)
        guard let predicate = try? NSPredicate(validatingFormat: format, argumentArray: arguments) else { return }

        let printed = predicate.predicateFormat
        let reparsed: CoreDataPredicate.NSPredicate
        do {
            reparsed = try NSPredicate(validatingFormat: printed)
        } catch {
            preconditionFailure("printed form does not parse: \(format) printed as \(printed): \(error)")
        }
        precondition(reparsed.isEqual(predicate), "round trip changed the predicate: \(format) printed as \(printed)")
        precondition(reparsed.hash == predicate.hash, "equal predicates hash differently: \(printed)")
        precondition(reparsed.predicateFormat == printed, "printing is not stable: \(printed) became \(reparsed.predicateFormat)")

        // Regular expressions come from the input, and ICU's backtracking can take exponential time on
        // pathological patterns (a documented limit of MATCHES); evaluating them would only find that.
        guard !printed.contains("MATCHES") else { return }
        let object = Self.object
        let result = predicate.evaluate(with: object)
        // `random()`, `random:(n)` and `now()` give another value at each evaluation; whatever
        // the printer's spelling, a predicate naming them is compared for its shape only.
        let deterministic = !printed.contains("random") && !printed.contains("now(")
        if deterministic {
            precondition(reparsed.evaluate(with: object) == result, "round trip changed the result: \(printed)")
        }
        _ = predicate.evaluate(with: nil)
        _ = predicate.evaluate(with: object["books"])
    }
}

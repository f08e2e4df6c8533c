import Foundation

// Predicates from format strings. These initializers live in a protocol extension because a Swift
// class initializer cannot return an instance of a subclass, and Apple's `NSPredicate(format:)`
// returns an NSComparisonPredicate or NSCompoundPredicate; an initializer in a protocol extension
// may assign `self`, which makes `NSPredicate(format: "a == 1") is NSComparisonPredicate` true.

/// The hook that gives ``NSPredicate`` and its subclasses their format-string initializers; not
/// meant for other conformances.
public protocol _PredicateFormatInitializable {}

extension NSPredicate: _PredicateFormatInitializable {}

extension _PredicateFormatInitializable where Self: NSPredicate {
    /// Parses a predicate in Apple's format syntax, with `%@`, `%K`, `%d`, … taking `args` in order
    /// (`NSPredicate(format: "name == %@ AND age > %d", name, 30)`).
    ///
    /// `args` accepts what Apple code passes: strings, numbers, dates, arrays, sets, objects, nil.
    /// A malformed string, a missing argument, or an argument of the wrong kind (`%K` with a
    /// non-string) is a programmer error, as on Apple platforms (which raise
    /// NSInvalidArgumentException "Unable to parse the format string …"): this traps with the
    /// string, the offset and what was expected. Use ``init(validatingFormat:argumentArray:)``
    /// for strings from users or files.
    ///
    /// Complexity: O(n) in the length of the string.
    public init(format predicateFormat: String, _ args: Any?...) {
        self.init(format: predicateFormat, argumentArray: args.map { $0 as Any })
    }

    /// Parses a predicate in Apple's format syntax, taking format arguments from `arguments`.
    /// Traps on a malformed string, like ``init(format:_:)``.
    public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        do {
            self = try Self.parsed(predicateFormat, arguments: (arguments ?? []).map { $0 as Any? })
        } catch {
            preconditionFailure(String(describing: error))
        }
    }

    /// Parses a predicate in Apple's format syntax, throwing instead of trapping: for format
    /// strings from users, files or the network.
    ///
    /// - Throws: ``NSPredicateSyntaxError`` with the offset of the problem and what was expected;
    ///   also when the string parses but does not describe a `Self` (a comparison asked for as an
    ///   `NSCompoundPredicate`).
    public init(validatingFormat predicateFormat: String, argumentArray arguments: [Any?] = [])
        throws(NSPredicateSyntaxError) {
        self = try Self.parsed(predicateFormat, arguments: arguments)
    }

    private static func parsed(_ format: String, arguments: [Any?]) throws(NSPredicateSyntaxError) -> Self {
        let predicate = try PredicateParser.parsePredicate(format, arguments: arguments)
        guard let typed = predicate as? Self else {
            throw NSPredicateSyntaxError(
                formatString: format, offset: 0,
                message: "the string describes \(type(of: predicate)), not \(Self.self)")
        }
        return typed
    }
}

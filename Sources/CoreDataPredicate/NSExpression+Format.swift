import Foundation

// Expressions from format strings: `NSExpression(format: "age * 2")`.

extension NSExpression {
    /// Parses an expression in Apple's format syntax, with `%@`/`%K`/`%d`… taking `args` in order.
    ///
    /// A malformed string is a programmer error, as on Apple platforms (which raise
    /// NSInvalidArgumentException): this traps with the string, the offset and what was expected.
    /// Use ``init(validatingFormat:argumentArray:)`` for strings from users or files.
    ///
    /// Complexity: O(n) in the length of the string.
    public convenience init(format expressionFormat: String, _ args: Any?...) {
        self.init(format: expressionFormat, argumentArray: args.map { $0 as Any })
    }

    /// Parses an expression in Apple's format syntax, taking format arguments from `arguments`.
    /// Traps on a malformed string, like ``init(format:_:)``.
    public convenience init(format expressionFormat: String, argumentArray arguments: [Any]) {
        do {
            let parsed = try PredicateParser.parseExpression(expressionFormat, arguments: arguments.map { $0 as Any? })
            self.init(node: parsed.node)
        } catch {
            preconditionFailure(String(describing: error))
        }
    }

    /// Parses an expression in Apple's format syntax, throwing on a malformed string.
    ///
    /// - Throws: ``NSPredicateSyntaxError`` with the offset of the problem and what was expected.
    public convenience init(validatingFormat expressionFormat: String, argumentArray arguments: [Any?] = [])
        throws(NSPredicateSyntaxError) {
        let parsed = try PredicateParser.parseExpression(expressionFormat, arguments: arguments)
        self.init(node: parsed.node)
    }
}

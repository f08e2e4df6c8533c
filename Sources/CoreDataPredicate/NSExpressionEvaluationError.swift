/// Why an expression or predicate could not be evaluated: the conditions under which Apple's
/// Foundation raises an exception while evaluating (an unknown function, arguments of the wrong
/// number or kind, an index beyond the end of a collection, a selector the receiver does not
/// answer, a UTI conformance it cannot look up).
///
/// Thrown by ``NSExpression/validatedExpressionValue(with:context:)`` and
/// ``NSPredicate/validatedEvaluate(with:substitutionVariables:)``. The plain entry points
/// (``NSExpression/expressionValue(with:context:)``, ``NSPredicate/evaluate(with:)``) never trap
/// on such a condition: the failed operation gives nil (and a comparison with it is decided as
/// for nil), because they serve stores that filter untrusted data.
public struct NSExpressionEvaluationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The expression or comparison that failed, in format syntax (`sqrt("x")`).
    public var expressionFormat: String
    /// What was wrong, e.g. `sqrt: needs a number, got String`.
    public var message: String

    /// Makes an error; the evaluator is the usual source.
    public init(expressionFormat: String, message: String) {
        self.expressionFormat = expressionFormat
        self.message = message
    }

    /// `Unable to evaluate <expressionFormat>: <message>`.
    public var description: String {
        "Unable to evaluate \(expressionFormat): \(message)"
    }
}

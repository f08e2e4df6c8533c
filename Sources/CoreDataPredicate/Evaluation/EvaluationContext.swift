/// What an evaluation reads besides the tree: the evaluated object (`SELF`) and the variables
/// (`$name`): the substitution variables, plus SUBQUERY iterator variables while they are bound.
struct EvaluationContext {
    var object: Any?
    var variables: [String: Any]
    /// Set by the validating entry points only, so that the plain ones pay nothing for it.
    var failures: EvaluationFailures? = nil
}

/// The first failure of a validating evaluation. A reference, so that every copy of the
/// context (SUBQUERY and ANY make copies) records into the same place.
final class EvaluationFailures {
    private(set) var first: NSExpressionEvaluationError?

    /// Keeps the first failure only: later ones are usually its consequences.
    func record(_ message: String, in format: @autoclosure () -> String) {
        guard first == nil else { return }
        first = NSExpressionEvaluationError(expressionFormat: format(), message: message)
    }
}

/// Why a function or comparison failed, before the evaluator knows which expression it was in.
struct EvaluationFailure: Error {
    var message: String
}

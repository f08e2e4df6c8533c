/// What an evaluation reads besides the tree: the evaluated object (`SELF`) and the variables
/// (`$name`): the substitution variables, plus SUBQUERY iterator variables while they are bound.
struct EvaluationContext {
    var object: Any?
    var variables: [String: Any]
}

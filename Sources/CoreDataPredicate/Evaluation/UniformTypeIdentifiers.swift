/// `UTI-EQUALS` and `UTI-CONFORMS-TO` without a Uniform Type Identifier database.
///
/// Apple's Foundation answers both by loading `UTTypeEqual` and `UTTypeConformsTo` from
/// MobileCoreServices, and raises when it cannot. Linux has no such database: equality needs
/// none (identifiers compare without regard to case), and a type conforms to itself, but whether
/// `public.jpeg` conforms to `public.image` cannot be known here. That case is a failure: false
/// from the plain evaluator, an error from the validating one.
enum UniformTypeIdentifiers {
    /// The comparison's result, or why Apple would raise. Either side nil is false, as in
    /// Foundation; a side that is not a string is Foundation's "Unsupported variant" exception.
    static func compare(_ left: Any?, _ operation: NSComparisonPredicate.Operator, _ right: Any?) -> Result<Bool, EvaluationFailure> {
        guard let left = ValueKinds.unwrap(left), let right = ValueKinds.unwrap(right) else { return .success(false) }
        let symbol = Printer.symbol(for: operation)
        guard let l = ValueKinds.string(left), let r = ValueKinds.string(right) else {
            return .failure(EvaluationFailure(
                message: "\(symbol) compares type identifier strings, got \(type(of: left)) and \(type(of: right))"))
        }
        if l.lowercased() == r.lowercased() { return .success(true) }
        if operation == .utiEquals { return .success(false) }
        return .failure(EvaluationFailure(
            message: "there is no Uniform Type Identifier database on Linux to tell whether \"\(l)\" conforms to \"\(r)\""))
    }
}

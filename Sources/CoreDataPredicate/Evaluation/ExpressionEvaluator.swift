import Foundation

/// The value of an expression for an object: the other half of the reference evaluator.
enum ExpressionEvaluator {
    static func value(of expression: NSExpression, in context: EvaluationContext) -> Any? {
        switch expression.node {
        case .constant(let value):
            return value
        case .evaluatedObject:
            return ValueKinds.unwrap(context.object)
        case .variable(let name):
            return ValueKinds.unwrap(context.variables[name])
        case .keyPath(let operand, _, let components):
            if let failures = context.failures, let unknown = components.first(where: KeyPathReader.isUnknownOperator) {
                failures.record("unknown collection operator \(unknown)", in: Printer.format(expression))
            }
            let base = operand.map { value(of: $0, in: context) } ?? context.object
            return KeyPathReader.value(of: base, components: components[...])
        case .function(let name, let operand, let arguments):
            let values = arguments.map { value(of: $0, in: context) }
            let result: FunctionResult
            if let operand {
                result = FunctionEvaluator.call(name, receiver: value(of: operand, in: context), arguments: values)
            } else {
                result = FunctionEvaluator.call(name, arguments: values)
            }
            switch result {
            case .success(let value):
                return value
            case .failure(let failure):
                context.failures?.record(failure.message, in: Printer.format(expression))
                return nil
            }
        case .aggregate(let elements):
            return elements.map { value(of: $0, in: context) }
        case .union(let left, let right):
            return Aggregates.distinct(elements(left, context) + elements(right, context))
        case .intersect(let left, let right):
            let others = elements(right, context)
            return Aggregates.distinct(elements(left, context).filter { element in
                others.contains { ValueComparison.equal($0, element) }
            })
        case .minus(let left, let right):
            let others = elements(right, context)
            return Aggregates.distinct(elements(left, context).filter { element in
                !others.contains { ValueComparison.equal($0, element) }
            })
        case .subquery(let collection, let variable, let predicate):
            return elements(collection, context).filter { element in
                var inner = context
                inner.object = element
                inner.variables[variable] = element ?? NSNull()
                return PredicateEvaluator.evaluate(predicate, in: inner)
            }
        case .anyKey:
            return nil
        case .block(let block, let arguments):
            let values: [Any] = arguments.map { value(of: $0, in: context) ?? NSNull() }
            let bindings = NSMutableDictionary()
            for (key, value) in context.variables { bindings[key] = value }
            return ValueKinds.unwrap(block(context.object, values, bindings))
        case .conditional(let predicate, let ifTrue, let ifFalse):
            return value(of: PredicateEvaluator.evaluate(predicate, in: context) ? ifTrue : ifFalse, in: context)
        }
    }

    /// The expression's value as a list: a collection's elements, nothing for nil, else the value.
    private static func elements(_ expression: NSExpression, _ context: EvaluationContext) -> [Any?] {
        guard let value = ValueKinds.unwrap(value(of: expression, in: context)) else { return [] }
        return ValueKinds.collection(value) ?? [value]
    }
}

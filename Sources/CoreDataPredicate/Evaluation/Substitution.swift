import Foundation

/// `withSubstitutionVariables(_:)`: a copy of a tree with bound variables replaced by constants.
/// A SUBQUERY's iterator variable shadows a binding of the same name inside its predicate.
enum Substitution {
    static func predicate(_ predicate: NSPredicate, variables: [String: Any]) -> NSPredicate {
        switch predicate.node {
        case .constant, .block:
            return predicate
        case .comparison(let c):
            return NSComparisonPredicate(
                leftExpression: expression(c.left, variables: variables), rightExpression: expression(c.right, variables: variables),
                modifier: c.modifier, type: c.type, options: c.options)
        case .compound(let type, let subpredicates):
            return NSCompoundPredicate(type: type, subpredicates: subpredicates.map { self.predicate($0, variables: variables) })
        }
    }

    static func expression(_ expression: NSExpression, variables: [String: Any]) -> NSExpression {
        func sub(_ e: NSExpression) -> NSExpression { self.expression(e, variables: variables) }
        switch expression.node {
        case .constant, .evaluatedObject, .anyKey:
            return expression
        case .variable(let name):
            guard let value = variables[name] else { return expression }
            return NSExpression(forConstantValue: value)
        case .keyPath(let operand, let path, let components):
            return NSExpression(node: .keyPath(operand: operand.map(sub), path: path, components: components))
        case .function(let name, let operand, let arguments):
            return NSExpression(node: .function(name: name, operand: operand.map(sub), arguments: arguments.map(sub)))
        case .aggregate(let elements):
            return NSExpression(node: .aggregate(elements.map(sub)))
        case .union(let l, let r):
            return NSExpression(node: .union(sub(l), sub(r)))
        case .intersect(let l, let r):
            return NSExpression(node: .intersect(sub(l), sub(r)))
        case .minus(let l, let r):
            return NSExpression(node: .minus(sub(l), sub(r)))
        case .subquery(let collection, let variable, let predicate):
            var inner = variables
            inner[variable] = nil
            return NSExpression(node: .subquery(
                collection: sub(collection), variable: variable, predicate: self.predicate(predicate, variables: inner)))
        case .block(let block, let arguments):
            return NSExpression(node: .block(block, arguments: arguments.map(sub)))
        case .conditional(let predicate, let t, let f):
            return NSExpression(node: .conditional(self.predicate(predicate, variables: variables), sub(t), sub(f)))
        }
    }
}

import Foundation

// Structural equality, hashing and height of predicate and expression trees: what `isEqual`,
// `hash` and the parser's nesting limit use. Hashes are combined from the children's stored hashes,
// so building a tree costs O(1) per node.

enum ExpressionStructure {
    static func height(of node: NSExpression.Node) -> Int {
        switch node {
        case .constant, .evaluatedObject, .variable, .anyKey:
            return 1
        case .keyPath(let operand, _, _):
            return 1 + (operand?.height ?? 0)
        case .function(_, let operand, let arguments):
            return 1 + max(operand?.height ?? 0, arguments.map(\.height).max() ?? 0)
        case .aggregate(let elements), .block(_, let elements):
            return 1 + (elements.map(\.height).max() ?? 0)
        case .union(let l, let r), .intersect(let l, let r), .minus(let l, let r):
            return 1 + max(l.height, r.height)
        case .subquery(let collection, _, let predicate):
            return 1 + max(collection.height, predicate.height)
        case .conditional(let predicate, let t, let f):
            return 1 + max(predicate.height, t.height, f.height)
        }
    }

    /// The value of a literal: a constant, or an aggregate whose elements are all literals (as an
    /// array of their values). A constant array equals an aggregate of equal literals: `%@` with an
    /// array prints as `{…}`, which parses as an aggregate, also when nested (`{{1, 2}, 3}`).
    private static func literalValue(of node: NSExpression.Node) -> Any?? {
        switch node {
        case .constant(let value):
            return .some(value)
        case .aggregate(let expressions):
            var values: [Any?] = []
            for expression in expressions {
                guard let value = literalValue(of: expression.node) else { return nil }
                values.append(value)
            }
            return .some(values)
        default:
            return nil
        }
    }

    static func hash(of node: NSExpression.Node) -> Int {
        var hasher = Hasher()
        if let literal = literalValue(of: node) {
            // The same hash for a constant and an aggregate holding the same values.
            ValueComparison.hash(literal, into: &hasher)
            return hasher.finalize()
        }
        switch node {
        case .constant:
            break  // Handled as a literal above.
        case .evaluatedObject:
            hasher.combine("SELF")
        case .variable(let name):
            hasher.combine("$")
            hasher.combine(name)
        case .keyPath(let operand, let path, _):
            hasher.combine("keyPath")
            hasher.combine(operand?.structuralHash ?? 0)
            hasher.combine(path)
        case .function(let name, let operand, let arguments):
            hasher.combine("function")
            hasher.combine(name)
            hasher.combine(operand?.structuralHash ?? 0)
            for argument in arguments { hasher.combine(argument.structuralHash) }
        case .aggregate(let elements):
            hasher.combine("aggregate")
            for element in elements { hasher.combine(element.structuralHash) }
        case .union(let l, let r), .intersect(let l, let r), .minus(let l, let r):
            hasher.combine(String(describing: ExpressionStructure.setKind(node)))
            hasher.combine(l.structuralHash)
            hasher.combine(r.structuralHash)
        case .subquery(let collection, let variable, let predicate):
            hasher.combine("SUBQUERY")
            hasher.combine(collection.structuralHash)
            hasher.combine(variable)
            hasher.combine(predicate.structuralHash)
        case .anyKey:
            hasher.combine("ANYKEY")
        case .block(_, let arguments):
            hasher.combine("block")
            hasher.combine(arguments.count)
        case .conditional(let predicate, let t, let f):
            hasher.combine("TERNARY")
            hasher.combine(predicate.structuralHash)
            hasher.combine(t.structuralHash)
            hasher.combine(f.structuralHash)
        }
        return hasher.finalize()
    }

    private static func setKind(_ node: NSExpression.Node) -> Int {
        switch node {
        case .union: return 1
        case .intersect: return 2
        default: return 3
        }
    }

    static func equal(_ a: NSExpression, _ b: NSExpression) -> Bool {
        if a === b { return true }
        guard a.structuralHash == b.structuralHash else { return false }
        if let x = literalValue(of: a.node), let y = literalValue(of: b.node) {
            return ValueComparison.structurallyEqual(x, y)
        }
        switch (a.node, b.node) {
        case (.evaluatedObject, .evaluatedObject), (.anyKey, .anyKey):
            return true
        case (.variable(let x), .variable(let y)):
            return x == y
        case (.keyPath(let xo, let xp, _), .keyPath(let yo, let yp, _)):
            return xp == yp && optionalEqual(xo, yo)
        case (.function(let xn, let xo, let xa), .function(let yn, let yo, let ya)):
            return xn == yn && optionalEqual(xo, yo) && allEqual(xa, ya)
        case (.aggregate(let x), .aggregate(let y)):
            return allEqual(x, y)
        case (.union(let xl, let xr), .union(let yl, let yr)),
             (.intersect(let xl, let xr), .intersect(let yl, let yr)),
             (.minus(let xl, let xr), .minus(let yl, let yr)):
            return equal(xl, yl) && equal(xr, yr)
        case (.subquery(let xc, let xv, let xp), .subquery(let yc, let yv, let yp)):
            return xv == yv && equal(xc, yc) && PredicateStructure.equal(xp, yp)
        case (.block, .block):
            return false  // Closures have no equality; only the identical expression (above) is equal.
        case (.conditional(let xp, let xt, let xf), .conditional(let yp, let yt, let yf)):
            return PredicateStructure.equal(xp, yp) && equal(xt, yt) && equal(xf, yf)
        default:
            return false
        }
    }

    private static func optionalEqual(_ a: NSExpression?, _ b: NSExpression?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x?, y?): return equal(x, y)
        default: return false
        }
    }

    private static func allEqual(_ a: [NSExpression], _ b: [NSExpression]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { equal($0, $1) }
    }
}

enum PredicateStructure {
    static func height(of node: NSPredicate.Node) -> Int {
        switch node {
        case .constant, .block: return 1
        case .comparison(let c): return 1 + max(c.left.height, c.right.height)
        case .compound(_, let subpredicates): return 1 + (subpredicates.map(\.height).max() ?? 0)
        }
    }

    static func hash(of node: NSPredicate.Node) -> Int {
        var hasher = Hasher()
        switch node {
        case .constant(let value):
            hasher.combine(value)
        case .block:
            hasher.combine("BLOCKPREDICATE")
        case .comparison(let c):
            hasher.combine(c.type.rawValue)
            hasher.combine(c.modifier.rawValue)
            hasher.combine(c.options.rawValue)
            hasher.combine(c.left.structuralHash)
            hasher.combine(c.right.structuralHash)
        case .compound(let type, let subpredicates):
            hasher.combine(type.rawValue)
            for predicate in subpredicates { hasher.combine(predicate.structuralHash) }
        }
        return hasher.finalize()
    }

    static func equal(_ a: NSPredicate, _ b: NSPredicate) -> Bool {
        if a === b { return true }
        guard a.structuralHash == b.structuralHash else { return false }
        switch (a.node, b.node) {
        case (.constant(let x), .constant(let y)):
            return x == y
        case (.comparison(let x), .comparison(let y)):
            return x.type == y.type && x.modifier == y.modifier && x.options == y.options
                && ExpressionStructure.equal(x.left, y.left) && ExpressionStructure.equal(x.right, y.right)
        case (.compound(let xt, let xs), .compound(let yt, let ys)):
            return xt == yt && xs.count == ys.count && zip(xs, ys).allSatisfy { equal($0, $1) }
        default:
            return false  // Block predicates are equal only to themselves (above).
        }
    }
}

import Foundation

/// Apple's built-in `NSExpression` functions. Arguments of the wrong kind give nil, never a trap.
enum FunctionEvaluator {
    /// `FUNCTION(receiver, 'name', arguments…)`: the receiver answers through
    /// ``PredicateFunctionReceiver``; otherwise nil (there is no Objective-C messaging on Linux).
    static func call(_ name: String, receiver: Any?, arguments: [Any?]) -> Any? {
        let receiver = ValueKinds.unwrap(receiver)
        if let receiver = receiver as? PredicateFunctionReceiver, let value = ValueKinds.unwrap(receiver.predicateFunction(name, arguments: arguments)) {
            return value
        }
        // Every Objective-C object answers key-value coding's two messages; mapping models call
        // them (`FUNCTION($source, "valueForKey:", "name")`), so they read through the key path
        // reader whatever the receiver.
        switch name {
        case "valueForKey:", "valueForKeyPath:":
            guard arguments.count == 1, let key = arguments[0].flatMap(ValueKinds.string), let receiver else { return nil }
            let components = name == "valueForKey:" ? [key] : NSExpression.components(of: key)
            return KeyPathReader.value(of: receiver, components: components[...])
        default:
            return nil
        }
    }

    /// A built-in function by its selector-style name; nil for unknown names.
    static func call(_ name: String, arguments: [Any?]) -> Any? {
        let args = arguments.map(ValueKinds.unwrap)
        switch name {
        case "now": return Date()
        case "random": return Int.random(in: 0...Int(Int32.max))
        default: break
        }
        if let aggregate = aggregate(name, args) { return aggregate }
        guard let first = args.first else { return nil }
        if args.count == 2 { return binary(name, first, args[1]) }
        return unary(name, first)
    }

    private static func aggregate(_ name: String, _ args: [Any?]) -> Any?? {
        let compute: (([Any?]) -> Any?)?
        switch name {
        case "sum:": compute = Aggregates.sum
        case "count:": compute = { values in values.count }
        case "min:": compute = Aggregates.minimum
        case "max:": compute = Aggregates.maximum
        case "average:": compute = Aggregates.average
        case "median:": compute = Aggregates.median
        case "mode:": compute = Aggregates.mode
        case "stddev:": compute = Aggregates.standardDeviation
        default: compute = nil
        }
        guard let compute else { return nil }
        // One collection argument holds the values; several arguments are the values.
        var values: [Any?] = []
        for argument in args {
            if let argument, let collection = ValueKinds.collection(argument) {
                values.append(contentsOf: collection)
            } else if args.count > 1 {
                values.append(argument)
            } else if let argument {
                values.append(argument)
            }
        }
        return .some(compute(values))
    }

    private static func binary(_ name: String, _ a: Any?, _ b: Any?) -> Any? {
        switch name {
        case BuiltinFunctions.castName:
            guard let type = b.flatMap(ValueKinds.string) else { return nil }
            return Cast.value(a, to: type)
        case BuiltinFunctions.indexName:
            return element(of: a, at: b)
        case "distanceToLocation:fromLocation:":
            return nil  // CoreLocation does not exist on Linux.
        default:
            break
        }
        guard let x = a.flatMap(Number.init), let y = b.flatMap(Number.init) else { return nil }
        switch name {
        case "add:to:": return Arithmetic.add(x, y).value
        case "from:subtract:": return Arithmetic.subtract(x, y).value
        case "multiply:by:": return Arithmetic.multiply(x, y).value
        case "divide:by:": return Arithmetic.divide(x, y).value
        case "modulus:by:": return Arithmetic.modulus(x, y)?.value
        case "raise:toPower:": return Arithmetic.power(x, y).value
        default: break
        }
        guard let i = x.int64Value, let j = y.int64Value else { return nil }
        switch name {
        case "bitwiseAnd:with:": return Number.int(i & j).value
        case "bitwiseOr:with:": return Number.int(i | j).value
        case "bitwiseXor:with:": return Number.int(i ^ j).value
        // Swift's smart shifts: shifting by 64 or more gives 0 (or -1), negative amounts shift the other way.
        case "leftshift:by:": return Number.int(i << j).value
        case "rightshift:by:": return Number.int(i >> j).value
        default: return nil
        }
    }

    private static func unary(_ name: String, _ a: Any?) -> Any? {
        switch name {
        case "uppercase:": return a.flatMap(ValueKinds.string)?.uppercased()
        case "lowercase:": return a.flatMap(ValueKinds.string)?.lowercased()
        case "length:":
            if let string = a.flatMap(ValueKinds.string) { return string.utf16.count }
            return a.flatMap(ValueKinds.collection)?.count
        case "noindex:": return a
        default: break
        }
        guard let x = a.flatMap(Number.init) else { return nil }
        switch name {
        case "sqrt:": return x.doubleValue.squareRoot()
        case "log:": return log10(x.doubleValue)
        case "ln:": return Foundation.log(x.doubleValue)
        case "exp:": return Foundation.exp(x.doubleValue)
        case "floor:": return Arithmetic.rounded(x, .down).value
        case "ceiling:": return Arithmetic.rounded(x, .up).value
        case "trunc:": return Arithmetic.rounded(x, .towardZero).value
        case "abs:": return Arithmetic.absolute(x).value
        case "onesComplement:": return x.int64Value.map { Number.int(~$0).value }
        case "random:", "randomn:":
            guard let bound = x.int64Value, bound > 0 else { return nil }
            return Number.int(Int64.random(in: 0..<bound)).value
        default: return nil
        }
    }

    /// `collection[index]`: by position (negative or out of range gives nil), `FIRST`, `LAST`,
    /// `SIZE`; for a dictionary, by key.
    private static func element(of container: Any?, at index: Any?) -> Any? {
        guard let container, let index else { return nil }
        if let dictionary = ValueKinds.dictionary(container) {
            guard let key = index as? AnyHashable else { return nil }
            return ValueKinds.unwrap(dictionary[key])
        }
        guard let elements = ValueKinds.collection(container) else { return nil }
        if let symbol = index as? PredicateIndexSymbol {
            switch symbol {
            case .first: return elements.first ?? nil
            case .last: return elements.last ?? nil
            case .size: return elements.count
            }
        }
        guard let position = Number(index)?.int64Value.flatMap({ Int(exactly: $0) }), elements.indices.contains(position)
        else { return nil }
        return elements[position]
    }
}

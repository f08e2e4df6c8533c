import Foundation

/// A function's value, or why Apple's Foundation would raise instead of returning one.
typealias FunctionResult = Result<Any?, EvaluationFailure>

/// Apple's built-in `NSExpression` functions. Nothing here traps: where Apple raises (an unknown
/// name, the wrong number or kind of arguments, an index out of range) the result is a failure,
/// which the plain entry points turn into nil and the validating ones into a thrown error. A nil
/// argument gives nil without a failure, as a missing value does everywhere in predicates.
enum FunctionEvaluator {
    /// `FUNCTION(receiver, 'name', arguments…)`: the receiver answers through
    /// ``PredicateFunctionReceiver``; there is no Objective-C messaging on Linux, so any other
    /// receiver answers only key-value coding's `valueForKey:` and `valueForKeyPath:`.
    static func call(_ name: String, receiver: Any?, arguments: [Any?]) -> FunctionResult {
        // Messaging nil answers nil in Objective-C, whatever the selector.
        guard let receiver = ValueKinds.unwrap(receiver) else { return .success(nil) }
        if let receiver = receiver as? PredicateFunctionReceiver, let value = ValueKinds.unwrap(receiver.predicateFunction(name, arguments: arguments)) {
            return .success(value)
        }
        // Every Objective-C object answers key-value coding's two messages; mapping models call
        // them (`FUNCTION($source, "valueForKey:", "name")`), so they read through the key path
        // reader whatever the receiver.
        switch name {
        case "valueForKey:", "valueForKeyPath:":
            guard arguments.count == 1, let key = ValueKinds.unwrap(arguments[0]).flatMap(ValueKinds.string) else {
                return failure("\(name) needs one string argument")
            }
            let components = name == "valueForKey:" ? [key] : NSExpression.components(of: key)
            return .success(KeyPathReader.value(of: receiver, components: components[...]))
        default:
            return failure("\(typeName(receiver)) does not answer '\(name)' (conform to PredicateFunctionReceiver to answer it)")
        }
    }

    /// A built-in function by its selector-style name.
    static func call(_ name: String, arguments: [Any?]) -> FunctionResult {
        guard let function = BuiltinFunctions.named(name) else { return failure("unknown function '\(name)'") }
        guard function.accepts(arguments.count) else {
            return failure("\(name) takes \(BuiltinFunctions.arity(of: function)), got \(arguments.count)")
        }
        let args = arguments.map(ValueKinds.unwrap)
        switch name {
        case "now": return .success(Date())
        case "random": return .success(Int.random(in: 0...Int(Int32.max)))
        default: break
        }
        if let aggregate = aggregate(name, args) { return aggregate }
        if args.count == 2 { return binary(name, args[0], args[1]) }
        return unary(name, args[0])
    }

    private static func failure(_ message: String) -> FunctionResult {
        .failure(EvaluationFailure(message: message))
    }

    private static func typeName(_ value: Any) -> String {
        String(describing: type(of: value))
    }

    /// `sqrt: needs a number, got String`.
    private static func needs(_ name: String, _ what: String, got value: Any) -> FunctionResult {
        failure("\(name) needs \(what), got \(typeName(value))")
    }

    private static func aggregate(_ name: String, _ args: [Any?]) -> FunctionResult? {
        let compute: ([Any?]) -> Any?
        switch name {
        case "sum:": compute = Aggregates.sum
        case "count:": compute = { values in values.count }
        case "min:": compute = Aggregates.minimum
        case "max:": compute = Aggregates.maximum
        case "average:": compute = Aggregates.average
        case "median:": compute = Aggregates.median
        case "mode:": compute = Aggregates.mode
        case "stddev:": compute = Aggregates.standardDeviation
        default: return nil
        }
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
        let result = compute(values)
        // The aggregates give nil for no values, and for values they cannot combine: only the
        // second is Apple's exception.
        if result == nil, let present = values.lazy.compactMap(ValueKinds.unwrap).first {
            if name == "min:" || name == "max:" { return failure("\(name) cannot order the values (\(typeName(present)) among them)") }
            let other = values.lazy.compactMap(ValueKinds.unwrap).first { Number($0) == nil } ?? present
            return needs(name, "numbers", got: other)
        }
        return .success(result)
    }

    private static func binary(_ name: String, _ a: Any?, _ b: Any?) -> FunctionResult {
        switch name {
        case BuiltinFunctions.castName:
            guard let type = b.flatMap(ValueKinds.string) else {
                return b.map { needs(name, "a type name string", got: $0) } ?? failure("\(name) needs a type name string, got nil")
            }
            return .success(Cast.value(a, to: type))
        case BuiltinFunctions.indexName:
            return element(of: a, at: b)
        case "distanceToLocation:fromLocation:":
            return failure("\(name) needs CoreLocation, which does not exist on Linux")
        default:
            break
        }
        guard let a, let b else { return .success(nil) }
        guard let x = Number(a) else { return needs(name, "numbers", got: a) }
        guard let y = Number(b) else { return needs(name, "numbers", got: b) }
        switch name {
        case "add:to:": return .success(Arithmetic.add(x, y).value)
        case "from:subtract:": return .success(Arithmetic.subtract(x, y).value)
        case "multiply:by:": return .success(Arithmetic.multiply(x, y).value)
        case "divide:by:": return .success(Arithmetic.divide(x, y).value)
        case "modulus:by:":
            guard let remainder = Arithmetic.modulus(x, y) else { return failure("\(name) by zero") }
            return .success(remainder.value)
        case "raise:toPower:": return .success(Arithmetic.power(x, y).value)
        default: break
        }
        guard let i = integer(x), let j = integer(y) else { return failure("\(name) needs finite numbers within the range of Int") }
        switch name {
        case "bitwiseAnd:with:": return .success(Number.int(i & j).value)
        case "bitwiseOr:with:": return .success(Number.int(i | j).value)
        case "bitwiseXor:with:": return .success(Number.int(i ^ j).value)
        // Swift's smart shifts: shifting by 64 or more gives 0 (or -1), negative amounts shift the
        // other way (C, which Apple's functions are written in, leaves both undefined).
        case "leftshift:by:": return .success(Number.int(i << j).value)
        case "rightshift:by:": return .success(Number.int(i >> j).value)
        default: return failure("unknown function '\(name)'")
        }
    }

    private static func unary(_ name: String, _ a: Any?) -> FunctionResult {
        guard let a else { return .success(nil) }
        switch name {
        case "uppercase:", "lowercase:":
            guard let string = ValueKinds.string(a) else { return needs(name, "a string", got: a) }
            return .success(name == "uppercase:" ? string.uppercased() : string.lowercased())
        case "canonical:":
            // Core Data's derived-attribute function: case- and diacritic-insensitive, as the
            // `[cd]` comparisons fold (lower-cased after the diacritics are stripped).
            guard let string = ValueKinds.string(a) else { return needs(name, "a string", got: a) }
            return .success(string.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased())
        case "length:":
            if let string = ValueKinds.string(a) { return .success(string.utf16.count) }
            if let elements = ValueKinds.collection(a) { return .success(elements.count) }
            return needs(name, "a string or a collection", got: a)
        case "noindex:":
            return .success(a)
        case "distinct:":
            // Core Data's `count:(distinct:(key))`: the values without repeats.
            let elements = ValueKinds.collection(a) ?? [a]
            return .success(Aggregates.distinct(elements).compactMap { $0 })
        default:
            break
        }
        guard let x = Number(a) else { return needs(name, "a number", got: a) }
        switch name {
        case "sqrt:": return .success(x.doubleValue.squareRoot())
        case "log:": return .success(log10(x.doubleValue))
        case "ln:": return .success(Foundation.log(x.doubleValue))
        case "exp:": return .success(Foundation.exp(x.doubleValue))
        case "floor:": return .success(Arithmetic.rounded(x, .down).value)
        case "ceiling:": return .success(Arithmetic.rounded(x, .up).value)
        case "trunc:": return .success(Arithmetic.rounded(x, .towardZero).value)
        case "abs:": return .success(Arithmetic.absolute(x).value)
        case "onesComplement:":
            guard let i = integer(x) else { return failure("\(name) needs a finite number within the range of Int") }
            return .success(Number.int(~i).value)
        case "random:", "randomn:":
            guard let bound = integer(x), bound > 0 else { return failure("\(name) needs a positive bound, got \(x.value)") }
            return .success(Number.int(Int64.random(in: 0..<bound)).value)
        default:
            return failure("unknown function '\(name)'")
        }
    }

    /// The number as Apple's bitwise functions read it (as `NSInteger`, through `integerValue`):
    /// fractions truncated toward zero, unsigned values wrapped; nil when not finite or too large.
    private static func integer(_ number: Number) -> Int64? {
        switch number {
        case .int(let v): return v
        case .uint(let v): return Int64(truncatingIfNeeded: v)
        case .double(let v):
            let whole = v.rounded(.towardZero)
            guard whole.isFinite, whole >= -9.223372036854775808e18, whole < 9.223372036854775808e18 else { return nil }
            return Int64(whole)
        case .decimal: return integer(.double(number.doubleValue))
        }
    }

    /// `collection[index]`: by position, `FIRST`, `LAST`, `SIZE`; for a dictionary, by key (a
    /// missing key is nil, as `objectForKey:` gives). A position outside the collection is
    /// Apple's range exception.
    private static func element(of container: Any?, at index: Any?) -> FunctionResult {
        let name = BuiltinFunctions.indexName
        guard let container, let index else { return .success(nil) }
        if let dictionary = ValueKinds.dictionary(container) {
            guard let key = index as? AnyHashable else { return needs(name, "a hashable key", got: index) }
            return .success(ValueKinds.unwrap(dictionary[key]))
        }
        guard let elements = ValueKinds.collection(container) else { return needs(name, "a collection or a dictionary", got: container) }
        if let symbol = index as? PredicateIndexSymbol {
            switch symbol {
            case .first: return .success(elements.first ?? nil)
            case .last: return .success(elements.last ?? nil)
            case .size: return .success(elements.count)
            }
        }
        guard let number = Number(index), let position = number.int64Value.flatMap({ Int(exactly: $0) }) else {
            return needs(name, "an integer index", got: index)
        }
        guard elements.indices.contains(position) else {
            let bounds = elements.isEmpty ? "for an empty collection" : "[0 .. \(elements.count - 1)]"
            return failure("index \(position) beyond bounds \(bounds)")
        }
        return .success(elements[position])
    }
}

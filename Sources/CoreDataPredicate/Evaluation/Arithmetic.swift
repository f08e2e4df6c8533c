import Foundation

/// Arithmetic on ``Number``s without traps: integer operations that would overflow continue in
/// Double; division is done in Double (as Apple's `divide:by:` does); a zero divisor in integer
/// modulus gives nil.
///
/// Decimal operands are computed in Double: Foundation's Decimal arithmetic on Linux traps
/// (SIGILL) on overflow and on operands with extreme exponents (`1e127 * 1e127`,
/// `-1e-128 - -1e-128`), and operands here may come from untrusted format strings.
enum Arithmetic {
    static func add(_ a: Number, _ b: Number) -> Number {
        if case .int(let x) = a, case .int(let y) = b {
            let (sum, overflow) = x.addingReportingOverflow(y)
            if !overflow { return .int(sum) }
        }
        return .double(a.doubleValue + b.doubleValue)
    }

    static func subtract(_ a: Number, _ b: Number) -> Number {
        if case .int(let x) = a, case .int(let y) = b {
            let (difference, overflow) = x.subtractingReportingOverflow(y)
            if !overflow { return .int(difference) }
        }
        return .double(a.doubleValue - b.doubleValue)
    }

    static func multiply(_ a: Number, _ b: Number) -> Number {
        if case .int(let x) = a, case .int(let y) = b {
            let (product, overflow) = x.multipliedReportingOverflow(by: y)
            if !overflow { return .int(product) }
        }
        return .double(a.doubleValue * b.doubleValue)
    }

    static func divide(_ a: Number, _ b: Number) -> Number {
        .double(a.doubleValue / b.doubleValue)
    }

    static func modulus(_ a: Number, _ b: Number) -> Number? {
        if case .int(let x) = a, case .int(let y) = b {
            guard y != 0 else { return nil }
            // Int64.min % -1 overflows; its remainder is 0.
            let (remainder, overflow) = x.remainderReportingOverflow(dividingBy: y)
            return .int(overflow ? 0 : remainder)
        }
        return .double(fmod(a.doubleValue, b.doubleValue))
    }

    static func power(_ a: Number, _ b: Number) -> Number {
        .double(pow(a.doubleValue, b.doubleValue))
    }

    static func negate(_ a: Number) -> Number {
        switch a {
        case .int(let x): return x == .min ? .double(-Double(x)) : .int(-x)
        case .uint(let x): return .double(-Double(x))
        case .double(let x): return .double(-x)
        case .decimal(let x): return .decimal(-x)
        }
    }

    static func absolute(_ a: Number) -> Number {
        switch a {
        case .int(let x): return x == .min ? .uint(x.magnitude) : .int(Swift.abs(x))
        case .uint: return a
        case .double(let x): return .double(Swift.abs(x))
        case .decimal(let x): return .decimal(Swift.abs(x))
        }
    }

    /// floor, ceiling, trunc: integers are already whole.
    static func rounded(_ a: Number, _ rule: FloatingPointRoundingRule) -> Number {
        switch a {
        case .int, .uint: return a
        case .double(let x): return .double(x.rounded(rule))
        case .decimal: return .double(a.doubleValue.rounded(rule))
        }
    }
}

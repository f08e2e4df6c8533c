/// An operator that continues an expression or predicate after its left operand.
enum InfixOperator {
    case logical(NSCompoundPredicate.LogicalType)
    case comparison(NSComparisonPredicate.Operator)
    case arithmetic(name: String, precedence: Precedence)
    case set(SetKind)
    case member
    case `subscript`

    enum SetKind { case union, intersect, minus }

    init?(_ token: Token) {
        switch token.kind {
        case .symbol(let symbol):
            switch symbol {
            case .orOr: self = .logical(.or)
            case .andAnd: self = .logical(.and)
            case .equal: self = .comparison(.equalTo)
            case .notEqual: self = .comparison(.notEqualTo)
            case .less: self = .comparison(.lessThan)
            case .lessOrEqual: self = .comparison(.lessThanOrEqualTo)
            case .greater: self = .comparison(.greaterThan)
            case .greaterOrEqual: self = .comparison(.greaterThanOrEqualTo)
            case .plus: self = .arithmetic(name: "add:to:", precedence: .additive)
            case .minus: self = .arithmetic(name: "from:subtract:", precedence: .additive)
            case .star: self = .arithmetic(name: "multiply:by:", precedence: .multiplicative)
            case .slash: self = .arithmetic(name: "divide:by:", precedence: .multiplicative)
            case .power: self = .arithmetic(name: "raise:toPower:", precedence: .power)
            case .ampersand: self = .arithmetic(name: "bitwiseAnd:with:", precedence: .bitwiseAnd)
            case .pipe: self = .arithmetic(name: "bitwiseOr:with:", precedence: .bitwiseOr)
            case .caret: self = .arithmetic(name: "bitwiseXor:with:", precedence: .bitwiseXor)
            case .shiftLeft: self = .arithmetic(name: "leftshift:by:", precedence: .shift)
            case .shiftRight: self = .arithmetic(name: "rightshift:by:", precedence: .shift)
            case .utiConformsTo: self = .comparison(.utiConformsTo)
            case .utiEquals: self = .comparison(.utiEquals)
            case .dot: self = .member
            case .leftBracket: self = .subscript
            default: return nil
            }
        case .keyword(let keyword):
            switch keyword {
            case .or: self = .logical(.or)
            case .and: self = .logical(.and)
            case .in: self = .comparison(.in)
            case .like: self = .comparison(.like)
            case .matches: self = .comparison(.matches)
            case .contains: self = .comparison(.contains)
            case .beginsWith: self = .comparison(.beginsWith)
            case .endsWith: self = .comparison(.endsWith)
            case .between: self = .comparison(.between)
            default: return nil
            }
        case .identifier(let name):
            // Contextual words: operators only between two expressions, key paths anywhere else.
            switch name.uppercased() {
            case "UNION": self = .set(.union)
            case "INTERSECT": self = .set(.intersect)
            case "MINUS": self = .set(.minus)
            default: return nil
            }
        default:
            return nil
        }
    }

    var precedence: Precedence {
        switch self {
        case .logical(let type): return type == .or ? .or : .and
        case .comparison: return .comparison
        case .arithmetic(_, let precedence): return precedence
        case .set: return .setOperation
        case .member, .subscript: return .postfix
        }
    }
}

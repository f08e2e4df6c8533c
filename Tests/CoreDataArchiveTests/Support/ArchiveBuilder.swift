import Foundation

/// A test-only `NSKeyedArchiver`: objects laid out as Foundation lays them out (`$null` first,
/// class dictionaries shared, fields inline or by UID), with helpers for the expression and
/// predicate classes and knobs to damage the frame.
struct ArchiveBuilder {
    /// A field value.
    enum Field {
        case uid(Int)
        case int(Int64)
        case bool(Bool)
        case real(Double)
        case data([UInt8])
        case uids([Int])
        /// An inline string (Foundation writes `$classname` and `$classes` strings inline).
        case inlineString(String)
    }

    private(set) var plist = PropertyListWriter()
    /// `$objects`: property list object numbers.
    private(set) var entries: [Int] = []
    private var classes: [[String]: Int] = [:]
    private var strings: [String: Int] = [:]

    init() {
        entries.append(plist.add(.ascii("$null")))
    }

    /// Appends an `$objects` entry, returning its UID.
    mutating func add(_ item: PropertyListWriter.Item) -> Int {
        entries.append(plist.add(item))
        return entries.count - 1
    }

    /// A string entry, shared as Foundation shares equal strings.
    mutating func string(_ value: String) -> Int {
        if let uid = strings[value] { return uid }
        let uid = add(value.allSatisfy(\.isASCII) ? .ascii(value) : .utf16(Array(value.utf16)))
        strings[value] = uid
        return uid
    }

    /// A class entry for `chain` (the class first).
    mutating func classEntry(_ chain: [String]) -> Int {
        if let uid = classes[chain] { return uid }
        let nameKey = plist.add(.ascii("$classname"))
        let name = plist.add(.ascii(chain[0]))
        let chainKey = plist.add(.ascii("$classes"))
        let names = chain.map { plist.add(.ascii($0)) }
        let chainArray = plist.add(.array(names))
        entries.append(plist.add(.dict(keys: [nameKey, chainKey], values: [name, chainArray])))
        classes[chain] = entries.count - 1
        return entries.count - 1
    }

    /// An object of class `chain` with `fields`.
    mutating func object(_ chain: [String], _ fields: [(String, Field)] = []) -> Int {
        entries.append(plist.add(.null))
        let uid = entries.count - 1
        set(uid, chain, fields)
        return uid
    }

    /// An entry to fill in later with ``set(_:_:_:)``, for references to objects not yet built
    /// (and cycles).
    mutating func reserve() -> Int {
        entries.append(plist.add(.null))
        return entries.count - 1
    }

    /// Fills in entry `uid` as an object of class `chain` with `fields`.
    mutating func set(_ uid: Int, _ chain: [String], _ fields: [(String, Field)]) {
        let classUID = classEntry(chain)
        var keys: [Int] = []
        var values: [Int] = []
        for (key, field) in fields + [("$class", .uid(classUID))] {
            keys.append(plist.add(.ascii(key)))
            values.append(value(field))
        }
        plist.items[entries[uid]] = .dict(keys: keys, values: values)
    }

    /// Replaces the property list object of entry `uid`.
    mutating func replace(_ uid: Int, with item: PropertyListWriter.Item) {
        plist.items[entries[uid]] = item
    }

    private mutating func value(_ field: Field) -> Int {
        switch field {
        case .uid(let uid): return plist.add(.uid(UInt64(uid)))
        case .int(let value): return plist.add(.int(value))
        case .bool(let value): return plist.add(.bool(value))
        case .real(let value): return plist.add(.real(value))
        case .data(let bytes): return plist.add(.data(bytes))
        case .uids(let uids): return plist.add(.array(uids.map { plist.add(.uid(UInt64($0))) }))
        case .inlineString(let string): return plist.add(.ascii(string))
        }
    }

    /// The archive's bytes, with `$top` = `top`. `omit` drops root keys; the other parameters
    /// replace their values.
    func build(
        top: [String: Int] = ["root": 1], archiver: String = "NSKeyedArchiver", version: Int64 = 100_000,
        omit: Set<String> = []
    ) -> [UInt8] {
        var writer = plist
        var rootKeys: [Int] = []
        var rootValues: [Int] = []
        func put(_ key: String, _ value: Int) {
            guard !omit.contains(key) else { return }
            rootKeys.append(writer.add(.ascii(key)))
            rootValues.append(value)
        }
        put("$archiver", writer.add(.ascii(archiver)))
        put("$version", writer.add(.int(version)))
        let topKeys = top.keys.sorted().map { writer.add(.ascii($0)) }
        let topValues = top.keys.sorted().map { writer.add(.uid(UInt64(top[$0] ?? 0))) }
        put("$top", writer.add(.dict(keys: topKeys, values: topValues)))
        put("$objects", writer.add(.array(entries)))
        let root = writer.add(.dict(keys: rootKeys, values: rootValues))
        return writer.encode(top: root)
    }

    var data: Data { Data(build()) }

    // MARK: - Foundation classes

    static let arrayChain = ["NSArray", "NSObject"]
    static let mutableArrayChain = ["NSMutableArray", "NSArray", "NSObject"]

    mutating func array(_ uids: [Int], mutable: Bool = false) -> Int {
        object(mutable ? Self.mutableArrayChain : Self.arrayChain, [("NS.objects", .uids(uids))])
    }

    mutating func dictionary(keys: [Int], values: [Int]) -> Int {
        object(["NSMutableDictionary", "NSDictionary", "NSObject"], [("NS.keys", .uids(keys)), ("NS.objects", .uids(values))])
    }

    // MARK: - Expressions (the layout Foundation writes; Formats/keyed-archive.md §6)

    mutating func constant(_ value: Int) -> Int {
        object(["NSConstantValueExpression", "NSExpression", "NSObject"], [("NSConstantValue", .uid(value)), ("NSExpressionType", .int(0))])
    }

    mutating func constant(string: String) -> Int {
        let value = self.string(string)
        return constant(value)
    }

    mutating func constant(number: Int64) -> Int {
        let value = add(.int(number))
        return constant(value)
    }

    mutating func variable(_ name: String) -> Int {
        let value = string(name)
        return object(["NSVariableExpression", "NSExpression", "NSObject"], [("NSVariable", .uid(value)), ("NSExpressionType", .int(2))])
    }

    mutating func evaluatedObject() -> Int {
        object(["NSSelfExpression", "NSExpression", "NSObject"], [("NSExpressionType", .int(1))])
    }

    mutating func keyPathSpecifier(_ path: String) -> Int {
        let value = string(path)
        return object(["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"], [("NSKeyPath", .uid(value)), ("NSExpressionType", .int(10))])
    }

    /// `operand.path` as Foundation archives it: `valueForKeyPath:` with a key path specifier.
    mutating func keyPath(_ path: String, operand: Int? = nil) -> Int {
        let operand = operand ?? evaluatedObject()
        let specifier = keyPathSpecifier(path)
        let arguments = array([specifier], mutable: true)
        let selector = string("valueForKeyPath:")
        return object(
            ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"],
            [("NSOperand", .uid(operand)), ("NSSelectorName", .uid(selector)), ("NSExpressionType", .int(4)), ("NSArguments", .uid(arguments))])
    }

    mutating func function(_ selector: String, operand: Int, arguments: [Int]) -> Int {
        let argumentArray = array(arguments)
        let selectorUID = string(selector)
        return object(
            ["NSFunctionExpression", "NSExpression", "NSObject"],
            [("NSOperand", .uid(operand)), ("NSSelectorName", .uid(selectorUID)), ("NSExpressionType", .int(4)), ("NSArguments", .uid(argumentArray))])
    }

    /// A built-in function: Foundation's target is the constant class `_NSPredicateUtilities`.
    mutating func builtin(_ selector: String, arguments: [Int]) -> Int {
        let className = string("_NSPredicateUtilities")
        let target = object(
            ["NSConstantValueExpression", "NSExpression", "NSObject"],
            [("NSConstantValueClassName", .uid(className)), ("NSExpressionType", .int(0))])
        return function(selector, operand: target, arguments: arguments)
    }

    mutating func aggregate(_ elements: [Int]) -> Int {
        let collection = array(elements)
        return object(["NSAggregateExpression", "NSExpression", "NSObject"], [("NSCollection", .uid(collection)), ("NSExpressionType", .int(14))])
    }

    // MARK: - Predicates

    /// A comparison with the operator class Foundation picks for `type`, its options under the
    /// key that class uses (`NSOptions` or `NSFlags`).
    mutating func comparison(_ left: Int, _ type: Int64, _ right: Int, modifier: Int64 = 0, options: Int64 = 0) -> Int {
        let op: Int
        switch type {
        case 0...3:
            op = object(["NSComparisonPredicateOperator", "NSPredicateOperator", "NSObject"],
                        [("NSOperatorType", .int(type)), ("NSModifier", .int(modifier)), ("NSVariant", .int(type)), ("NSOptions", .int(options))])
        case 4, 5:
            op = object(["NSEqualityPredicateOperator", "NSPredicateOperator", "NSObject"],
                        [("NSOperatorType", .int(type)), ("NSModifier", .int(modifier)), ("NSNegate", .bool(type == 5)), ("NSOptions", .int(options))])
        case 8, 9:
            op = object(["NSSubstringPredicateOperator", "NSStringPredicateOperator", "NSPredicateOperator", "NSObject"],
                        [("NSOperatorType", .int(type)), ("NSModifier", .int(modifier)), ("NSFlags", .int(options)), ("NSPosition", .int(type == 8 ? 0 : 1))])
        default:
            op = object(["NSInPredicateOperator", "NSPredicateOperator", "NSObject"],
                        [("NSOperatorType", .int(type)), ("NSModifier", .int(modifier)), ("NSFlags", .int(options))])
        }
        return object(["NSComparisonPredicate", "NSPredicate", "NSObject"],
                      [("NSLeftExpression", .uid(left)), ("NSRightExpression", .uid(right)), ("NSPredicateOperator", .uid(op))])
    }

    mutating func compound(_ type: Int64, _ subpredicates: [Int]) -> Int {
        let list = array(subpredicates)
        return object(["NSCompoundPredicate", "NSPredicate", "NSObject"], [("NSCompoundPredicateType", .int(type)), ("NSSubpredicates", .uid(list))])
    }

    mutating func truePredicate() -> Int {
        object(["NSTruePredicate", "NSPredicate", "NSObject"])
    }
}

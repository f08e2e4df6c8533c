import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation

// Foundation declares these names too; here they mean the working classes.
private typealias NSPredicate = CoreDataPredicate.NSPredicate
private typealias NSComparisonPredicate = CoreDataPredicate.NSComparisonPredicate
private typealias NSCompoundPredicate = CoreDataPredicate.NSCompoundPredicate
private typealias NSExpression = CoreDataPredicate.NSExpression

/// Translates a fetch's predicate into an SQL condition over Apple's SQLite layout
/// (`Formats/apple-sqlite-store.md` §10), in the schema's ``SQLDialect`` (the PostgreSQL store's
/// tables have the same layout, `Formats/postgresql-store.md` §7). No I/O.
///
/// Parameters are written `?`, bound in order; a store whose database numbers them renumbers.
///
/// The condition is a *superset*: every row the predicate matches satisfies it. Where a part of
/// the predicate cannot be said in SQL with exactly the reference evaluator's meaning (string
/// options `[cd]`, `LIKE`, `MATCHES`, functions, aggregates, `ALL`, …), that part becomes true and
/// the condition is marked inexact; the store then runs the reference evaluator over the rows SQL
/// returned. Each comparison is written to give 0 or 1, never SQL's NULL, so `NOT` and `OR` keep
/// the predicate's two-valued logic (`name != 'x'` matches a row whose name is nil).
///
/// Translated: comparisons of an attribute with a constant (`==`, `!=`, `<`, `<=`, `>`, `>=` on
/// numbers, dates and booleans; `==`, `!=` on strings, data, UUIDs and URIs; `BEGINSWITH`,
/// `ENDSWITH`, `CONTAINS` on strings without options), `IN` a constant collection, `BETWEEN`,
/// `== nil` / `!= nil`, a to-one relationship compared with an object or nil, key paths through
/// to-one relationships (as sub-selects), `ANY` through to-many relationships (through the
/// inverse's column or the join table), `AND`, `OR`, `NOT`, `TRUEPREDICATE`, `FALSEPREDICATE`.
package struct SQLFetchTranslator {
    /// An SQL boolean expression and the values of its `?` parameters, in order.
    package struct Condition {
        package var sql: String
        package var values: [SQLParameter]
        /// Whether the condition matches exactly the predicate's rows (no re-check needed).
        package var isExact: Bool
        /// Whether the condition selects every row (nothing of the predicate was said in SQL).
        package var selectsAll = false

        package init(sql: String, values: [SQLParameter], isExact: Bool, selectsAll: Bool = false) {
            self.sql = sql
            self.values = values
            self.isExact = isExact
            self.selectsAll = selectsAll
        }
    }

    package let schema: SQLSchema
    private var dialect: SQLDialect { schema.dialect }
    private var all: Condition { Condition(sql: dialect.trueSQL, values: [], isExact: true, selectsAll: true) }
    private var none: Condition { Condition(sql: dialect.falseSQL, values: [], isExact: true) }
    /// An untranslatable part: matches everything, so the whole stays a superset.
    private var superset: Condition { Condition(sql: dialect.trueSQL, values: [], isExact: false, selectsAll: true) }

    package init(schema: SQLSchema) { self.schema = schema }
    /// Sub-selects nest at most this deep; deeper key paths are left to the evaluator.
    static let maximumDepth = 8

    /// The condition on rows of `entity`'s table that `predicate` implies.
    ///
    /// `positive` is false beneath an odd number of `NOT`s: there a comparison with NULL must read
    /// false (`coalesce(…, FALSE)`), where elsewhere NULL excludes the row as false does, so the
    /// comparison stays bare and an index on its column can serve it.
    package func condition(_ predicate: CoreDataPredicate.NSPredicate, entity: SQLSchema.Entity, depth: Int = 0, positive: Bool = true) -> Condition {
        if let truth = predicate.constantTruth { return truth ? all : none }
        if let compound = predicate as? NSCompoundPredicate {
            let inner = compound.compoundPredicateType == .not ? !positive : positive
            let parts = compound.subpredicates.map { condition($0, entity: entity, depth: depth, positive: inner) }
            switch compound.compoundPredicateType {
            case .and:
                let kept = parts.filter { !$0.selectsAll }
                if kept.isEmpty { return Condition(sql: dialect.trueSQL, values: [], isExact: parts.allSatisfy(\.isExact), selectsAll: true) }
                return Condition(
                    sql: "(" + kept.map(\.sql).joined(separator: " AND ") + ")", values: kept.flatMap(\.values),
                    isExact: parts.allSatisfy(\.isExact))
            case .or:
                // One inexact branch may match any row: only the whole can stand for it.
                guard parts.allSatisfy(\.isExact) else { return superset }
                if parts.isEmpty { return none }
                return Condition(sql: "(" + parts.map(\.sql).joined(separator: " OR ") + ")", values: parts.flatMap(\.values), isExact: true)
            case .not:
                guard let part = parts.first, parts.count == 1, part.isExact else { return superset }
                return Condition(sql: "(NOT \(part.sql))", values: part.values, isExact: true)
            @unknown default:
                return superset
            }
        }
        guard let comparison = predicate as? NSComparisonPredicate else { return superset }
        return self.comparison(comparison, entity: entity, depth: depth, positive: positive)
    }

    /// `expression`, which may be NULL, as a condition: bare where NULL reads as false anyway,
    /// else with NULL turned into false.
    private func wrap(_ expression: String, _ positive: Bool) -> String {
        positive ? "(\(expression))" : "coalesce(\(expression), \(dialect.falseSQL))"
    }

    private func comparison(_ predicate: NSComparisonPredicate, entity: SQLSchema.Entity, depth: Int, positive: Bool) -> Condition {
        guard depth < Self.maximumDepth else { return superset }
        // ALL over a nil or empty collection holds in the evaluator: only a re-check can say it.
        guard predicate.comparisonPredicateModifier != .all else { return superset }
        var left = predicate.leftExpression
        var right = predicate.rightExpression
        var type = predicate.predicateOperatorType
        // `30 < age` reads as `age > 30`.
        if left.expressionType == .constantValue, right.expressionType == .keyPath, let flipped = Self.flipped(type) {
            swap(&left, &right)
            type = flipped
        }
        guard left.expressionType == .keyPath, left.operand.expressionType == .evaluatedObject else { return superset }
        let constant: Any?
        switch right.expressionType {
        case .constantValue:
            constant = right.storedConstantValue
        case .aggregate:
            // `IN {'a', 'b'}`: an aggregate of constants is a constant collection.
            guard let elements = right.collection as? [NSExpression], elements.allSatisfy({ $0.expressionType == .constantValue }) else { return superset }
            constant = elements.map(\.storedConstantValue) as [Any?]
        default:
            return superset
        }
        let components = left.keyPath.split(separator: ".").map(String.init)
        guard !components.isEmpty, !components.contains(where: { $0.hasPrefix("@") }) else { return superset }
        let options = predicate.options
        // Through a nil to-one relationship the key path reads nil: whether the comparison holds
        // for nil decides what such rows (and dangling keys) get.
        let isNull = constant == nil || constant is NSNull
        let matchesNil = (type == .equalTo && isNull) || (type == .notEqualTo && !isNull)
        return path(
            components[...], entity: entity, depth: depth, anyAllowed: predicate.comparisonPredicateModifier == .any, sawToMany: false,
            matchesNil: matchesNil, positive: positive
        ) { (last, target, positive) in
            leaf(last, in: target, type: type, options: options, constant: constant, positive: positive)
        }
    }

    /// Walks a key path: a to-one relationship becomes `column IN (SELECT Z_PK FROM …)`, a
    /// to-many one (under `ANY`) `Z_PK IN (SELECT <inverse column> FROM …)`.
    private func path(
        _ components: ArraySlice<String>, entity: SQLSchema.Entity, depth: Int, anyAllowed: Bool, sawToMany: Bool, matchesNil: Bool,
        positive: Bool, leaf: (String, SQLSchema.Entity, Bool) -> Condition
    ) -> Condition {
        guard let first = components.first else { return superset }
        if components.count == 1 {
            // ANY over a single value (no to-many on the way) matches nothing when it is nil: a
            // meaning SQL's comparisons do not have.
            if anyAllowed && !sawToMany { return superset }
            return leaf(first, entity, positive)
        }
        let rest = components.dropFirst()
        if let toOne = entity.toOnes.first(where: { $0.name == first }),
           let destination = entity.entity.relationshipsByName[first]?.destinationEntity?.name.flatMap({ schema.entities[$0] }) {
            let inner = path(rest, entity: destination, depth: depth + 1, anyAllowed: anyAllowed, sawToMany: sawToMany, matchesNil: matchesNil, positive: true, leaf: leaf)
            guard !inner.selectsAll else { return superset }
            var sql = wrap("\(toOne.column) IN (SELECT Z_PK FROM \(toOne.destination.table) WHERE \(inner.sql))", positive)
            if matchesNil {
                // No destination (or a key naming no row, which reads as none) reads nil.
                sql = "(\(sql) OR coalesce(\(toOne.column) IS NULL OR \(toOne.column) NOT IN (SELECT Z_PK FROM \(toOne.destination.table)), \(dialect.falseSQL)))"
            }
            return Condition(sql: sql, values: inner.values, isExact: inner.isExact)
        }
        guard anyAllowed, let toMany = entity.toManys.first(where: { $0.name == first }),
              let destination = entity.entity.relationshipsByName[first]?.destinationEntity?.name.flatMap({ schema.entities[$0] })
        else { return superset }
        let inner = path(rest, entity: destination, depth: depth + 1, anyAllowed: anyAllowed, sawToMany: true, matchesNil: matchesNil, positive: true, leaf: leaf)
        guard !inner.selectsAll else { return superset }
        switch toMany.storage {
        case .inverseColumn(let table, let column, _):
            return Condition(
                sql: wrap("Z_PK IN (SELECT \(column) FROM \(table) WHERE \(inner.sql))", positive), values: inner.values, isExact: inner.isExact)
        case .joinTable(let join, let ownColumn, let otherColumn, _):
            return Condition(
                sql: wrap("Z_PK IN (SELECT \(ownColumn) FROM \(join.name) WHERE \(otherColumn) IN (SELECT Z_PK FROM \(destination.hierarchy.table) WHERE \(inner.sql)))", positive),
                values: inner.values, isExact: inner.isExact)
        }
    }

    /// One property of `entity` compared with a constant.
    private func leaf(
        _ name: String, in entity: SQLSchema.Entity, type: NSComparisonPredicate.Operator,
        options: NSComparisonPredicate.Options, constant: Any?, positive: Bool
    ) -> Condition {
        if let toOne = entity.toOnes.first(where: { $0.name == name }) {
            // A to-one relationship against an object or nil.
            // A key naming no row (left by a batch delete) reads as no destination.
            let existing = "\(toOne.column) IN (SELECT Z_PK FROM \(toOne.destination.table))"
            switch (type, constant) {
            case (.equalTo, nil), (.equalTo, is NSNull):
                return Condition(sql: "coalesce(\(toOne.column) IS NULL OR NOT \(existing), \(dialect.trueSQL))", values: [], isExact: true)
            case (.notEqualTo, nil), (.notEqualTo, is NSNull):
                return Condition(sql: "coalesce(\(toOne.column) IS NOT NULL AND \(existing), \(dialect.falseSQL))", values: [], isExact: true)
            case (.equalTo, let id as StoreObjectID):
                // A key names one row of the destination's table; an object of another table
                // never matches, which only the evaluator can say.
                let sameTable = schema.entities[id.entityName]?.hierarchy === toOne.destination
                return Condition(sql: "coalesce(\(toOne.column) = ? AND \(existing), \(dialect.falseSQL))", values: [.integer(id.primaryKey)], isExact: sameTable)
            default:
                return superset
            }
        }
        guard let attribute = entity.attributes.first(where: { $0.name == name }) else { return superset }
        // A boolean reads true for any nonzero integer the file holds (§5).
        let column = attribute.type == .booleanAttributeType ? dialect.booleanCondition(attribute.column) : attribute.column
        // [n] only promises normalized input; [c] and [d] fold in ways SQLite does not.
        guard options.subtracting(.normalized).isEmpty else { return superset }
        let orderable: Bool
        switch attribute.type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
             .doubleAttributeType, .dateAttributeType:
            orderable = true
        case .stringAttributeType, .binaryDataAttributeType, .UUIDAttributeType, .URIAttributeType:
            orderable = false
        default:
            // Decimals are stored as reals but held exactly in memory until a reload (§5); a
            // Float compares as a Float in memory, as a double in SQL; transformables are archives.
            return superset
        }
        let isNull = constant == nil || constant is NSNull
        switch type {
        case .equalTo:
            if isNull { return Condition(sql: "(\(column) IS NULL)", values: [], isExact: true) }
            guard let value = value(constant, for: attribute) else { return superset }
            return Condition(sql: wrap("\(column) = ?", positive), values: [value], isExact: true)
        case .notEqualTo:
            if isNull { return Condition(sql: "(\(column) IS NOT NULL)", values: [], isExact: true) }
            guard let value = value(constant, for: attribute) else { return superset }
            return Condition(sql: "(\(column) IS NULL OR \(column) != ?)", values: [value], isExact: true)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard orderable, !isNull, let value = value(constant, for: attribute) else { return superset }
            let symbol = [NSComparisonPredicate.Operator.lessThan: "<", .lessThanOrEqualTo: "<=", .greaterThan: ">", .greaterThanOrEqualTo: ">="][type] ?? "="
            return Condition(sql: wrap("\(column) \(symbol) ?", positive), values: [value], isExact: true)
        case .between:
            guard orderable, let bounds = Self.collection(constant), bounds.count == 2,
                  let low = value(bounds[0], for: attribute), let high = value(bounds[1], for: attribute) else { return superset }
            return Condition(sql: wrap("\(column) BETWEEN ? AND ?", positive), values: [low, high], isExact: true)
        case .in:
            guard let items = Self.collection(constant) else { return superset }
            let values = items.compactMap { value($0, for: attribute) }
            guard values.count == items.count else { return superset }
            if values.isEmpty { return none }
            return Condition(
                sql: wrap("\(column) IN (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))", positive), values: values, isExact: true)
        case .beginsWith, .endsWith, .contains:
            guard attribute.type == .stringAttributeType, let text = constant as? String else { return superset }
            // Character positions, not LIKE: no wildcards, and case kept.
            // Every string begins, ends with and contains the empty string; nil does not.
            if text.isEmpty { return Condition(sql: "(\(column) IS NOT NULL)", values: [], isExact: true) }
            switch type {
            case .beginsWith:
                return Condition(sql: wrap("\(dialect.beginsWith(column))", positive), values: [.text(text), .text(text)], isExact: true)
            case .endsWith:
                return Condition(sql: wrap("\(dialect.endsWith(column))", positive), values: [.text(text), .text(text)], isExact: true)
            default:
                return Condition(sql: wrap("\(dialect.contains(column))", positive), values: [.text(text)], isExact: true)
            }
        default:
            return superset
        }
    }

    /// The SQL value a predicate constant is compared as; its own Swift type decides, so
    /// `age < 30.5` compares with the real 30.5, not a rounded integer.
    private func value(_ constant: Any?, for attribute: SQLSchema.AttributeColumn) -> SQLParameter? {
        guard let value = Self.sqliteValue(constant, for: attribute) else { return nil }
        guard dialect == .postgreSQL, attribute.type == .booleanAttributeType else { return value }
        // PostgreSQL compares a boolean only with a boolean: 0 and 1 are false and true, any other
        // number is the evaluator's to compare.
        switch value {
        case .integer(0): return .bool(false)
        case .integer(1): return .bool(true)
        default: return nil
        }
    }

    private static func sqliteValue(_ constant: Any?, for attribute: SQLSchema.AttributeColumn) -> SQLParameter? {
        let numeric: Bool
        switch attribute.type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType, .doubleAttributeType:
            numeric = true
        default:
            // A number against a date or a string is the evaluator's to compare.
            numeric = false
        }
        switch (constant, attribute.type) {
        case (let flag as Bool, .booleanAttributeType): return .integer(flag ? 1 : 0)
        case (let number as Int, _) where numeric: return .integer(Int64(number))
        case (let number as Int64, _) where numeric: return .integer(number)
        case (let number as Int32, _) where numeric: return .integer(Int64(number))
        case (let number as Int16, _) where numeric: return .integer(Int64(number))
        case (let number as Double, _) where numeric && attribute.type != .booleanAttributeType:
            return number.isNaN ? nil : .real(number)
        case (let number as NSNumber, _) where numeric:
            let kind = String(cString: number.objCType)
            if kind == "d" || kind == "f" { return number.doubleValue.isNaN ? nil : .real(number.doubleValue) }
            // An unsigned value past Int64.max would wrap: leave it to the evaluator.
            if kind == "Q" || kind == "L" { return number.uint64Value <= UInt64(Int64.max) ? .integer(Int64(number.uint64Value)) : nil }
            return .integer(number.int64Value)
        case (let text as String, .stringAttributeType): return .text(text)
        case (let date as Date, .dateAttributeType): return .date(date)
        case (let uuid as UUID, .UUIDAttributeType): return .uuid(uuid)
        case (let url as URL, .URIAttributeType): return .text(url.absoluteString)
        case (let data as Data, .binaryDataAttributeType) where !attribute.externalStorage: return .blob(data)
        default: return nil
        }
    }

    private static func collection(_ constant: Any?) -> [Any?]? {
        switch constant {
        case let array as [Any?]: return array
        case let array as [Any]: return array.map { $0 }
        case let set as Set<AnyHashable>: return set.map { $0.base }
        case let array as NSArray: return array.map { $0 }
        default: return nil
        }
    }

    private static func flipped(_ type: NSComparisonPredicate.Operator) -> NSComparisonPredicate.Operator? {
        switch type {
        case .lessThan: return .greaterThan
        case .lessThanOrEqualTo: return .greaterThanOrEqualTo
        case .greaterThan: return .lessThan
        case .greaterThanOrEqualTo: return .lessThanOrEqualTo
        case .equalTo, .notEqualTo: return type
        default: return nil
        }
    }
}

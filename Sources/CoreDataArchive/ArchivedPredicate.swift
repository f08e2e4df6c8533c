import CoreDataPredicate
import Foundation

private typealias Predicate = CoreDataPredicate.NSPredicate
private typealias ComparisonPredicate = CoreDataPredicate.NSComparisonPredicate
private typealias CompoundPredicate = CoreDataPredicate.NSCompoundPredicate

/// Archived predicates (Formats/keyed-archive.md §6.2): `NSComparisonPredicate` with its
/// `NSPredicateOperator`, `NSCompoundPredicate`, `NSTruePredicate` and `NSFalsePredicate`.
extension ArchivedExpressionDecoder {
    /// The option bits this package's comparisons have (`[c]`, `[d]`, `[n]`). Foundation's
    /// operators also store a locale bit (8) that has no format syntax; it is dropped.
    static let knownOptionBits: UInt = 0x7

    /// The root predicate of the keyed archive in `data` (`$top[rootKey]`).
    /// - Throws: ``KeyedArchiveError`` for an unreadable archive or anything ``predicate(at:)`` throws.
    public static func predicate(fromArchive data: Data, rootKey: String = "root", hook: Hook? = nil) throws(KeyedArchiveError) -> CoreDataPredicate.NSPredicate {
        let archive = try KeyedArchive(data: data)
        return try ArchivedExpressionDecoder(archive: archive, hook: hook).predicate(at: archive.rootReference(rootKey))
    }

    /// The predicate archived at `reference`.
    ///
    /// - Throws: ``KeyedArchiveError``: `.unknownClass` for a predicate class not listed above,
    ///   `.wrongClass` for an object that is not a predicate, `.malformed` for missing or wrong
    ///   fields (an operator type with no equivalent here, such as Foundation's internal 1000 and
    ///   2000), and the limits of ``expression(at:)``.
    public func predicate(at reference: ArchiveReference) throws(KeyedArchiveError) -> CoreDataPredicate.NSPredicate {
        try nested(reference) { () throws(KeyedArchiveError) -> Predicate in
            try unarchiver.withObject(reference) { (object) throws(KeyedArchiveError) -> Predicate in
                try decodePredicate(object)
            }
        }
    }

    /// The predicate in field `key` of `object`; nil when the field is missing or `$null`.
    public func predicate(forKey key: String, in object: ArchivedObject) throws(KeyedArchiveError) -> CoreDataPredicate.NSPredicate? {
        guard let reference = try object.reference(forKey: key) else { return nil }
        return try predicate(at: reference)
    }

    private func decodePredicate(_ object: ArchivedObject) throws(KeyedArchiveError) -> Predicate {
        switch object.className {
        case "NSTruePredicate":
            return Predicate(value: true)
        case "NSFalsePredicate":
            return Predicate(value: false)
        case "NSCompoundPredicate":
            let rawType = try required(object.integer(forKey: "NSCompoundPredicateType"), "NSCompoundPredicateType", object)
            guard let type = UInt(exactly: rawType).flatMap(CompoundPredicate.LogicalType.init(rawValue:)) else {
                throw KeyedArchiveError(
                    .malformed, "\(object.label): NSCompoundPredicateType \(rawType) is not 0 (NOT), 1 (AND) or 2 (OR)", object: object.reference.index)
            }
            let subpredicates = try collection(forKey: "NSSubpredicates", in: object) { (reference) throws(KeyedArchiveError) -> Predicate in
                try predicate(at: reference)
            }
            return CompoundPredicate(type: type, subpredicates: subpredicates)
        case "NSComparisonPredicate":
            let left = try required(expression(forKey: "NSLeftExpression", in: object), "NSLeftExpression", object)
            let right = try required(expression(forKey: "NSRightExpression", in: object), "NSRightExpression", object)
            let operatorReference = try required(object.reference(forKey: "NSPredicateOperator"), "NSPredicateOperator", object)
            let (type, modifier, options) = try unarchiver.withObject(operatorReference) {
                (op) throws(KeyedArchiveError) -> (ComparisonPredicate.Operator, ComparisonPredicate.Modifier, ComparisonPredicate.Options) in
                try comparisonOperator(op)
            }
            return ComparisonPredicate(leftExpression: left, rightExpression: right, modifier: modifier, type: type, options: options)
        default:
            if object.isKind(of: "NSPredicate") {
                throw KeyedArchiveError(.unknownClass, "unknown predicate class \(object.className) at \(object.reference)", object: object.reference.index)
            }
            throw KeyedArchiveError(
                .wrongClass, "\(object.reference) is \(KeyedArchive.withArticle(object.className)), expected an NSPredicate",
                object: object.reference.index)
        }
    }

    /// An `NSPredicateOperator` (or one of its subclasses): `NSOperatorType`, `NSModifier`, and
    /// the string options under `NSOptions` (comparison and equality operators) or `NSFlags`
    /// (string, `IN` and `CONTAINS` operators).
    private func comparisonOperator(
        _ object: ArchivedObject
    ) throws(KeyedArchiveError) -> (ComparisonPredicate.Operator, ComparisonPredicate.Modifier, ComparisonPredicate.Options) {
        guard object.isKind(of: "NSPredicateOperator") else {
            throw KeyedArchiveError(
                .wrongClass, "\(object.reference) is \(KeyedArchive.withArticle(object.className)), expected an NSPredicateOperator",
                object: object.reference.index)
        }
        let rawType = try required(object.integer(forKey: "NSOperatorType"), "NSOperatorType", object)
        guard let type = UInt(exactly: rawType).flatMap(ComparisonPredicate.Operator.init(rawValue:)) else {
            throw KeyedArchiveError(
                .malformed, "\(object.label): operator type \(rawType) has no equivalent here (0–11, 99, 100, 1100 and 1101 do)", object: object.reference.index)
        }
        let rawModifier = try object.integer(forKey: "NSModifier") ?? 0
        guard let modifier = UInt(exactly: rawModifier).flatMap(ComparisonPredicate.Modifier.init(rawValue:)) else {
            throw KeyedArchiveError(
                .malformed, "\(object.label): NSModifier \(rawModifier) is not 0 (direct), 1 (ALL) or 2 (ANY)", object: object.reference.index)
        }
        // (`??` would turn the typed error into `any Error`.)
        var rawOptions = 0
        if let options = try object.integer(forKey: "NSOptions") {
            rawOptions = options
        } else if let flags = try object.integer(forKey: "NSFlags") {
            rawOptions = flags
        }
        let options = ComparisonPredicate.Options(rawValue: UInt(truncatingIfNeeded: rawOptions) & Self.knownOptionBits)
        return (type, modifier, options)
    }
}

import CoreData
import Foundation
import XCTest

/// Values as Apple bridges them (issue 20): wherever Apple's Core Data hands back a Foundation
/// object through `Any` (`NSNumber`, `NSDecimalNumber`, `NSSet`, `NSOrderedSet`), the Swift
/// casts Apple code writes (`as? Int`, `as? Double`, `as? Int64`, `as? Bool`, `as? NSNumber`,
/// `as? Decimal`, `as? Set<NSManagedObject>`, …) work here too. One table: each public surface,
/// each cast that must succeed, on every store kind.
///
/// `value(forKey:)` and typed accessors are the exception: they give the attribute's Swift type
/// (DifferencesFromApple.md explains why), so their rows list the casts that work on those.
final class ValueBridgingTests: XCTestCase {
    /// A cast as Apple code writes it, reporting the number it gives (or 1 for a non-number
    /// success) so that the table can check the value too.
    private struct Cast: Sendable {
        let name: String
        let apply: @Sendable (Any?) -> Double?
    }

    private static let casts: [String: Cast] = {
        let list: [Cast] = [
            Cast(name: "Int") { ($0 as? Int).map(Double.init) },
            Cast(name: "Int16") { ($0 as? Int16).map(Double.init) },
            Cast(name: "Int32") { ($0 as? Int32).map(Double.init) },
            Cast(name: "Int64") { ($0 as? Int64).map(Double.init) },
            Cast(name: "Double") { $0 as? Double },
            Cast(name: "Float") { ($0 as? Float).map(Double.init) },
            Cast(name: "Bool") { ($0 as? Bool).map { $0 ? 1 : 0 } },
            Cast(name: "NSNumber") { ($0 as? NSNumber)?.doubleValue },
            Cast(name: "Decimal") { ($0 as? Decimal).map { NSDecimalNumber(decimal: $0).doubleValue } },
            Cast(name: "NSDecimalNumber") { ($0 as? NSDecimalNumber)?.doubleValue },
            Cast(name: "Set<NSManagedObject>") { ($0 as? Set<NSManagedObject>).map { Double($0.count) } },
            Cast(name: "NSSet") { ($0 as? NSSet).map { Double($0.count) } },
            Cast(name: "NSOrderedSet") { ($0 as? NSOrderedSet).map { Double($0.count) } },
        ]
        return Dictionary(uniqueKeysWithValues: list.map { ($0.name, $0) })
    }()

    /// One surface's value, the casts that must succeed on it, and the number each must give.
    private struct Row {
        let surface: String
        let value: Any?
        let casts: [String]
        let expected: Double
    }

    private static let integer = ["Int", "Int64", "Double", "NSNumber"]
    private static let boolean = ["Bool", "Int", "NSNumber"]

    private func check(_ rows: [Row], _ kind: StoreKind, file: StaticString = #filePath, line: UInt = #line) {
        for row in rows {
            for name in row.casts {
                guard let cast = Self.casts[name] else { return XCTFail("no cast \(name)", file: file, line: line) }
                let result = cast.apply(row.value)
                XCTAssertNotNil(result, "[\(kind)] \(row.surface) as? \(name) (holds \(row.value.map { String(describing: type(of: $0)) } ?? "nil"))", file: file, line: line)
                if let result { XCTAssertEqual(result, row.expected, accuracy: 1e-9, "[\(kind)] \(row.surface) as? \(name)", file: file, line: line) }
            }
        }
    }

    /// Gauge has one attribute of each number kind, Part and Step hang off it through an
    /// unordered and an ordered to-many relationship.
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        func entity(_ name: String, _ properties: [NSPropertyDescription]) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = "NSManagedObject"
            entity.properties = properties
            return entity
        }
        func link(_ name: String, from source: NSEntityDescription, to destination: NSEntityDescription, ordered: Bool) {
            let many = NSRelationshipDescription(), one = NSRelationshipDescription()
            many.name = name
            many.maxCount = 0
            many.isOrdered = ordered
            many.isOptional = true
            one.name = "gauge"
            one.maxCount = 1
            one.isOptional = true
            many.destinationEntity = destination
            one.destinationEntity = source
            many.inverseRelationship = one
            one.inverseRelationship = many
            source.properties.append(many)
            destination.properties.append(one)
        }
        let gauge = entity("Gauge", [
            attribute("small", .integer16AttributeType), attribute("medium", .integer32AttributeType),
            attribute("large", .integer64AttributeType), attribute("real", .doubleAttributeType),
            attribute("single", .floatAttributeType), attribute("flag", .booleanAttributeType),
            attribute("amount", .decimalAttributeType), attribute("label", .stringAttributeType),
        ])
        let weight = attribute("weight", .integer16AttributeType)
        weight.preservesValueInHistoryOnDeletion = true
        let part = entity("Part", [weight])
        let step = entity("Step", [attribute("order", .integer32AttributeType)])
        link("parts", from: gauge, to: part, ordered: false)
        link("steps", from: gauge, to: step, ordered: true)
        let model = NSManagedObjectModel()
        model.entities = [gauge, part, step]
        return model
    }()

    private func forEachStore(_ options: [String: NSObject] = [:], kinds: [StoreKind] = StoreKind.allCases, _ body: (StoreKind, NSPersistentContainer) throws -> Void) {
        _ = StoreKind.sharedModel  // registers the user-written store types
        for kind in kinds {
            do {
                try body(kind, try kind.makeContainer(model: Self.model, options: options))
            } catch {
                XCTFail("[\(kind)] \(error)")
            }
        }
    }

    @discardableResult
    private func seed(_ context: NSManagedObjectContext) throws -> NSManagedObject {
        let gauge = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: context)
        gauge.setValue(Int16(3), forKey: "small")
        gauge.setValue(Int32(4), forKey: "medium")
        gauge.setValue(Int64(5), forKey: "large")
        gauge.setValue(2.5, forKey: "real")
        gauge.setValue(Float(1.5), forKey: "single")
        gauge.setValue(true, forKey: "flag")
        gauge.setValue(Decimal(7), forKey: "amount")
        gauge.setValue("g", forKey: "label")
        for weight in [Int16(2), Int16(4), Int16(9)] {
            let part = NSEntityDescription.insertNewObject(forEntityName: "Part", into: context)
            part.setValue(weight, forKey: "weight")
            part.setValue(gauge, forKey: "gauge")
        }
        for order in [Int32(1), Int32(2)] {
            let step = NSEntityDescription.insertNewObject(forEntityName: "Step", into: context)
            step.setValue(order, forKey: "order")
            step.setValue(gauge, forKey: "gauge")
        }
        try context.save()
        return gauge
    }

    // MARK: Objects

    /// A value set with the Swift type its attribute reads back as is kept as its store value
    /// alone and converted on each read (AttributeSlots); a value of another Swift type, and
    /// nil, are kept as set. Either way every read gives what was set, as `value(forKey:)`
    /// bridges it: before and after the save, the committed and changed values, and another
    /// context's fetch.
    func testAValueReadsBackAsItWasSetWhateverItsSwiftType() {
        forEachStore { kind, container in
            let context = container.newBackgroundContext()
            let set: [(String, Any)] = [
                ("small", Int16(3)), ("medium", Int32(4)), ("large", Int64(5)), ("real", 2.5),
                ("single", Float(1.5)), ("flag", true), ("label", "g"),
            ]
            // Numbers and booleans compared as NSNumbers (Apple code's `as? NSNumber`).
            func assertReads(_ read: (String) -> Any?, _ expected: [(String, Any)], _ what: String) {
                for (key, value) in expected {
                    let got = read(key)
                    if let number = value as? NSNumber, !(value is String) {
                        XCTAssertEqual((got as? NSNumber)?.doubleValue, number.doubleValue, "[\(kind)] \(what): \(key) holds \(got.map { "\(type(of: $0))" } ?? "nil")")
                    } else {
                        XCTAssertEqual(got as? String, value as? String, "[\(kind)] \(what): \(key)")
                    }
                }
            }
            try context.performAndWait {
                let gauge = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: context)
                for (key, value) in set { gauge.setValue(value, forKey: key) }
                assertReads(gauge.value(forKey:), set, "inserted")
                XCTAssertEqual(gauge.value(forKey: "flag") as? Bool, true, "[\(kind)]")
                XCTAssertEqual(gauge.value(forKey: "small") as? Int16, 3, "[\(kind)]")
                try context.save()
                assertReads(gauge.value(forKey:), set, "saved")

                // Other Swift types (an Int on a 64-bit attribute, a Double on a Float one), a
                // value of the attribute's type again, and nil. The committed values stay as saved.
                gauge.setValue(7, forKey: "large")
                gauge.setValue(0.25, forKey: "single")
                gauge.setValue(Int32(9), forKey: "medium")
                gauge.setValue(nil, forKey: "label")
                assertReads(gauge.value(forKey:), [("large", 7), ("single", 0.25), ("medium", 9)], "changed")
                XCTAssertTrue(gauge.value(forKey: "large") is Int, "[\(kind)] an Int on a 64-bit attribute is kept as set")
                XCTAssertTrue(gauge.value(forKey: "single") is Double, "[\(kind)] a Double on a Float attribute is kept as set")
                XCTAssertNil(gauge.value(forKey: "label"), "[\(kind)]")
                let committed = gauge.committedValues(forKeys: ["large", "single", "medium", "label"])
                assertReads({ committed[$0] }, [("large", 5), ("single", 1.5), ("medium", 4), ("label", "g")], "committed")
                XCTAssertEqual(gauge.changedValues().keys.sorted(), ["label", "large", "medium", "single"], "[\(kind)]")
                assertReads({ gauge.changedValues()[$0] }, [("large", 7), ("single", 0.25), ("medium", 9)], "changedValues")
                try context.save()
            }
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Gauge")
                let gauge = try XCTUnwrap(reader.fetch(request).first)
                assertReads(gauge.value(forKey:), [("small", 3), ("medium", 9), ("large", 7), ("real", 2.5), ("single", 0.25), ("flag", 1)], "fetched")
                XCTAssertNil(gauge.value(forKey: "label"), "[\(kind)]")
            }
        }
    }

    func testObjectValuesAndCollectionOperators() {
        forEachStore { kind, container in
            let context = container.viewContext
            let gauge = try seed(context)
            check([
                // value(forKey:) gives the attribute's Swift type (a documented difference).
                Row(surface: "value(forKey: Integer 16)", value: gauge.value(forKey: "small"), casts: ["Int16", "NSNumber"], expected: 3),
                Row(surface: "value(forKey: Integer 64)", value: gauge.value(forKey: "large"), casts: ["Int64", "NSNumber"], expected: 5),
                Row(surface: "value(forKey: Double)", value: gauge.value(forKey: "real"), casts: ["Double", "NSNumber"], expected: 2.5),
                Row(surface: "value(forKey: Boolean)", value: gauge.value(forKey: "flag"), casts: ["Bool", "NSNumber"], expected: 1),
                Row(surface: "value(forKey: Decimal)", value: gauge.value(forKey: "amount"), casts: ["Decimal", "NSNumber", "NSDecimalNumber"], expected: 7),
                Row(surface: "value(forKey: to-many)", value: gauge.value(forKey: "parts"), casts: ["Set<NSManagedObject>", "NSSet"], expected: 3),
                Row(surface: "value(forKey: ordered to-many)", value: gauge.value(forKey: "steps"), casts: ["NSOrderedSet"], expected: 2),
                Row(surface: "value(forKeyPath: to-many)", value: gauge.value(forKeyPath: "parts"), casts: ["Set<NSManagedObject>", "NSSet"], expected: 3),
                Row(surface: "value(forKeyPath: parts.weight)", value: gauge.value(forKeyPath: "parts.weight"), casts: ["NSSet"], expected: 3),
                Row(surface: "value(forKeyPath: steps.order)", value: gauge.value(forKeyPath: "steps.order"), casts: ["NSOrderedSet"], expected: 2),
                Row(surface: "parts.@count", value: gauge.value(forKeyPath: "parts.@count"), casts: Self.integer + ["Int32"], expected: 3),
                Row(surface: "parts.@sum.weight", value: gauge.value(forKeyPath: "parts.@sum.weight"), casts: Self.integer, expected: 15),
                Row(surface: "parts.@avg.weight", value: gauge.value(forKeyPath: "parts.@avg.weight"), casts: Self.integer, expected: 5),
                Row(surface: "parts.@max.weight", value: gauge.value(forKeyPath: "parts.@max.weight"), casts: Self.integer, expected: 9),
                Row(surface: "parts.@min.weight", value: gauge.value(forKeyPath: "parts.@min.weight"), casts: Self.integer, expected: 2),
                Row(surface: "steps.@count", value: gauge.value(forKeyPath: "steps.@count"), casts: Self.integer, expected: 2),
            ], kind)
            XCTAssertEqual((gauge.value(forKeyPath: "parts.weight") as? Set<Int16>), [2, 4, 9], "[\(kind)] a path through a to-many relationship casts to a typed set")

            let committed = gauge.committedValues(forKeys: nil)
            gauge.setValue(Int16(8), forKey: "small")
            gauge.setValue(false, forKey: "flag")
            gauge.setValue(Decimal(string: "1.25"), forKey: "amount")
            let changed = gauge.changedValues()
            check([
                Row(surface: "committedValues Integer 16", value: committed["small"], casts: Self.integer + ["Int16"], expected: 3),
                Row(surface: "committedValues Integer 64", value: committed["large"], casts: Self.integer, expected: 5),
                Row(surface: "committedValues Double", value: committed["real"], casts: ["Double", "NSNumber"], expected: 2.5),
                Row(surface: "committedValues Boolean", value: committed["flag"], casts: Self.boolean, expected: 1),
                Row(surface: "committedValues Decimal", value: committed["amount"], casts: ["Decimal", "NSDecimalNumber", "NSNumber", "Int"], expected: 7),
                Row(surface: "committedValues to-many", value: committed["parts"], casts: ["Set<NSManagedObject>", "NSSet"], expected: 3),
                Row(surface: "changedValues Integer 16", value: changed["small"], casts: Self.integer, expected: 8),
                Row(surface: "changedValues Boolean", value: changed["flag"], casts: Self.boolean, expected: 0),
                Row(surface: "changedValues Decimal", value: changed["amount"], casts: ["Decimal", "NSDecimalNumber", "Double"], expected: 1.25),
            ], kind)
        }
    }

    // MARK: Fetches and requests

    func testDictionaryResultsAndCounts() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seed(context)
            func aggregate(_ name: String, _ function: String, _ keyPath: String, _ type: NSAttributeType) -> NSExpressionDescription {
                let description = NSExpressionDescription()
                description.name = name
                description.expression = NSExpression(forFunction: function, arguments: [NSExpression(forKeyPath: keyPath)])
                description.expressionResultType = type
                return description
            }
            let columns = NSFetchRequest<NSDictionary>(entityName: "Gauge")
            columns.resultType = .dictionaryResultType
            columns.propertiesToFetch = ["small", "large", "real", "flag", "amount"]
            let row = try XCTUnwrap(try context.fetch(columns).first)
            let totals = NSFetchRequest<NSDictionary>(entityName: "Part")
            totals.resultType = .dictionaryResultType
            totals.propertiesToFetch = [
                aggregate("total", "sum:", "weight", .integer64AttributeType), aggregate("mean", "average:", "weight", .doubleAttributeType),
                aggregate("count", "count:", "weight", .integer64AttributeType), aggregate("heaviest", "max:", "weight", .integer16AttributeType),
            ]
            let summary = try XCTUnwrap(try context.fetch(totals).first)
            check([
                Row(surface: "dictionary Integer 16", value: row["small"], casts: Self.integer + ["Int16"], expected: 3),
                Row(surface: "dictionary Integer 64", value: row["large"], casts: Self.integer, expected: 5),
                Row(surface: "dictionary Double", value: row["real"], casts: ["Double", "NSNumber"], expected: 2.5),
                // NSDictionary on Linux hands a boolean NSNumber back as a Swift Bool: no `as? Int`.
                Row(surface: "dictionary Boolean", value: row["flag"], casts: ["Bool", "NSNumber"], expected: 1),
                Row(surface: "dictionary Decimal", value: row["amount"], casts: ["Decimal", "NSDecimalNumber", "NSNumber", "Int"], expected: 7),
                Row(surface: "dictionary sum:", value: summary["total"], casts: Self.integer, expected: 15),
                Row(surface: "dictionary average:", value: summary["mean"], casts: Self.integer, expected: 5),
                Row(surface: "dictionary count:", value: summary["count"], casts: Self.integer, expected: 3),
                Row(surface: "dictionary max:", value: summary["heaviest"], casts: Self.integer + ["Int16"], expected: 9),
            ], kind)
            XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Part")), 3, "[\(kind)] count(for:) is an Int")

            let update = NSBatchUpdateRequest(entityName: "Part")
            update.propertiesToUpdate = ["weight": NSExpression(forConstantValue: Int16(1))]
            update.resultType = .updatedObjectsCountResultType
            let updated = (try context.execute(update) as? NSBatchUpdateResult)?.result
            update.resultType = .statusOnlyResultType
            let status = (try context.execute(update) as? NSBatchUpdateResult)?.result
            let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Step"))
            delete.resultType = .resultTypeCount
            let deleted = (try context.execute(delete) as? NSBatchDeleteResult)?.result
            check([
                Row(surface: "NSBatchUpdateResult count", value: updated, casts: Self.integer, expected: 3),
                Row(surface: "NSBatchUpdateResult status", value: status, casts: Self.boolean, expected: 1),
                Row(surface: "NSBatchDeleteResult count", value: deleted, casts: Self.integer, expected: 2),
            ], kind)
        }
    }

    func testHistoryTombstones() {
        forEachStore([NSPersistentHistoryTrackingKey: true as NSNumber], kinds: PersistentHistoryTests.historyKinds) { kind, container in
            let context = container.viewContext
            let gauge = try seed(context)
            for part in (gauge.value(forKey: "parts") as? Set<NSManagedObject>) ?? [] { context.delete(part) }
            try context.save()
            let request = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
            let transactions = (try context.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
            let tombstones = transactions.flatMap { $0.changes ?? [] }.filter { $0.changeType == .delete }.compactMap(\.tombstone)
            try require(tombstones, count: 3, "[\(kind)] the parts' tombstones")
            let weights = tombstones.compactMap { $0["weight"] }
            check(weights.map { Row(surface: "history tombstone Integer 16", value: $0, casts: Self.integer + ["Int16"], expected: ($0 as? NSNumber)?.doubleValue ?? -1) }, kind)
            XCTAssertEqual(Set(weights.compactMap { $0 as? Int }), [2, 4, 9], "[\(kind)]")
        }
    }

    // MARK: Predicates

    func testConstantsOfParsedPredicatesAndSubstitutions() {
        func constant(_ predicate: CoreData.NSPredicate) -> Any? {
            (predicate as? CoreData.NSComparisonPredicate)?.rightExpression.constantValue
        }
        let template = NSPredicate(format: "small >= $MIN")
        check([
            Row(surface: "format literal 3", value: constant(NSPredicate(format: "small == 3")), casts: Self.integer, expected: 3),
            Row(surface: "format literal 2.5", value: constant(NSPredicate(format: "real == 2.5")), casts: ["Double", "NSNumber", "Float"], expected: 2.5),
            Row(surface: "format literal YES", value: constant(NSPredicate(format: "flag == YES")), casts: Self.boolean, expected: 1),
            Row(surface: "format literal FALSE", value: constant(NSPredicate(format: "flag == FALSE")), casts: Self.boolean, expected: 0),
            Row(surface: "format %d", value: constant(NSPredicate(format: "small == %d", 4)), casts: Self.integer, expected: 4),
            Row(surface: "format %@ Int16", value: constant(NSPredicate(format: "small == %@", Int16(6) as NSNumber)), casts: Self.integer, expected: 6),
            Row(surface: "format %f", value: constant(NSPredicate(format: "real == %f", 0.5)), casts: ["Double", "NSNumber"], expected: 0.5),
            Row(surface: "substitution Int", value: constant(template.withSubstitutionVariables(["MIN": 2])), casts: Self.integer, expected: 2),
            Row(surface: "substitution Int16", value: constant(template.withSubstitutionVariables(["MIN": Int16(2)])), casts: Self.integer, expected: 2),
            Row(surface: "substitution Decimal", value: constant(template.withSubstitutionVariables(["MIN": Decimal(2)])), casts: ["Decimal", "NSDecimalNumber", "Int"], expected: 2),
            Row(surface: "NSExpression(forConstantValue: Int16)", value: NSExpression(forConstantValue: Int16(5)).constantValue, casts: Self.integer, expected: 5),
        ], .inMemory)
        let matched = NSPredicate(format: "small >= $MIN").withSubstitutionVariables(["MIN": 3]).evaluate(with: ["small": Int16(3)])
        XCTAssertTrue(matched, "bridged constants still evaluate")
    }
}

// Code written the way Apple-platform Core Data code reads attribute values through key-value
// coding: `value(forKey:) as? Int` on an Integer 16 attribute, `as? Bool`, `as? Double`,
// `as? NSNumber`, `as? NSDecimalNumber`, custom accessors over `primitiveValue(forKey:)`, values
// copied from one object to another, and dictionary results cast to other number types (issue 20,
// item 2). Foundation, XCTest and CoreData are imported side by side with no type aliases.
import Foundation
import XCTest
import CoreData

/// A custom accessor as Apple's documentation writes one: `primitiveValue(forKey:)` bracketed by
/// the access notifications, cast to a Swift type.
final class Gauge: NSManagedObject {
    var level: Int {
        willAccessValue(forKey: "level")
        defer { didAccessValue(forKey: "level") }
        return primitiveValue(forKey: "level") as? Int ?? 0
    }
}

final class AppleValueBridgingStyleTests: XCTestCase {
    private func makeModel() -> NSManagedObjectModel {
        let gauge = NSEntityDescription()
        gauge.name = "Gauge"
        gauge.managedObjectClassName = "Gauge"
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        gauge.properties = [
            attribute("name", .stringAttributeType),
            attribute("level", .integer16AttributeType),
            attribute("count", .integer32AttributeType),
            attribute("total", .integer64AttributeType),
            attribute("ratio", .doubleAttributeType),
            attribute("weight", .floatAttributeType),
            attribute("enabled", .booleanAttributeType),
            attribute("price", .decimalAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [gauge]
        return model
    }

    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("value-bridging-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The store types an app picks, each with a fresh location.
    private func storeTypes() -> [(type: String, url: URL?)] {
        [
            (NSInMemoryStoreType, nil),
            (NSSQLiteStoreType, directory.appendingPathComponent("Gauges.sqlite")),
            (NSXMLStoreType, directory.appendingPathComponent("Gauges.xml")),
        ]
    }

    private func makeContext(_ model: NSManagedObjectModel, type: String, url: URL?) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    private func insertGauge(into context: NSManagedObjectContext) -> NSManagedObject {
        let gauge = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: context)
        gauge.setValue("boiler", forKey: "name")
        gauge.setValue(7, forKey: "level")
        gauge.setValue(NSNumber(value: 1_000), forKey: "count")
        gauge.setValue(Int64(5_000_000_000), forKey: "total")
        gauge.setValue(0.25, forKey: "ratio")
        gauge.setValue(Float(1.5), forKey: "weight")
        gauge.setValue(true, forKey: "enabled")
        gauge.setValue(NSDecimalNumber(string: "19.99"), forKey: "price")
        return gauge
    }

    private func assertBridged(_ gauge: NSManagedObject, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(gauge.value(forKey: "level") as? Int, 7, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "level") as? Int16, 7, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "level") as? Double, 7, file: file, line: line)
        XCTAssertEqual((gauge.value(forKey: "level") as? NSNumber)?.intValue, 7, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "count") as? Int, 1_000, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "count") as? Int32, 1_000, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "total") as? Int, 5_000_000_000, file: file, line: line)
        XCTAssertNil(gauge.value(forKey: "total") as? Int32, "5,000,000,000 does not fit an Int32, as on Apple", file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "ratio") as? Double, 0.25, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "ratio") as? Float, 0.25, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "weight") as? Double, 1.5, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "weight") as? Float, 1.5, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "enabled") as? Bool, true, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "enabled") as? Int, 1, file: file, line: line)
        XCTAssertEqual((gauge.value(forKey: "enabled") as? NSNumber)?.boolValue, true, file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "price") as? Decimal, Decimal(string: "19.99"), file: file, line: line)
        XCTAssertEqual((gauge.value(forKey: "price") as? NSDecimalNumber)?.stringValue, "19.99", file: file, line: line)
        XCTAssertEqual(gauge.value(forKey: "name") as? String, "boiler", file: file, line: line)
        XCTAssertEqual(gauge.value(forKeyPath: "level") as? Int, 7, file: file, line: line)
        XCTAssertEqual((gauge as? Gauge)?.level, 7, "a custom accessor over primitiveValue(forKey:)", file: file, line: line)
        XCTAssertEqual(gauge.primitiveValue(forKey: "total") as? Int, 5_000_000_000, file: file, line: line)
    }

    func testValueForKeyCastsAsOnAppleBeforeAndAfterSaveAndAfterReopening() throws {
        let model = makeModel()
        for (type, url) in storeTypes() {
            let context = try makeContext(model, type: type, url: url)
            let gauge = insertGauge(into: context)
            assertBridged(gauge)
            try context.save()
            assertBridged(gauge)
            context.refresh(gauge, mergeChanges: false)
            assertBridged(gauge)
            guard let url else { continue }
            let reopened = try makeContext(model, type: type, url: url)
            let fetched = try reopened.fetch(NSFetchRequest<NSManagedObject>(entityName: "Gauge"))
            XCTAssertEqual(fetched.count, 1, type)
            if let first = fetched.first { assertBridged(first) }
        }
    }

    func testValuesCopiedThroughKeyValueCodingSaveUnchanged() throws {
        let model = makeModel()
        for (type, url) in storeTypes() {
            let context = try makeContext(model, type: type, url: url)
            let original = insertGauge(into: context)
            let copy = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: context)
            for key in ["name", "level", "count", "total", "ratio", "weight", "enabled", "price"] {
                copy.setValue(original.value(forKey: key), forKey: key)
            }
            try context.save()
            context.refresh(copy, mergeChanges: false)
            assertBridged(copy)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Gauge")
            guard let level = original.value(forKey: "level") as? NSNumber else { return XCTFail("level is not an NSNumber (\(type))") }
            request.predicate = NSPredicate(format: "level == %@ AND enabled == YES AND total > %d", level, 4_000_000_000)
            XCTAssertEqual(try context.count(for: request), 2, type)
        }
    }

    func testDictionaryResultsCastToAnyNumberType() throws {
        let model = makeModel()
        for (type, url) in storeTypes() {
            let context = try makeContext(model, type: type, url: url)
            _ = insertGauge(into: context)
            let off = insertGauge(into: context)
            off.setValue(false, forKey: "enabled")
            off.setValue(3, forKey: "level")
            try context.save()

            let request = NSFetchRequest<NSDictionary>(entityName: "Gauge")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["level", "enabled", "price"]
            request.sortDescriptors = [NSSortDescriptor(key: "level", ascending: true)]
            let rows = try context.fetch(request)
            XCTAssertEqual(rows.count, 2, type)
            XCTAssertEqual(rows.first?["level"] as? Int, 3, type)
            XCTAssertEqual(rows.first?["enabled"] as? Bool, false, type)
            XCTAssertEqual(rows.first?["enabled"] as? Int, 0, type)
            XCTAssertEqual(rows.last?["enabled"] as? Bool, true, type)
            XCTAssertEqual(rows.last?["enabled"] as? Int, 1, type)
            XCTAssertEqual((rows.last?["enabled"] as? NSNumber)?.boolValue, true, type)
            XCTAssertEqual(rows.last?["price"] as? Decimal, Decimal(string: "19.99"), type)
        }
    }
}

import CoreData
import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import CoreDataXMLFormat
import CoreDataXMLStore
import Foundation
import XCTest

/// `migratePersistentStore(_:to:options:type:)` between binary, XML and in-memory stores: every
/// object, relationship and metadata entry arrives, and binary → XML → binary gives back the same
/// store object for object.
final class StoreMigrationTests: XCTestCase {
    typealias M = BinaryTestModel

    /// Every attribute type (items), to-one (item.owner), ordered to-many (owner.items) and
    /// many-to-many (item.tags ↔ tag.items), with consistent inverses; item 4 has no owner.
    static let rows: [StoreRow] = [
        M.owner(1, "Ann", items: [3, 1, 2]), M.owner(2, "Bob", items: [5]),
        M.item(1, owner: 1, tags: [1, 2]), M.item(2, owner: 1, tags: [2]), M.item(3, owner: 1),
        M.item(4, owner: nil, tags: [3]), M.item(5, owner: 2, tags: [1, 2, 3]),
        M.tag(1, "red", items: [1, 5]), M.tag(2, "green", items: [1, 2, 5]), M.tag(3, "blue", items: [4, 5]),
    ]

    /// Rows with keys replaced by their rank within the entity (migration renumbers objects in
    /// key order), unordered relationships sorted, nil and empty values dropped, versions zeroed.
    static func canonical(_ rows: [StoreRow]) -> [StoreObjectID: StoreRow] {
        var rank: [StoreObjectID: StoreObjectID] = [:]
        for (entity, group) in Dictionary(grouping: rows, by: \.objectID.entityName) {
            for (index, row) in group.sorted(by: { $0.objectID.primaryKey < $1.objectID.primaryKey }).enumerated() {
                rank[row.objectID] = StoreObjectID(entityName: entity, primaryKey: Int64(index + 1))
            }
        }
        func renamed(_ id: StoreObjectID) -> StoreObjectID { rank[id] ?? StoreObjectID(entityName: "dangling", primaryKey: id.primaryKey) }
        var result: [StoreObjectID: StoreRow] = [:]
        for row in rows {
            let entity = M.model.entitiesByName[row.objectID.entityName]
            var values: [String: StoreValue] = [:]
            for (key, value) in row.values {
                switch value {
                case .null: continue
                case .reference(let id): values[key] = .reference(renamed(id))
                case .references(let ids):
                    guard !ids.isEmpty else { continue }
                    let ordered = entity?.relationshipsByName[key]?.isOrdered ?? false
                    values[key] = .references(ordered ? ids.map(renamed) : ids.map(renamed).sorted())
                default: values[key] = value
                }
            }
            result[renamed(row.objectID)] = StoreRow(objectID: renamed(row.objectID), version: 0, values: values)
        }
        return result
    }

    static func allRows(_ store: any PersistentStoreEngine) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        for entity in M.model.entities {
            guard case .rows(let found) = try store.execute(StoreFetchRequest(entity: entity, includesSubentities: false)) else { continue }
            rows += found
        }
        return rows
    }

    func testBinaryToXMLToBinaryIsIdenticalObjectForObject() throws {
        let folder = URL(fileURLWithPath: M.temporaryPath("x")).deletingLastPathComponent()
        let first = folder.appendingPathComponent("first.store")
        let xml = folder.appendingPathComponent("middle.xml")
        let last = folder.appendingPathComponent("last.store")
        let source = try BinaryStore(path: first.path, model: M.model, metadata: StoreMetadata([
            "NSStoreUUID": "5B0E7C1A-9D2F-4E3B-8A6C-1F0D2E3C4B5A", "App": "kept", "Numbers": [1, 2, 3],
        ]))
        _ = try source.save(StoreChangeSet(inserted: Self.rows))
        try source.close()

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: M.model)
        let binary = try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: first)
        let middle = try coordinator.migratePersistentStore(binary, to: xml, options: nil, type: .xml)
        XCTAssertEqual(coordinator.persistentStores.map(\.type), [NSXMLStoreType], "the copy replaces the source")
        XCTAssertEqual(middle.url, xml)

        // The XML file holds every object, with store-wide ids 1…10.
        let document = try XMLStoreReader.decode(Array(try Data(contentsOf: xml)))
        XCTAssertEqual(document.objects.map(\.id).sorted(), Array(1...10))
        XCTAssertEqual(Dictionary(grouping: document.objects, by: \.type).mapValues(\.count), ["ITEM": 5, "OWNER": 2, "TAG": 3])

        // The object graph sees the migrated store.
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let owners = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
            let ann = try XCTUnwrap(owners.first { $0.value(forKey: "name") as? String == "Ann" })
            let items = try XCTUnwrap(ann.value(forKey: "items") as? NSOrderedSet)
            XCTAssertEqual(items.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "i64") as? Int64 }, [Int64.min + 3, Int64.min + 1, Int64.min + 2])
        }

        let final = try coordinator.migratePersistentStore(middle, to: last, options: nil, withType: NSBinaryStoreType)
        XCTAssertEqual(coordinator.persistentStores.map(\.type), [NSBinaryStoreType])
        let metadata = coordinator.metadata(for: final)
        XCTAssertEqual(metadata["App"] as? String, "kept")
        XCTAssertEqual(metadata["Numbers"] as? [Int], [1, 2, 3])
        XCTAssertEqual((metadata[NSStoreModelVersionHashesKey] as? [String: Any])?.count, 3)
        XCTAssertNotEqual(metadata[NSStoreUUIDKey] as? String, "5B0E7C1A-9D2F-4E3B-8A6C-1F0D2E3C4B5A", "a copy is a new store")
        XCTAssertEqual(metadata[NSStoreTypeKey] as? String, NSBinaryStoreType)
        try coordinator.remove(final)

        let reopened = try BinaryStore(path: last.path, model: M.model, metadata: StoreMetadata())
        let result = try Self.allRows(reopened)
        try reopened.close()
        XCTAssertEqual(result.count, Self.rows.count)
        let expected = Self.canonical(Self.rows)
        let found = Self.canonical(result)
        XCTAssertEqual(found.count, expected.count)
        for (id, row) in expected { XCTAssertEqual(found[id], row, "\(id)") }
    }

    func testXMLToInMemoryAndBackKeepsMetadataAndObjects() throws {
        let folder = URL(fileURLWithPath: M.temporaryPath("x")).deletingLastPathComponent()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: M.model)
        let xml = try coordinator.addPersistentStore(ofType: NSXMLStoreType, configurationName: nil, at: folder.appendingPathComponent("a.xml"))
        var metadata = coordinator.metadata(for: xml)
        metadata["App"] = ["nested": true]
        coordinator.setMetadata(metadata, for: xml)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            for label in ["a", "b", "c"] {
                let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
                tag.setValue(label, forKey: "label")
            }
            try context.save()
        }
        let memory = try coordinator.migratePersistentStore(xml, to: URL(fileURLWithPath: "/dev/null"), type: .inMemory)
        XCTAssertEqual((coordinator.metadata(for: memory)["App"] as? [String: Any])?["nested"] as? Bool, true)
        // A file in the way refuses the move and keeps the source.
        let taken = folder.appendingPathComponent("a.xml")
        XCTAssertThrowsError(try coordinator.migratePersistentStore(memory, to: taken, type: .xml))
        XCTAssertTrue(coordinator.persistentStores.first === memory)
        let back = try coordinator.migratePersistentStore(memory, to: folder.appendingPathComponent("b.xml"), type: .xml)
        XCTAssertEqual((coordinator.metadata(for: back)["App"] as? [String: Any])?["nested"] as? Bool, true)
        let labels = try Self.allRows(try XMLStore(path: folder.appendingPathComponent("b.xml").path, model: M.model, metadata: StoreMetadata(), options: {
            var options = XMLStoreOptions()
            options.readOnly = true
            return options
        }())).compactMap { row -> String? in if case .string(let label) = row["label"] { return label }; return nil }
        XCTAssertEqual(labels.sorted(), ["a", "b", "c"])
    }
}

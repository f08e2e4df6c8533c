import CoreData
import CoreDataPostgreSQLStore
import CoreDataSQLiteStore
import CoreDataStorage
import Foundation
import XCTest

/// Fetches on the PostgreSQL store (`Formats/postgresql-store.md` §7) against the in-memory
/// store: the CoreDataPlus sample Core Data wrote (125 cars, 20 people) is copied into both, and
/// every predicate of the SQLite translation table runs on each, plain and sorted and paged, for
/// object IDs and counts; the answers must be equal, object for object and in order.
final class PostgreSQLFetchTranslationTests: XCTestCase {
    private func openStores() throws -> (postgres: PostgreSQLStore, memory: InMemoryStore, model: NSManagedObjectModel) {
        guard let url = PostgreSQLTestStores.freshURL() else {
            throw ScenarioStopped(description: "no PostgreSQL server for the tests: \(PostgreSQLTestStores.unavailableReason)")
        }
        let model = try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage).loadModel(version: "SampleModel")
        _ = NSPersistentStoreCoordinator(managedObjectModel: model)
        var options = AppleSQLiteStoreOptions()
        options.readOnly = true
        let source = try AppleSQLiteStore(
            path: AppleSQLiteStoreTests.fixtures.appendingPathComponent("SampleModel_V1.sqlite").path, model: model,
            metadata: StoreMetadata(), options: options)
        defer { try? source.close() }
        var rows: [StoreRow] = []
        for entity in model.entities where entity.superentity == nil {
            guard case .rows(let found) = try source.execute(StoreFetchRequest(entity: entity, predicate: nil)) else { continue }
            rows += found
        }
        XCTAssertEqual(rows.count, 145, "the sample's cars and people")
        var changes = StoreChangeSet(inserted: rows)
        changes.checksReferences = true
        let postgres = try PostgreSQLStore(configuration: PostgreSQLStoreConfiguration(url: url), model: model, metadata: StoreMetadata())
        _ = try postgres.save(changes)
        let memory = InMemoryStore(model: model, metadata: StoreMetadata())
        _ = try memory.save(changes)
        return (postgres, memory, model)
    }

    func testEveryPredicateGivesTheInMemoryStoresAnswer() throws {
        let (postgres, memory, model) = try openStores()
        defer { try? postgres.close() }
        var compared = 0
        for (entityName, table) in AppleSQLiteFetchTranslationTests.tables {
            let entity = try XCTUnwrap(model.entitiesByName[entityName])
            for (format, _) in table {
                let predicate = NSPredicate(format: format, argumentArray: AppleSQLiteFetchTranslationTests.arguments(for: format))
                for sort in [nil, entityName == "Person" ? "lastName" : "numberPlate", entityName == "Person" ? "updatedAt" : "createdAt"] {
                    var request = StoreFetchRequest(entity: entity, predicate: predicate)
                    if let sort {
                        request.sortDescriptors = [NSSortDescriptor(key: sort, ascending: false)]
                        request.limit = 7
                        request.offset = 2
                    }
                    for type in [StoreFetchRequest.ResultType.objectIDs, .count, .rows] {
                        request.resultType = type
                        let server = try postgres.execute(request)
                        let reference = try memory.execute(request)
                        let label = "\(entityName): \(format) sorted by \(sort ?? "nothing")"
                        switch (server, reference) {
                        case (.objectIDs(let a), .objectIDs(let b)): XCTAssertEqual(a, b, label)
                        case (.count(let a), .count(let b)): XCTAssertEqual(a, b, label)
                        case (.rows(let a), .rows(let b)): XCTAssertEqual(a.map(\.objectID), b.map(\.objectID), label)
                        default: XCTFail("\(label): result kinds differ")
                        }
                        compared += 1
                    }
                }
            }
        }
        print("postgresql differential: \(compared) fetches equal to the in-memory store's")
    }

    func testRowsReadBackEqualToTheInMemoryStores() throws {
        let (postgres, memory, model) = try openStores()
        defer { try? postgres.close() }
        for entity in model.entities where entity.superentity == nil {
            guard case .rows(let server) = try postgres.execute(StoreFetchRequest(entity: entity, predicate: nil)),
                  case .rows(let reference) = try memory.execute(StoreFetchRequest(entity: entity, predicate: nil)) else {
                return XCTFail("\(entity.name ?? "?"): no rows")
            }
            XCTAssertEqual(server.count, reference.count)
            for (a, b) in zip(server, reference) {
                XCTAssertEqual(a.objectID, b.objectID)
                for name in b.layout.names where b.contains(name) {
                    // timestamptz keeps microseconds (§4).
                    if case .date(let x) = a[name], case .date(let y) = b[name] {
                        XCTAssertEqual(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate, accuracy: 1e-6, "\(a.objectID).\(name)")
                    } else if case .references(let x) = a[name], case .references(let y) = b[name] {
                        XCTAssertEqual(Set(x), Set(y), "\(a.objectID).\(name)")
                    } else {
                        XCTAssertEqual(a[name], b[name], "\(a.objectID).\(name)")
                    }
                }
            }
        }
    }
}

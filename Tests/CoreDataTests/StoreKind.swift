import CoreData
import CoreDataTestSupport
import Foundation
import XCTest

/// Every store the object-graph conformance scenarios run against. A new store joins the suite
/// by adding a case here; no scenario changes.
///
/// `incremental` and `atomic` are stores a user writes (``DictionaryIncrementalStore``,
/// ``JSONAtomicStore``), reached through Apple's `NSIncrementalStore`/`NSAtomicStore` API.
enum StoreKind: CaseIterable, CustomStringConvertible {
    case inMemory
    case binary
    case xml
    case incremental
    case atomic
    case appleSQLite
    case postgreSQL

    var type: String {
        switch self {
        case .inMemory: return NSInMemoryStoreType
        case .binary: return NSBinaryStoreType
        case .xml: return NSXMLStoreType
        case .incremental: return DictionaryIncrementalStore.storeType
        case .atomic: return JSONAtomicStore.storeType
        case .appleSQLite: return NSAppleSQLiteStoreType
        case .postgreSQL: return NSPostgreSQLStoreType
        }
    }

    /// Scenarios a kind sits out, by test name, and why; only where Apple's own behaviour for
    /// that kind of store differs.
    ///
    /// - Uniqueness constraints are a user incremental store's own business (Apple enforces them
    ///   only in SQLite stores), and the dictionary store does not implement them.
    /// - Apple's `NSIncrementalStore` documentation lets a store ignore `includesPropertyValues`:
    ///   its fetch returns faults whose values are read through `newValuesForObject(with:with:)`
    ///   when each fires (``CustomStoreTests`` checks that laziness), so a fetched fault has no
    ///   values of the fetch's time to keep. (`returnsObjectsAsFaults = false` is honoured by
    ///   the context, which reads the values right after such a fetch.)
    static let notApplicable: [StoreKind: [String: String]] = [
        .incremental: [
            "testUniquenessConstraintConflict()": "uniqueness constraints are the incremental store's to enforce",
            "testUniquenessConflictsResolvedByMergePolicies()": "uniqueness constraints are the incremental store's to enforce",
            "testFetchedFaultsKeepTheValuesTheFetchRead()": "an incremental store reads an object's values when its fault fires, not with the fetch",
            "testStalenessIntervalDecidesWhetherAFetchedFaultReadsTheStoreAgain()": "an incremental store reads an object's values when its fault fires, not with the fetch",
        ],
    ]

    /// The kinds that run the scenario named `function`.
    static func kinds(running function: String) -> [StoreKind] {
        allCases.filter { notApplicable[$0]?[function] == nil }
    }

    var description: String { type }

    /// A container with the test model and one freshly loaded store of this kind.
    func makeContainer(
        model: NSManagedObjectModel = sharedModel, options: [String: NSObject] = [:], file: StaticString = #filePath, line: UInt = #line
    ) throws -> NSPersistentContainer {
        let container = NSPersistentContainer(name: "Conformance", managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = type
        for (key, value) in options { description.setOption(value, forKey: key) }
        if self == .postgreSQL {
            // A schema of its own per container, in the test server's database.
            guard let url = PostgreSQLTestStores.freshURL() else {
                throw ScenarioStopped(description: "no PostgreSQL server for the tests: \(PostgreSQLTestStores.unavailableReason)")
            }
            description.url = url
        } else {
            description.url = FileManager.default.temporaryDirectory.appendingPathComponent("conformance-\(UUID().uuidString).store")
        }
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        XCTAssertEqual(container.persistentStoreCoordinator.persistentStores.count, 1, file: file, line: line)
        return container
    }

    /// One model for all tests: a model is frozen by its first coordinator and can serve many.
    static let sharedModel: NSManagedObjectModel = {
        NSManagedObject.registerSubclasses(AuthorObject.self, BookObject.self, NovelObject.self)
        NSPersistentStoreCoordinator.registerStoreClass(DictionaryIncrementalStore.self, type: DictionaryIncrementalStore.storeType)
        NSPersistentStoreCoordinator.registerStoreClass(JSONAtomicStore.self, type: JSONAtomicStore.storeType)
        return TestModel.make()
    }()
}

/// Runs `body` once per store kind, naming the kind in failures.
func forEachStore(file: StaticString = #filePath, line: UInt = #line, function: String = #function, _ body: (StoreKind, NSPersistentContainer) throws -> Void) {
    for kind in StoreKind.kinds(running: function) {
        do {
            let container = try kind.makeContainer(file: file, line: line)
            try body(kind, container)
        } catch {
            XCTFail("[\(kind)] \(error)", file: file, line: line)
        }
    }
}

/// A scenario that cannot go on: ``forEachStore`` reports it, naming the store kind.
struct ScenarioStopped: Error, CustomStringConvertible {
    var description: String
}

/// Stops the scenario unless `results` has exactly `count` elements, so that the assertions
/// after it may index into `results` without trapping (a trap would end the whole test process
/// and hide every later test's outcome).
func require<C: Collection>(_ results: C, count: Int, _ what: String) throws {
    guard results.count == count else {
        throw ScenarioStopped(description: "\(what): expected \(count) results, got \(results.count)")
    }
}

extension NSManagedObjectContext {
    /// Inserts an object of `entity` with `values`.
    @discardableResult
    func make(_ entity: String, _ values: [String: Any?] = [:]) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: self)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    func all(_ entity: String, where format: String? = nil, _ args: Any?..., sortedBy key: String? = nil) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        if let format { request.predicate = NSPredicate(format: format, argumentArray: args.map { $0 ?? NSNull() }) }
        if let key { request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)] }
        return try fetch(request)
    }
}

func names(_ objects: [NSManagedObject], _ key: String = "name") -> [String] {
    objects.map { ($0.value(forKey: key) as? String) ?? "nil" }
}

/// Schemas on the test server (``PostgreSQLTestServer``: `COREDATA_POSTGRES_URL`, or a server this
/// test process starts and stops itself).
enum PostgreSQLTestStores {
    static var unavailableReason: String { PostgreSQLTestServer.unavailableReason ?? "unknown" }

    /// The server's URL with a new schema, nil when there is no server.
    static func freshURL() -> URL? { PostgreSQLTestServer.freshSchemaURL() }
}

// The Swift snippets of ../shared/seeds/, run as tests. Changes from the blog posts are marked
// `// Linux:` and are only those Linux forces: `@Managed` for `@NSManaged`, a model folder named
// `Example.momd` in a bundle folder instead of Xcode's compiled model. NSSQLiteStoreType and the
// container's default store open the binary store; each test starts from an empty store, as a
// first launch of the app in the posts would.
import CoreData
import Foundation
import XCTest

final class User: NSManagedObject {
    @Managed var name: String?  // Linux: @NSManaged needs the Objective-C runtime
}

/// seed 003: the CoreDataManager wrapper.
final class CoreDataManager {
    let model = "Example"
    let bundle: Bundle

    init(bundle: Bundle) { self.bundle = bundle }

    public lazy var persistentContainer: NSPersistentContainer = {
        /// 1. Create `NSPersistentContainer`
        let dataKitBundle = bundle  // Linux: Bundle.main of the test runner holds no model
        let modelUrl = dataKitBundle.url(forResource: self.model, withExtension: "momd")!
        let managedObjectModel = NSManagedObjectModel(contentsOf: modelUrl)!
        let container = NSPersistentContainer(name: self.model, managedObjectModel: managedObjectModel)

        /// 2. Load configuration
        container.loadPersistentStores(completionHandler: { (storeDescription, error) in
            if error != nil {
                fatalError("Cannot load core data store.")
            }
        })
        container.viewContext.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        return container
    }()

    public lazy var managedContext: NSManagedObjectContext = {
        self.persistentContainer.viewContext
    }()

    public func saveContext() {
        guard managedContext.hasChanges else { return }
        do {
            try managedContext.save()
        } catch let error as NSError {
            fatalError("Cannot save core data. Error: \(error), \(error.userInfo)")
        }
    }

    public func clearStorage(entityName: String) {
        let fetchRequest = NSFetchRequest<NSFetchRequestResult>(entityName: entityName)
        let batchDeleteRequest = NSBatchDeleteRequest(fetchRequest: fetchRequest)
        do {
            try managedContext.execute(batchDeleteRequest)
        } catch let error as NSError {
            print("Cannot delete local storage for: \(entityName).\nReason: \(error.localizedDescription)")
        }
    }
}

final class SeedSnippetTests: XCTestCase {
    /// The container's default store persists between runs, like an app's; tests start empty.
    override func setUp() {
        super.setUp()
        let store = NSPersistentContainer.defaultDirectoryURL().appendingPathComponent("Example.store")
        for path in [store.path, store.path + "-wal"] { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A bundle folder holding the Example model as `Example.momd`, as Apple code looks for it.
    private func exampleBundle() throws -> Bundle {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("seed-\(UUID().uuidString)")
        let version = folder.appendingPathComponent("Example.momd/Example.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="User" representedClassName="User" syncable="YES">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints>
                </entity>
            </model>
            """.write(to: version.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        NSManagedObject.registerSubclasses(User.self)
        return try XCTUnwrap(Bundle(url: folder))
    }

    func testCoreDataManagerSavesAndClearsStorage() throws {
        let manager = CoreDataManager(bundle: try exampleBundle())
        let user = NSEntityDescription.insertNewObject(forEntityName: "User", into: manager.managedContext) as! User
        user.name = "Ada"
        manager.saveContext()
        let request = NSFetchRequest<User>(entityName: "User")
        XCTAssertEqual(try manager.managedContext.fetch(request).map(\.name), ["Ada"])
        manager.clearStorage(entityName: "User")
        manager.managedContext.reset()
        XCTAssertEqual(try manager.managedContext.count(for: request), 0)
    }

    /// seed 000: a thousand inserts on a private-queue context, saving after each.
    func testThousandInsertsOnABackgroundContext() throws {
        let manager = CoreDataManager(bundle: try exampleBundle())
        let coordinator = manager.persistentContainer.persistentStoreCoordinator
        let done = expectation(description: "inserted")
        let queue = DispatchQueue(label: "core_data")
        queue.async {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            context.perform {
                for i in 0..<1000 {
                    let user = NSEntityDescription.insertNewObject(forEntityName: "User", into: context) as! User
                    user.name = "user \(i)"
                    if context.hasChanges {
                        do {
                            try context.save()
                        } catch {
                            context.delete(user)
                        }
                    }
                }
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 60)
        XCTAssertEqual(try manager.managedContext.count(for: NSFetchRequest<User>(entityName: "User")), 1000)
    }

    /// seeds 001/002: the hand-built stack.
    func testHandBuiltStack() throws {
        let bundle = try exampleBundle()
        guard let URL = bundle.url(forResource: "Example", withExtension: "momd"),
              let model = NSManagedObjectModel(contentsOf: URL) else {
            return XCTFail("Can't find momd file!")
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        // Linux: a fresh folder per run; NSSQLiteStoreType opens the binary store.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("seed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let storeURL = folder.appendingPathComponent("Example.sqlite")
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        _ = NSEntityDescription.insertNewObject(forEntityName: "User", into: context) as! User
        if context.hasChanges {
            try context.save()
        }
        XCTAssertEqual(try context.fetch(NSFetchRequest<User>(entityName: "User")).count, 1)
    }

    /// seed 003: NSMergeByPropertyObjectTrumpMergePolicy resolves a uniqueness conflict only with
    /// the error policy today; the other policies' constraint resolution is still missing.
    func testMergePolicyGlobalIsAssignable() throws {
        let manager = CoreDataManager(bundle: try exampleBundle())
        XCTAssertEqual((manager.managedContext.mergePolicy as? NSMergePolicy)?.mergeType, .mergeByPropertyObjectTrumpMergePolicyType)
    }
}

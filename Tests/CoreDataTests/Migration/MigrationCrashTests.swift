import CoreData
import CoreDataFileSystem
import CoreDataTestSupport
import Foundation
import XCTest

/// The crash and fault suites over a migration: the sample store (v1) is opened with v2 (an
/// inferred migration, by rows) or with v3 (v1 → v2 inferred, then v2 → v3 through the shipped
/// `V2toV3.xcmappingmodel` and its entity migration policy, by managed objects) and migrates in
/// place; the process crashes at every file operation of that (each power-loss policy applied to
/// the disk), or the operation fails with EIO or ENOSPC. Afterwards the store is always whole:
/// either still v1 with every object, or at the target version with every object migrated, never
/// neither and never a mix; and opening it with the target then migrates (or just opens) it.
final class MigrationCrashTests: XCTestCase {
    private let path = "/stores/Sample.store"
    private var url: URL { URL(fileURLWithPath: path) }

    private static let package = try? XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage)
    private static let v1 = try? package?.loadModel(version: "SampleModel")
    /// v2 as the app loads it: from a package whose current version it is, so v1 is found there.
    private static let v2: NSManagedObjectModel? = {
        guard let copy = try? MigrationFixtures.samplePackage(current: "SampleModel2") else { return nil }
        return NSManagedObjectModel(contentsOf: copy)
    }()
    /// v3 from a package with the shipped mapping model beside it.
    private static let v3: NSManagedObjectModel? = {
        guard let copy = try? MigrationFixtures.samplePackage(current: "SampleModel3") else { return nil }
        let mapping = MigrationFixtures.samplePackage.deletingLastPathComponent().appendingPathComponent("V2toV3.xcmappingmodel")
        guard (try? FileManager.default.copyItem(at: mapping, to: copy.deletingLastPathComponent().appendingPathComponent("V2toV3.xcmappingmodel"))) != nil else { return nil }
        return NSManagedObjectModel(contentsOf: copy)
    }()

    /// The version a workload migrates to.
    private enum Target: String, CaseIterable { case v2, v3 }
    private static func model(_ target: Target) -> NSManagedObjectModel? { target == .v2 ? v2 : v3 }

    override class func setUp() {
        super.setUp()
        NSEntityMigrationPolicy.registerSubclasses(V2to3MakerPolicy.self)
    }

    private func options(_ fileSystem: any StoreFileSystem, migrate: Bool) -> [AnyHashable: Any] {
        [PrivateStoreOption.fileSystem: fileSystem, NSMigratePersistentStoresAutomaticallyOption: migrate, NSInferMappingModelAutomaticallyOption: migrate]
    }

    /// A disk holding the v1 sample store, closed cleanly.
    private func v1Image(_ type: String) throws -> DiskImage {
        let fileSystem = FaultInjectingFileSystem()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try XCTUnwrap(Self.v1))
        let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options(fileSystem, migrate: false))
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var failure: Error?
        context.performAndWait {
            func insert(_ entity: String, _ values: [String: Any]) -> NSManagedObject {
                let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
                for (key, value) in values { object.setValue(value, forKey: key) }
                return object
            }
            let ada = insert("Person", ["firstName": "Ada", "lastName": "Lovelace", "id": UUID(), "updatedAt": Date(timeIntervalSince1970: 1)])
            let grace = insert("Person", ["firstName": "Grace", "lastName": "Hopper", "id": UUID(), "updatedAt": Date(timeIntervalSince1970: 2)])
            _ = insert("Car", ["numberPlate": "A-1", "maker": "Fiat", "owner": ada])
            _ = insert("SportCar", ["numberPlate": "S-1", "maker": "Ferrari", "owner": ada])
            _ = insert("ExpensiveSportCar", ["numberPlate": "E-1", "isLimitedEdition": true, "owner": grace])
            do { try context.save() } catch { failure = error }
        }
        if let failure { throw failure }
        try coordinator.remove(store)
        return fileSystem.currentImage
    }

    /// Opens with the target version and migration on, then closes.
    private func migrate(_ type: String, to target: Target, on fileSystem: any StoreFileSystem) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try XCTUnwrap(Self.model(target)))
        let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options(fileSystem, migrate: true))
        try coordinator.remove(store)
    }

    /// What a recovered disk holds: nil when it is whole (v1 or the target, every object), else the problem.
    private func check(_ type: String, to target: Target, _ fileSystem: any StoreFileSystem) -> String? {
        guard let v1 = Self.v1, let v2 = Self.model(target) else { return "models missing" }
        let metadata: [String: Any]
        do {
            metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: type, at: url, options: options(fileSystem, migrate: false))
        } catch {
            return "the store's metadata cannot be read: \(error)"
        }
        let isV2 = v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        guard isV2 || v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) else { return "the store is neither v1 nor v2" }
        if let problem = contents(type, fileSystem, model: isV2 ? v2 : v1, expensive: isV2 ? "LuxuryCar" : "ExpensiveSportCar", makers: isV2 && target == .v3) {
            return "\(isV2 ? target.rawValue : "v1"): \(problem)"
        }
        guard !isV2 else { return nil }
        do {
            try migrate(type, to: target, on: fileSystem)
        } catch {
            return "the recovered v1 store does not migrate: \(error)"
        }
        return contents(type, fileSystem, model: v2, expensive: "LuxuryCar", makers: target == .v3).map { "after migrating the recovered store: \($0)" }
    }

    /// nil when the store holds the sample's objects (and, at v3, the Makers the policy made).
    private func contents(_ type: String, _ fileSystem: any StoreFileSystem, model: NSManagedObjectModel, expensive: String, makers: Bool) -> String? {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        do {
            let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options(fileSystem, migrate: false))
            defer { try? coordinator.remove(store) }
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            var problem: String?
            context.performAndWait {
                do {
                    let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
                    let names = people.compactMap { $0.value(forKey: "firstName") as? String }.sorted()
                    let plates = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).compactMap { $0.value(forKey: "numberPlate") as? String }.sorted()
                    let special = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: expensive))
                    let owner = (special.first?.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "firstName") as? String
                    if names != ["Ada", "Grace"] || plates != ["A-1", "E-1", "S-1"] || special.count != 1 || owner != "Grace" {
                        problem = "objects differ: people \(names), cars \(plates), \(expensive) \(special.count) owned by \(owner ?? "nobody")"
                    }
                    if makers {
                        let made = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Maker")).compactMap { $0.value(forKey: "name") as? String }.sorted()
                        if made != ["Ferrari", "Fiat"] { problem = "the policy's Makers differ: \(made)" }
                    }
                } catch {
                    problem = "fetch failed: \(error)"
                }
            }
            return problem
        } catch {
            return "cannot open: \(error)"
        }
    }

    /// The v1 disk, a file system over it where the migration ran without a fault (its trace
    /// names each operation), and the migration's operation count, which bounds the fault
    /// points (the check after it writes too: its writable opens mark `NAME-shm`).
    private func baseline(_ type: String, to target: Target) throws -> (DiskImage, FaultInjectingFileSystem, operations: Int) {
        let image = try v1Image(type)
        let clean = FaultInjectingFileSystem(image: image)
        try migrate(type, to: target, on: clean)
        let operations = clean.operationCount
        XCTAssertNil(check(type, to: target, clean), "\(type) to \(target)")
        return (image, clean, operations)
    }

    func testCrashAtEveryOperationOfAMigration() throws {
        var report: [String] = []
        var total = 0
        for type in [NSBinaryStoreType, NSXMLStoreType] { for target in Target.allCases {
            let (image, clean, operations) = try baseline(type, to: target)
            var failures: [String] = []
            var scenarios = 0
            for crash in 1...operations {
                let fileSystem = FaultInjectingFileSystem(image: image, plan: .crash(at: crash))
                XCTAssertThrowsError(try migrate(type, to: target, on: fileSystem), "\(type) to \(target): crash at op \(crash) (\(clean.operations[crash - 1])) did not stop the migration")
                let seeds = CrashSeeds.seeds(for: crash, count: 4)
                let policies: [PowerLossPolicy] = [.processCrash, .dropUnsynced, .zeroFillExtensions, .tearLastWrite(seed: UInt64(crash))]
                    + seeds.map { .randomSubset(seed: $0) } + seeds.map { .garbageSectors(seed: $0) }
                for policy in policies {
                    scenarios += 1
                    if let problem = check(type, to: target, FaultInjectingFileSystem(image: fileSystem.powerLoss(policy))) {
                        failures.append("\(type) to \(target) crash at op \(crash) (\(clean.operations[crash - 1])), \(policy): \(problem)")
                    }
                }
            }
            report.append("\(type) to \(target): \(scenarios) scenarios (\(operations) operations × 12 power-loss policies)")
            total += scenarios
            XCTAssertTrue(failures.isEmpty, failures.prefix(10).joined(separator: "\n") + (failures.count > 10 ? "\n… \(failures.count) in all" : ""))
        } }
        print("migration crash suite: " + report.joined(separator: "; "))
        ScenarioTally.report("migration crash", total)
        XCTAssertGreaterThanOrEqual(total, 1_290, "the suite shrank")
    }

    func testIOErrorAtEveryOperationOfAMigration() throws {
        var report: [String] = []
        var total = 0
        for type in [NSBinaryStoreType, NSXMLStoreType] { for target in Target.allCases {
            let (image, clean, operations) = try baseline(type, to: target)
            var failures: [String] = []
            var scenarios = 0
            for failing in 1...operations {
                for code in [EIO, ENOSPC] {
                    scenarios += 1
                    let fileSystem = FaultInjectingFileSystem(image: image, plan: .fail(code: code, at: failing, persistent: false))
                    do {
                        try migrate(type, to: target, on: fileSystem)
                    } catch let error as NSError {
                        if error.localizedDescription.isEmpty { failures.append("\(type) to \(target) \(FaultPlan.name(of: code)) at op \(failing): an error without a message") }
                    }
                    // The same process goes on: the store is whole, and migrates (again) if it is still v1.
                    fileSystem.setPlan(.none)
                    if let problem = check(type, to: target, fileSystem) {
                        failures.append("\(type) to \(target) \(FaultPlan.name(of: code)) at op \(failing) (\(clean.operations[failing - 1])): \(problem)")
                    }
                }
            }
            report.append("\(type) to \(target): \(scenarios) scenarios (\(operations) operations × EIO, ENOSPC)")
            total += scenarios
            XCTAssertTrue(failures.isEmpty, failures.prefix(10).joined(separator: "\n") + (failures.count > 10 ? "\n… \(failures.count) in all" : ""))
        } }
        print("migration fault suite: " + report.joined(separator: "; "))
        ScenarioTally.report("migration fault", total)
        XCTAssertGreaterThanOrEqual(total, 210, "the suite shrank")
    }
}

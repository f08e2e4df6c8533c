import CoreData
import Foundation
import XCTest

/// Models and stores for the migration tests.
enum MigrationFixtures {
    /// The CoreDataPlus sample package as Xcode wrote it (three versions; v1 current).
    static let samplePackage = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CoreDataModelTests/Fixtures/models/CoreDataPlus/SampleModel.xcdatamodeld")
    /// The same package as Xcode's model compiler wrote it (`.mom` versions, `VersionInfo.plist`).
    static let compiledSamplePackage = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("CoreDataModelTests/Fixtures/apple-compiled/SampleModel.momd")

    /// A model version from the entities' Xcode XML (the `<entity>` elements).
    static func model(_ entities: String) throws -> NSManagedObjectModel {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            \(entities)
            </model>
            """
        return try NSManagedObjectModel(xcodeModelContents: Data(xml.utf8))
    }

    /// A fresh temporary folder.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A copy of the sample package whose current version is `version`.
    static func samplePackage(current version: String) throws -> URL {
        let copy = try folder().appendingPathComponent("SampleModel.xcdatamodeld")
        try FileManager.default.copyItem(at: samplePackage, to: copy)
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(version).xcdatamodel</string></dict></plist>
            """
        try plist.write(to: copy.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        return copy
    }

    /// A package of the given versions (name → entities XML), the last one current.
    static func package(_ versions: [(String, String)]) throws -> URL {
        let url = try folder().appendingPathComponent("Model.xcdatamodeld")
        for (name, entities) in versions {
            let version = url.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            let xml = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
                \(entities)
                </model>
                """
            try xml.write(to: version.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(versions.last?.0 ?? "").xcdatamodel</string></dict></plist>
            """
        try plist.write(to: url.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        return url
    }

    /// Adds the store with `model` (no migration), runs `body` in a context, saves, removes the store.
    static func fill(_ url: URL, type: String, model: NSManagedObjectModel, _ body: (NSManagedObjectContext) throws -> Void) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var failure: Error?
        context.performAndWait {
            do {
                try body(context)
                try context.save()
            } catch {
                failure = error
            }
        }
        try coordinator.remove(store)
        if let failure { throw failure }
    }

    /// Adds the store with `model` through a container description (Apple's defaults: migrate,
    /// infer) and returns a context on it.
    static func open(_ url: URL, type: String, model: NSManagedObjectModel) throws -> (NSPersistentContainer, NSManagedObjectContext) {
        let container = NSPersistentContainer(name: "Migrated", managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: url)
        description.type = type
        container.persistentStoreDescriptions = [description]
        var failure: Error?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        return (container, container.newBackgroundContext())
    }

    /// Every object of `entity`, sorted by `key`, as dictionaries of their stored values.
    static func objects(_ entity: String, sortedBy key: String, in context: NSManagedObjectContext) throws -> [NSManagedObject] {
        var result: [NSManagedObject] = []
        var failure: Error?
        context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
            request.includesSubentities = false
            do { result = try context.fetch(request) } catch { failure = error }
        }
        if let failure { throw failure }
        return result
    }

    /// The bytes of a store's files, to check a failed migration left them as they were.
    static func snapshot(_ url: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-wal"] {
            if let data = FileManager.default.contents(atPath: url.path + suffix) { files[suffix] = data }
        }
        return files
    }

    /// The files beside a store (staging files a migration must not leave behind).
    static func siblings(of url: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)) ?? []).sorted()
    }
}

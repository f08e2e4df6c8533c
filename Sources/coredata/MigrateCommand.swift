import ArgumentParser
import CoreData
import Foundation

/// `coredata migrate STORE --model M.xcdatamodeld [--mapping X.xcmappingmodel] [--to-version V] [--dry-run]`:
/// shows how a store saved with an older model version reaches the current one (versions, mapping
/// model or inferred mapping, entity by entity), then migrates it in place as an app's
/// `addPersistentStore` would.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to the current version of its model (mapping model or inferred, in place).",
        discussion: """
            Reads the model version hashes STORE records, finds the version of the package \
            --model names that the store was saved with, and plans the migration to the current \
            version (or --to-version): one step when the versions map directly, else one step per \
            version between them. A step uses a mapping model when one fits it: the --mapping file \
            (.xcmappingmodel or compiled .cdm), or one beside the model package; else its mapping \
            is inferred. Entity migration policies a mapping model names cannot run here (they \
            are the app's own code): such a mapping is refused. Prints each step and its mapping, entity by entity: copied, \
            changed (with each renamed, added or removed property), added, removed. Then migrates \
            the store in place, crash-safe (Formats/migration.md): the store is unchanged until the \
            migrated copy is complete, and a failure leaves it as it was. A progress bar \
            follows the migration on standard error when it is a terminal.

            --dry-run prints the plan and changes nothing. A change lightweight migration cannot \
            infer is listed with the entity and property (status 9).

            Example:
              coredata migrate Library.store --model Library.xcdatamodeld --dry-run
              coredata migrate Library.store --model Library.xcdatamodeld --to-version "Library 3"
              coredata migrate Library.store --model Library.xcdatamodeld --mapping V2toV3.xcmappingmodel
            """
    )

    @Argument(help: "The store to migrate (binary or XML).")
    var store: String

    @Option(help: "The app's versioned model package (.xcdatamodeld).")
    var model: String

    @Option(help: "A mapping model (.xcmappingmodel or .cdm) for a step of the migration.")
    var mapping: String?

    @Option(name: .customLong("to-version"), help: "The version to migrate to (default: the package's current one).")
    var toVersion: String?

    @Flag(name: .customLong("dry-run"), help: "Print the plan; change nothing.")
    var dryRun = false

    @Flag(help: "Print machine-readable JSON instead of text.")
    var json = false

    func run() throws {
        try reportingFailures {
            let kind = try StoreKind.detect(path: store)
            let type: String
            switch kind {
            case .xml: type = NSXMLStoreType
            // An Apple SQLite file migrates in place and stays one (Formats/apple-sqlite-store.md §7).
            case .sqlite: type = NSSQLiteStoreType
            case .binary: type = NSBinaryStoreType
            }
            let package: XcodeModelPackage
            do {
                package = try XcodeModelPackage(contentsOf: URL(fileURLWithPath: model))
            } catch {
                throw CLIError(.badModel, "\(model) is not a versioned model package (.xcdatamodeld): \(error)")
            }
            let destinationName = toVersion ?? package.currentVersionName
            var versions: [MigrationPlan.Version] = []
            for name in package.versionNames { versions.append((name, try ModelLoading.load(model, version: name))) }
            guard let destination = versions.first(where: { $0.name == destinationName })?.model else {
                throw CLIError(.badModel, "\(model) has no version \(destinationName) (it has \(package.versionNames.joined(separator: ", ")))")
            }
            // The coordinator finds the store's version in the package, as for a model loaded from it.
            destination.versionPackageURL = package.url

            let metadata: [String: Any]
            do {
                metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: type, at: URL(fileURLWithPath: store))
            } catch {
                throw CLIError(.damaged, "cannot read the metadata of \(store): \((error as NSError).localizedDescription)")
            }
            var mappingFile: NSMappingModel?
            if let mapping {
                do {
                    mappingFile = try NSMappingModel(validatingContentsOf: URL(fileURLWithPath: mapping))
                } catch {
                    throw CLIError(.badModel, (error as NSError).localizedDescription)
                }
            }
            let plan: MigrationPlan
            do {
                plan = try MigrationPlan(
                    store: store, metadata: metadata, versions: versions, destination: destination, configuration: nil,
                    mappingFolders: [package.url.deletingLastPathComponent()], mappingModels: mappingFile.map { [$0] } ?? [], infers: true)
            } catch {
                throw CLIError(.migrationFailed, (error as NSError).localizedDescription)
            }
            if let mappingFile, let mapping, !plan.steps.contains(where: { $0.mapping === mappingFile }) {
                throw CLIError(
                    .migrationFailed,
                    "the mapping model \(mapping) fits no step of the migration from '\(plan.source.name)' to '\(destinationName)' (its entities or properties are not those of the versions)")
            }
            report(plan, to: destinationName)
            guard !plan.steps.isEmpty, !dryRun else { return }
            let policies = plan.steps.flatMap { $0.mapping.entityMappings ?? [] }.compactMap(\.entityMigrationPolicyClassName).filter { !$0.isEmpty && $0 != "NSEntityMigrationPolicy" }
            guard policies.isEmpty else {
                throw CLIError(
                    .migrationFailed,
                    "the mapping names entity migration policies (\(Set(policies).sorted().joined(separator: ", "))), which are the app's own code: migrate this store from the app (NSEntityMigrationPolicy.registerSubclasses); nothing was changed")
            }

            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: destination)
            do {
                let options = [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true, NSBinaryStoreWaitForLockOption: false]
                // The migration reports into the Progress current on this thread; a bar on
                // standard error follows it when that is a terminal.
                let progress = Progress(totalUnitCount: 1)
                let watcher = ProgressWatcher(progress, label: "migrating")
                progress.becomeCurrent(withPendingUnitCount: 1)
                let added: NSPersistentStore
                do {
                    try coordinator.migrateStore(ofType: type, at: URL(fileURLWithPath: store), configuration: nil, options: options, plan: plan)
                    added = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: URL(fileURLWithPath: store), options: options)
                    progress.resignCurrent()
                    watcher.stop()
                } catch {
                    progress.resignCurrent()
                    watcher.stop()
                    throw error
                }
                let counts = try objectCounts(in: coordinator, model: destination)
                try coordinator.remove(added)
                if json {
                    Console.print(JSONValue.object([("migrated", .bool(true)), ("objects", .object(counts.map { ($0.0, .integer(Int64($0.1))) }))]).pretty)
                } else {
                    Console.print("migrated \(store) to version '\(destinationName)': " + counts.map { "\($0.1) \($0.0)" }.joined(separator: ", "))
                }
            } catch {
                let error = error as NSError
                if error.localizedDescription.contains("locked by another process") { throw CLIError.locked(store) }
                throw CLIError(.migrationFailed, "the migration of \(store) failed, and the store is unchanged: \(error.localizedDescription)")
            }
        }
    }

    /// Prints the versions and each step's mapping.
    private func report(_ plan: MigrationPlan, to destinationName: String) {
        if json {
            let steps: [JSONValue] = plan.steps.map { step in
                .object([
                    ("from", .string(step.source.name)), ("to", .string(step.destination.name)), ("inferred", .bool(step.inferred)),
                    ("entities", .array((step.mapping.entityMappings ?? []).map { mapping in
                        .object([("name", .string(mapping.name ?? "")), ("type", .string(MappingDescription.kind(mapping.mappingType))),
                                 ("source", mapping.sourceEntityName.map(JSONValue.string) ?? .null),
                                 ("destination", mapping.destinationEntityName.map(JSONValue.string) ?? .null),
                                 ("changes", .array(MappingDescription.changes(mapping, from: step.source.model).map(JSONValue.string)))])
                    })),
                ])
            }
            if dryRun || plan.steps.isEmpty {
                Console.print(JSONValue.object([("store", .string(store)), ("version", .string(plan.source.name)), ("target", .string(destinationName)), ("steps", .array(steps))]).pretty)
            }
            return
        }
        guard !plan.steps.isEmpty else {
            Console.print("\(store) is at version '\(plan.source.name)' already; nothing to migrate")
            return
        }
        Console.print("\(store): saved with version '\(plan.source.name)', migrating to '\(destinationName)' in \(plan.steps.count) step\(plan.steps.count == 1 ? "" : "s")")
        for step in plan.steps {
            Console.print("  \(step.source.name) → \(step.destination.name) (\(step.inferred ? "inferred" : "mapping model"))")
            MappingDescription.lines(step.mapping, from: step.source.model, indent: "    ").forEach(Console.print)
        }
        if dryRun { Console.print("dry run: nothing changed") }
    }

    /// Objects per entity in the migrated store, counted through a context.
    private func objectCounts(in coordinator: NSPersistentStoreCoordinator, model: NSManagedObjectModel) throws -> [(String, Int)] {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var counts: [(String, Int)] = []
        var failure: Error?
        context.performAndWait {
            do {
                for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) where !entity.isAbstract {
                    guard let name = entity.name else { continue }
                    let request = NSFetchRequest<NSManagedObject>(entityName: name)
                    request.includesSubentities = false
                    counts.append((name, try context.count(for: request)))
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return counts
    }
}

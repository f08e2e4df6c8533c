import CoreDataModel
import Foundation

/// The option (`NSPersistentStoreStagedMigrationManagerOptionKey`) that hands a store's add an
/// ``NSStagedMigrationManager``.
public let NSPersistentStoreStagedMigrationManagerOptionKey = "NSPersistentStoreStagedMigrationManagerOptionKey"

/// Migrates a store through a sequence of stages: lightweight stages and custom stages whose
/// handlers run the app's code between versions.
///
/// Matches Apple's `NSStagedMigrationManager`. Pass it as the value of
/// ``NSPersistentStoreStagedMigrationManagerOptionKey`` (with
/// `NSMigratePersistentStoresAutomaticallyOption`) when adding the store. The stages' versions,
/// in order, form the chain the store walks: it starts at the version the store was saved with
/// and ends at the coordinator's model. Each step is migrated and installed on its own
/// (`Formats/migration.md`), so a failure or a crash leaves the store at the last version it
/// completed, and the next add goes on from there.
///
/// Threading: one migration at a time; handlers run on the thread adding the store.
open class NSStagedMigrationManager: NSObject, @unchecked Sendable {
    /// The stages, in order.
    public let stages: [NSMigrationStage]
    /// The container holding the store while a custom stage's handler runs; `nil` otherwise.
    public internal(set) var container: NSPersistentContainer?

    public init(_ stages: [NSMigrationStage]) {
        self.stages = stages
        super.init()
    }
}

import CoreDataModel
import Foundation

/// One stage of a staged migration (Apple's `NSMigrationStage`): ``NSLightweightMigrationStage``
/// or ``NSCustomMigrationStage``.
open class NSMigrationStage: NSObject, @unchecked Sendable {
    /// A name for logs and errors.
    open var label: String?

    override init() { super.init() }
}

/// Model versions a store migrates through with lightweight (inferred) migrations, in order.
///
/// Matches Apple's `NSLightweightMigrationStage`. Each checksum names a version of the app's
/// model package (or a model a custom stage references).
open class NSLightweightMigrationStage: NSMigrationStage, @unchecked Sendable {
    /// The versions' `versionChecksum`s, oldest first.
    public let versionChecksums: [String]

    public init(_ versionChecksums: [String]) {
        self.versionChecksums = versionChecksums
        super.init()
    }
}

/// A migration from one model version to the next with the app's own code around it.
///
/// Matches Apple's `NSCustomMigrationStage`: ``willMigrateHandler`` runs with the manager's
/// ``NSStagedMigrationManager/container`` holding the store at ``currentModel``; then the store is
/// migrated to ``nextModel`` (inferred mapping); then ``didMigrateHandler`` runs with the container
/// holding the store at ``nextModel``. A handler that throws stops the migration: the store stays
/// at the version it had after the last completed stage.
open class NSCustomMigrationStage: NSMigrationStage, @unchecked Sendable {
    /// The version the stage migrates from.
    public let currentModel: NSManagedObjectModelReference
    /// The version the stage migrates to.
    public let nextModel: NSManagedObjectModelReference
    /// Runs before the migration, on the store at ``currentModel``.
    open var willMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?
    /// Runs after the migration, on the store at ``nextModel``.
    open var didMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?

    public init(migratingFrom currentModel: NSManagedObjectModelReference, to nextModel: NSManagedObjectModelReference) {
        self.currentModel = currentModel
        self.nextModel = nextModel
        super.init()
    }
}

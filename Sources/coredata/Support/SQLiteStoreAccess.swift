import CoreData
import CoreDataSQLiteStore
import CoreDataStorage
import Foundation

/// Reads Apple SQLite stores (Core Data's `NSSQLiteStoreType` files, Formats/apple-sqlite-store.md)
/// for the commands. Everything opens the file read-only and writes nothing; SQLite's own locks
/// keep a concurrent save from changing what one read sees.
///
/// Without a model only the store's own tables are read (`Z_PRIMARYKEY`, `Z_METADATA`, the
/// entity tables by `Z_ENT`); objects and their values need the app's model.
enum SQLiteStoreAccess {
    /// The model-less look at the store (`info`).
    ///
    /// - Throws: ``ExitStatus/notAStore`` for an SQLite database that is no Core Data store,
    ///   ``ExitStatus/damaged`` when SQLite or the tables say it is damaged.
    static func inspect(_ path: String) throws(CLIError) -> AppleSQLiteInspection {
        let inspection: AppleSQLiteInspection
        do { inspection = try AppleSQLiteInspection(path: path) } catch { throw failure(error, path) }
        try requireCoreDataStore(inspection)
        return inspection
    }

    /// The store's metadata as `Z_METADATA` holds it (Apple's version hashes included).
    static func metadata(_ path: String) throws(CLIError) -> [String: Any] {
        do { return try AppleSQLiteStore.metadata(atPath: path).values } catch { throw failure(error, path) }
    }

    /// Every damaged location (`verify`, and the check `dump` and `convert` run first). With a
    /// model that cannot read the store, fails with ``ExitStatus/badModel``.
    static func verify(_ path: String, model: NSManagedObjectModel?, modelPath: String?) throws(CLIError) -> AppleSQLiteVerification {
        // A database SQLite reads but that has no Core Data table is no store at all.
        if let inspection = try? AppleSQLiteInspection(path: path) { try requireCoreDataStore(inspection) }
        var report = AppleSQLiteInspection.verify(path: path, model: model)
        if report.isLocked { throw CLIError.locked(path) }
        if let mismatch = report.modelMismatch {
            throw CLIError(.badModel, "the model \(modelPath ?? "") does not match \(path): \(mismatch)")
        }
        // The store itself reads every object last: what it refuses is damage too.
        if let model, report.isIntact {
            do {
                let store = try open(path, model: model, modelPath: modelPath ?? "")
                try? store.close()
            } catch let error where error.status == .damaged {
                report.issues.append(AppleSQLiteVerification.Issue(location: "store", problem: error.message))
            }
        }
        return report
    }

    /// Refuses a damaged store, naming its first damaged location (`dump`, `convert`).
    static func requireIntact(_ path: String, model: NSManagedObjectModel, modelPath: String) throws(CLIError) {
        let report = try verify(path, model: model, modelPath: modelPath)
        guard let first = report.issues.first else { return }
        let more = report.issues.count > 1 ? " (and \(report.issues.count - 1) more damaged locations; run coredata verify)" : " (run coredata verify)"
        throw CLIError(.damaged, "\(path) is damaged: \(first.location): \(first.problem)\(more)")
    }

    /// Opens the store read-only with the app's model, as `NSSQLiteStoreType` with
    /// `NSReadOnlyPersistentStoreOption` does: every object is read and checked against the model.
    ///
    /// - Throws: ``ExitStatus/badModel`` when the model's entities or columns are not the store's,
    ///   ``ExitStatus/damaged`` for a value the model's type cannot take.
    static func open(_ path: String, model: NSManagedObjectModel, modelPath: String) throws(CLIError) -> AppleSQLiteStore {
        var options = AppleSQLiteStoreOptions()
        options.readOnly = true
        do {
            return try AppleSQLiteStore(path: path, model: model, metadata: StoreMetadata(), options: options)
        } catch {
            if case .io(let detail) = error, detail.contains("does not match the model") {
                throw CLIError(.badModel, "the model \(modelPath) does not match \(path): \(detail)")
            }
            throw failure(error, path)
        }
    }

    private static func requireCoreDataStore(_ inspection: AppleSQLiteInspection) throws(CLIError) {
        guard inspection.isCoreDataStore else {
            throw CLIError(.notAStore, "\(inspection.path) is an SQLite database but not a Core Data store: it has no Z_PRIMARYKEY or Z_METADATA table")
        }
    }

    /// A store error as the CLI's failure: a lock held too long is status 4.
    static func failure(_ error: StoreError, _ path: String) -> CLIError {
        if case .io(let detail) = error, detail.contains("is locked by another connection") { return CLIError.locked(path) }
        if case .corrupt(let detail) = error, detail.contains("but not a Core Data store") {
            return CLIError(.notAStore, "\(path) is an SQLite database but not a Core Data store: it has no Z_PRIMARYKEY or Z_METADATA table")
        }
        return CLIError.store(error, path: path)
    }
}

import CoreDataBinaryStore
import CoreDataPredicate
import CoreDataStorage
import CoreDataTestSupport
import Foundation

/// What happened when a workload ran against a file system.
struct WorkloadOutcome {
    /// The first step that threw, with its error; `nil` when every step returned.
    var failure: (step: Int, error: any Error)?
    /// The file system's operation count after each step that returned.
    var operationsAfterStep: [Int] = []
    /// The file system's read count after each step that returned.
    var readsAfterStep: [Int] = []
    /// After a failure: each later step tried on the same handle, with what it threw (`nil`
    /// when it returned, which a poisoned handle must never do).
    var laterSteps: [(step: Int, error: (any Error)?)] = []
    /// After a failure: what closing the handle threw (a poisoned handle reports its error).
    var closeError: (any Error)?
    /// After a failure: operations the file system saw from the handle (a poisoned handle does none).
    var operationsAfterFailure = 0
    /// After a failure, with `keepHandle`: the handle as the failure left it (not closed).
    var handle: BinaryStore?
}

/// Runs a ``CrashWorkload`` against a binary store over a given file system.
enum WorkloadRunner {
    static let path = "/crash/store"
    static let storeUUID = "6F1D8F7E-2C55-4E0B-9A43-5D4C0E1B2A39"

    static func options(_ fileSystem: any StoreFileSystem, durability: BinaryStoreOptions.Durability = .full) -> BinaryStoreOptions {
        var options = BinaryStoreOptions()
        options.fileSystem = fileSystem
        options.durability = durability
        // Checkpoints run where the workload says, so every run does the same operations.
        options.backgroundCheckpoints = false
        options.pageCacheBytes = 1 << 20
        return options
    }

    static func open(_ fileSystem: any StoreFileSystem, path: String = path, durability: BinaryStoreOptions.Durability = .full) throws(StoreError) -> BinaryStore {
        try BinaryStore(path: path, model: CrashTestModel.model, metadata: StoreMetadata(["NSStoreUUID": storeUUID]), options: options(fileSystem, durability: durability))
    }

    /// Runs the steps in order until one throws. With `probe`, then tries the later steps on the
    /// same handle (up to the next open, reopen or close, and the close itself), recording what
    /// each threw and counting the operations they caused.
    static func run(_ workload: CrashWorkload, on fileSystem: FaultInjectingFileSystem, durability: BinaryStoreOptions.Durability = .full, probe: Bool = false, keepHandle: Bool = false) -> WorkloadOutcome {
        var outcome = WorkloadOutcome()
        var store: BinaryStore?
        for (index, step) in workload.steps.enumerated() {
            do {
                try perform(step.action, on: &store, fileSystem: fileSystem, durability: durability)
                outcome.operationsAfterStep.append(fileSystem.operationCount)
                outcome.readsAfterStep.append(fileSystem.readCount)
            } catch {
                outcome.failure = (index, error)
                break
            }
        }
        guard let failed = outcome.failure?.step else { return outcome }
        if keepHandle { outcome.handle = store }
        if probe, let handle = store {
            let before = fileSystem.operationCount
            probing: for index in (failed + 1)..<workload.steps.count {
                let action = workload.steps[index].action
                switch action {
                case .open, .reopen:
                    break probing
                case .close:
                    break probing
                case .check, .fetchIndexed:
                    continue
                case .save, .setMarker, .checkpoint, .compact:
                    var same: BinaryStore? = handle
                    do {
                        try perform(action, on: &same, fileSystem: fileSystem, durability: durability)
                        outcome.laterSteps.append((index, nil))
                    } catch {
                        outcome.laterSteps.append((index, error))
                    }
                }
            }
            // Closing a poisoned handle only releases it, and says why.
            do { try handle.close() } catch { outcome.closeError = error }
            outcome.operationsAfterFailure = fileSystem.operationCount - before
        }
        return outcome
    }

    static func perform(_ action: CrashWorkload.Action, on store: inout BinaryStore?, fileSystem: any StoreFileSystem, durability: BinaryStoreOptions.Durability, path: String = path) throws {
        switch action {
        case .open:
            store = try open(fileSystem, path: path, durability: durability)
        case .reopen:
            store = nil
            store = try open(fileSystem, path: path, durability: durability)
        case .save(let changes):
            _ = try handle(store).save(changes)
        case .setMarker(let marker):
            let handle = try handle(store)
            var metadata = try handle.metadata()
            metadata[StoreSnapshot.markerKey] = marker
            try handle.setMetadata(metadata)
        case .checkpoint:
            try handle(store).checkpoint()
        case .compact:
            try handle(store).compact()
        case .close:
            try handle(store).close()
            store = nil
        case .check(let expected):
            let found = try StoreSnapshot.read(try handle(store))
            guard found == expected else { throw WorkloadCheckFailure(difference: found.difference(from: expected)) }
        case .fetchIndexed(let entity, let format, let expected):
            let found = try fetchIDs(try handle(store), entity: entity, format: format)
            guard found == expected else {
                throw WorkloadCheckFailure(difference: "\(format) found \(found.subtracting(expected).count) objects too many and missed \(expected.subtracting(found).count)")
            }
        }
    }

    /// The object IDs of `entity` that `format` matches, as the store's fetch finds them.
    static func fetchIDs(_ store: BinaryStore, entity: String, format: String) throws -> Set<StoreObjectID> {
        guard let description = CrashTestModel.model.entitiesByName[entity] else { throw StoreError.io(detail: "no entity \(entity)") }
        var request = StoreFetchRequest(entity: description, predicate: CoreDataPredicate.NSPredicate(format: format))
        request.resultType = .objectIDs
        guard case .objectIDs(let ids) = try store.execute(request) else { throw StoreError.io(detail: "a fetch of object IDs returned something else") }
        return Set(ids)
    }

    struct WorkloadCheckFailure: Error, CustomStringConvertible {
        var difference: String
        var description: String { "the live store differs from the oracle: \(difference)" }
    }

    private static func handle(_ store: BinaryStore?) throws -> BinaryStore {
        guard let store else { throw StoreError.closed }
        return store
    }

    /// For each operation of a clean run (numbered from 1), the step it belongs to.
    static func stepOfOperation(_ outcome: WorkloadOutcome) -> [Int] {
        CrashWorkload.stepOfOperation(endingAt: outcome.operationsAfterStep)
    }

    /// For each read of a clean run (numbered from 1), the step it belongs to.
    static func stepOfRead(_ outcome: WorkloadOutcome) -> [Int] {
        CrashWorkload.stepOfOperation(endingAt: outcome.readsAfterStep)
    }
}

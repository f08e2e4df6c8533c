import CoreDataFileSystem
import CoreDataStorage
import CoreDataTestSupport
import CoreDataXMLStore
import Foundation

/// Runs the crash suite's ``CrashWorkload`` against an XML store over a given file system.
/// Checkpoints and compactions are binary-store steps; an XML store has nothing to do for them
/// (every save already rewrote the file), so they are no-ops here.
enum XMLWorkloadRunner {
    static let path = "/crash/store.xml"
    static let storeUUID = "6F1D8F7E-2C55-4E0B-9A43-5D4C0E1B2A39"

    /// The standard workload with keys made unique across entities: the XML store numbers its
    /// objects store-wide (Formats/xml-store.md §5).
    static let workload: CrashWorkload = {
        let order = CrashTestModel.entityNames
        return CrashWorkload.standard.renumbered { id in
            let index = Int64(order.firstIndex(of: id.entityName) ?? order.count)
            return StoreObjectID(entityName: id.entityName, primaryKey: id.primaryKey * 8 + index)
        }
    }()

    static func open(_ fileSystem: any StoreFileSystem) throws(StoreError) -> XMLStore {
        var options = XMLStoreOptions()
        options.fileSystem = fileSystem
        return try XMLStore(path: path, model: CrashTestModel.model, metadata: StoreMetadata(["NSStoreUUID": storeUUID]), options: options)
    }

    /// The steps in order until one throws: the failing step and its error, and the operation
    /// count after each step that returned.
    static func run(_ workload: CrashWorkload, on fileSystem: FaultInjectingFileSystem) -> (failure: (step: Int, error: any Error)?, operationsAfterStep: [Int]) {
        var store: XMLStore?
        var after: [Int] = []
        for (index, step) in workload.steps.enumerated() {
            do {
                try perform(step.action, on: &store, fileSystem: fileSystem)
                after.append(fileSystem.operationCount)
            } catch {
                return ((index, error), after)
            }
        }
        return (nil, after)
    }

    static func perform(_ action: CrashWorkload.Action, on store: inout XMLStore?, fileSystem: any StoreFileSystem) throws {
        switch action {
        case .open:
            store = try open(fileSystem)
        case .reopen:
            store = nil
            store = try open(fileSystem)
        case .save(let changes):
            _ = try handle(store).save(changes)
        case .setMarker(let marker):
            let handle = try handle(store)
            var metadata = try handle.metadata()
            metadata[StoreSnapshot.markerKey] = marker
            try handle.setMetadata(metadata)
        case .checkpoint, .compact:
            _ = try handle(store)
        case .close:
            try handle(store).close()
            store = nil
        case .check(let expected):
            let found = try StoreSnapshot.read(try handle(store))
            guard found == expected else { throw CheckFailure(difference: found.difference(from: expected)) }
        }
    }

    struct CheckFailure: Error, CustomStringConvertible {
        var difference: String
        var description: String { "the live store differs from the oracle: \(difference)" }
    }

    private static func handle(_ store: XMLStore?) throws -> XMLStore {
        guard let store else { throw StoreError.closed }
        return store
    }
}

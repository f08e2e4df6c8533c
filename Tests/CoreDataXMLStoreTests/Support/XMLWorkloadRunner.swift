import CoreDataFileSystem
import CoreDataStorage
import CoreDataTestSupport
import CoreDataXMLFormat
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
        case .checkpoint, .compact, .fetchIndexed:
            _ = try handle(store)
        case .close:
            try handle(store).close()
            store = nil
        case .check(let expected):
            let found = try StoreSnapshot.read(try handle(store))
            guard found == expected else { throw CheckFailure(difference: found.difference(from: expected)) }
        }
    }

    /// Opens `image` as the next process would; `nil` when it holds one of the `acceptable`
    /// snapshots (changes applied) and no save's file is left beside the store, and, with
    /// `closeAndReopen`, the same after a close and another open. Otherwise what is wrong.
    static func recover(_ image: DiskImage, workload: CrashWorkload, acceptable: [Int], closeAndReopen: Bool) -> String? {
        let fileSystem = FaultInjectingFileSystem(image: image)
        do {
            let store = try open(fileSystem)
            let snapshot = try StoreSnapshot.read(store)
            guard acceptable.contains(where: { workload.snapshots[$0] == snapshot }) else {
                return "the store holds \(snapshot), not the contents after \(acceptable) changes: \(snapshot.difference(from: workload.snapshots[acceptable.last ?? 0]))"
            }
            let leftovers = fileSystem.paths(startingWith: path + XMLStoreLayout.pendingFileSuffix)
            if !leftovers.isEmpty { return "open left a save's file beside the store: \(leftovers)" }
            try store.close()
            guard closeAndReopen else { return nil }
            let again = try StoreSnapshot.read(try open(fileSystem))
            return again == snapshot ? nil : "after close and reopen: \(again.difference(from: snapshot))"
        } catch {
            return "reopening failed: \(error)"
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

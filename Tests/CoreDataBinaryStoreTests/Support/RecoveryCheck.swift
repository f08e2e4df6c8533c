import CoreDataBinaryStore
import CoreDataStorage
import CoreDataTestSupport
import Foundation

/// Opens a disk image the way the next process would and checks it against the oracle.
enum RecoveryCheck {
    /// What reopening an image found.
    struct Result {
        /// The index of the snapshot the store holds, when it is one of the acceptable ones.
        var matched: Int?
        /// What was wrong, when anything was.
        var failure: String?
        /// What the store holds, when it opened.
        var snapshot: StoreSnapshot?
        /// Operations the healthy open did (recovery's writes).
        var openOperations = 0
    }

    /// Opens `image` on a healthy file system and checks that it opens, holds exactly one of the
    /// snapshots `acceptable` names, verifies with no issue, closes (a checkpoint), and opens again
    /// to the same contents.
    static func reopen(_ image: DiskImage, workload: CrashWorkload, acceptable: [Int], durability: BinaryStoreOptions.Durability = .full, closeAndReopen: Bool = true) -> Result {
        var result = Result()
        let fileSystem = FaultInjectingFileSystem(image: image)
        let store: BinaryStore
        do { store = try WorkloadRunner.open(fileSystem, durability: durability) } catch {
            result.failure = "reopening failed: \(error)"
            return result
        }
        result.openOperations = fileSystem.operationCount
        do {
            let snapshot = try StoreSnapshot.read(store)
            result.snapshot = snapshot
            result.matched = acceptable.first { workload.snapshots[$0] == snapshot }
            if result.matched == nil {
                let closest = acceptable.last ?? 0
                result.failure = "the store holds \(snapshot), not the contents after \(acceptable.map(String.init).joined(separator: " or ")) changes; against \(closest): \(snapshot.difference(from: workload.snapshots[closest]))"
                return result
            }
            let verification = try store.verify()
            guard verification.isIntact else {
                result.failure = "verify found: \(verification)"
                return result
            }
            // Through the notes' title index, read from the file when a checkpoint wrote it.
            let titled = try WorkloadRunner.fetchIDs(store, entity: CrashWorkload.notesByTitle.entity, format: CrashWorkload.notesByTitle.format)
            guard titled == CrashWorkload.titledNotes(in: snapshot) else {
                result.failure = "the fetch through the title index found \(titled.count) notes, not \(CrashWorkload.titledNotes(in: snapshot).count)"
                return result
            }
            guard closeAndReopen else {
                try store.close()
                return result
            }
            try store.close()
            let again = try WorkloadRunner.open(fileSystem, durability: durability)
            let second = try StoreSnapshot.read(again)
            if second != snapshot { result.failure = "after close and reopen: \(second.difference(from: snapshot))" }
            let secondVerification = try again.verify()
            if !secondVerification.isIntact { result.failure = "verify after close and reopen found: \(secondVerification)" }
            try again.close()
        } catch {
            result.failure = "after reopening: \(error)"
        }
        return result
    }
}

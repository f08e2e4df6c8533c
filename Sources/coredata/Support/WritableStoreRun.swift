import CoreDataBinaryStore
import CoreDataStorage

/// The sequence `checkpoint` and `compact` share: open the binary store writable (its exclusive
/// lock), read its statistics, run the operation with a progress bar on a terminal, read the
/// statistics again and close it (the close's final checkpoint failing is reported too).
enum WritableStoreRun {
    /// Runs `operation` on the store at `path` for `command` (the progress bar's label).
    ///
    /// - Returns: the statistics before and after.
    /// - Throws: ``CLIError`` for a store that does not open, is locked, or fails the operation.
    static func run(
        _ path: String, command: String, operation: (BinaryStore, @escaping BinaryStoreProgress) throws(StoreError) -> Void
    ) throws(CLIError) -> (before: BinaryStoreStatistics, after: BinaryStoreStatistics) {
        let store = try StoreAccess.open(path, command: command, writable: true)
        let bar = ProgressBar(label: command)
        let before: BinaryStoreStatistics
        let after: BinaryStoreStatistics
        do throws(StoreError) {
            before = try store.statistics()
            try operation(store) { bar.update(done: $0, total: $1) }
            bar.finish()
            after = try store.statistics()
        } catch {
            bar.finish()
            try? store.close()
            throw CLIError.store(error, path: path)
        }
        try StoreAccess.close(store)
        return (before, after)
    }
}

import ArgumentParser
import CoreDataBinaryStore
import CoreDataStorage

/// `coredata compact STORE`: rewrites the store with only its live objects.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Rewrite the store with only the current version of each live object.",
        discussion: """
            Opens the store for writing (refused, with status 4, while another process has it \
            open), writes a new data file holding only live objects (those still in the log are \
            copied from it) beside it, renames it into place and empties the log \
            (Formats/binary-store.md §10): a crash at any point \
            leaves the old or the new store, both complete. Shows a progress bar when standard \
            error is a terminal.

            Example:
              coredata compact Library.store
              coredata compact Library.store --json
            """
    )

    @OptionGroup var arguments: StoreArguments

    func run() throws {
        try reportingFailures {
            let path = arguments.store
            let (before, after) = try WritableStoreRun.run(path, command: "compact") { (store, progress) throws(StoreError) in
                try store.compact(progress: progress)
            }
            let objects = after.objectsByEntity.values.reduce(0, +)
            if arguments.json {
                Console.print(JSONValue.object([
                    ("store", .string(path)),
                    ("objects", .integer(Int64(objects))),
                    ("dataFileBytesBefore", .integer(Int64(before.dataFileBytes))),
                    ("dataFileBytesAfter", .integer(Int64(after.dataFileBytes))),
                    ("logBytesBefore", .integer(Int64(before.logFileBytes))),
                    ("logBytesAfter", .integer(Int64(after.logFileBytes))),
                    ("deadBytesBefore", .integer(Int64(before.deadRecordBytes))),
                    ("deadBytesAfter", .integer(Int64(after.deadRecordBytes))),
                ]).pretty)
            } else {
                Console.print("compacted \(path): \(objects) objects; data file \(before.dataFileBytes) -> \(after.dataFileBytes) bytes, log \(before.logFileBytes) -> \(after.logFileBytes) bytes, dead bytes \(before.deadRecordBytes) -> \(after.deadRecordBytes)")
            }
        }
    }
}

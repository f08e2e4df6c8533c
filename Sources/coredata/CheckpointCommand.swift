import ArgumentParser
import CoreDataBinaryStore
import CoreDataStorage

/// `coredata checkpoint STORE`: copies the log into the data file and empties the log.
struct CheckpointCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkpoint",
        abstract: "Copy the log's saves into the data file and empty the log.",
        discussion: """
            Opens the store for writing (refused, with status 4, while another process has it \
            open), copies the records of every save in the log into new data pages with a new \
            index, publishes them through the other root slot and truncates the log to its \
            header (Formats/binary-store.md §9). Shows a progress bar when standard error is a \
            terminal.

            Example:
              coredata checkpoint Library.store
              coredata checkpoint Library.store --json
            """
    )

    @OptionGroup var arguments: StoreArguments

    func run() throws {
        try reportingFailures {
            let path = arguments.store
            let (before, after) = try WritableStoreRun.run(path, command: "checkpoint") { (store, progress) throws(StoreError) in
                try store.checkpoint(truncatingLog: true, progress: progress)
            }
            if arguments.json {
                Console.print(JSONValue.object([
                    ("store", .string(path)),
                    ("savesCopied", .integer(Int64(before.logSaves))),
                    ("generationBefore", .integer(Int64(before.checkpointGeneration))),
                    ("generationAfter", .integer(Int64(after.checkpointGeneration))),
                    ("logBytesBefore", .integer(Int64(before.logFileBytes))),
                    ("logBytesAfter", .integer(Int64(after.logFileBytes))),
                    ("dataFileBytesAfter", .integer(Int64(after.dataFileBytes))),
                ]).pretty)
            } else {
                Console.print("checkpointed \(path): \(before.logSaves) save\(before.logSaves == 1 ? "" : "s") copied into the data file; generation \(before.checkpointGeneration) -> \(after.checkpointGeneration); log \(before.logFileBytes) -> \(after.logFileBytes) bytes; data file \(after.dataFileBytes) bytes")
            }
        }
    }
}

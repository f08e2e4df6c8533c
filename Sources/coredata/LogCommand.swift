import ArgumentParser
import CoreDataBinaryStore
import CoreDataStorage

/// `coredata log STORE`: the write-ahead log's frames and saves.
struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show the write-ahead log: frames, saves, and what each save inserted, updated and deleted.",
        discussion: """
            Lists the saves committed to STORE-wal since the last checkpoint, oldest first: the \
            log offset of each, its frames (offset, sequence, payload bytes, commit or sync \
            marker), and the objects it inserted, updated and deleted (judged against the last \
            checkpoint and the saves before it). Bytes after the last save (a torn tail or \
            frames of an earlier checkpoint) are counted, not shown. Opens the store read-only.

            Example:
              coredata log Library.store
              coredata log Library.store --json
            """
    )

    @OptionGroup var arguments: StoreArguments

    func run() throws {
        try reportingFailures {
            let path = arguments.store
            let store = try StoreAccess.open(path, command: "log")
            let history: BinaryStoreLogHistory
            do throws(StoreError) { history = try store.logHistory() } catch { throw CLIError.store(error, path: path) }
            try StoreAccess.close(store)
            if arguments.json {
                Console.print(json(history, path: path).pretty)
                return
            }
            Console.print("log \(path)-wal: \(history.logFileBytes) bytes, \(history.commits.count) save\(history.commits.count == 1 ? "" : "s") since the last checkpoint\(history.droppedBytes > 0 ? ", \(history.droppedBytes) bytes after the last save (ignored)" : "")")
            for (number, commit) in history.commits.enumerated() {
                Console.print("save \(number + 1) at log offset \(commit.offset): \(commit.frames.count) frame\(commit.frames.count == 1 ? "" : "s"), \(commit.inserted.count) inserted, \(commit.updated.count) updated, \(commit.deleted.count) deleted\(commit.changedCatalog ? ", new catalog names" : "")\(commit.changedMetadata ? ", new metadata" : "")")
                for frame in commit.frames {
                    let role = frame.isCommit ? " commit" : (frame.isSyncMarker ? " sync marker" : "")
                    Console.print("  frame \(frame.sequence) at \(frame.offset): \(frame.payloadBytes) payload bytes\(role)")
                }
                for (label, ids) in [("inserted", commit.inserted), ("updated", commit.updated), ("deleted", commit.deleted)] where !ids.isEmpty {
                    Console.print("  \(label) \(ids.map(\.description).joined(separator: ", "))")
                }
            }
        }
    }

    private func json(_ history: BinaryStoreLogHistory, path: String) -> JSONValue {
        func ids(_ list: [StoreObjectID]) -> JSONValue { .array(list.map { .string($0.description) }) }
        return .object([
            ("store", .string(path)),
            ("logBytes", .integer(Int64(history.logFileBytes))),
            ("droppedBytes", .integer(Int64(history.droppedBytes))),
            ("saves", .array(history.commits.map { commit in
                .object([
                    ("offset", .integer(Int64(commit.offset))),
                    ("frames", .array(commit.frames.map { frame in
                        .object([
                            ("offset", .integer(Int64(frame.offset))), ("sequence", .integer(Int64(frame.sequence))),
                            ("payloadBytes", .integer(Int64(frame.payloadBytes))), ("commit", .bool(frame.isCommit)),
                            ("syncMarker", .bool(frame.isSyncMarker)),
                        ])
                    })),
                    ("inserted", ids(commit.inserted)), ("updated", ids(commit.updated)), ("deleted", ids(commit.deleted)),
                    ("changedCatalog", .bool(commit.changedCatalog)), ("changedMetadata", .bool(commit.changedMetadata)),
                ])
            })),
        ])
    }
}

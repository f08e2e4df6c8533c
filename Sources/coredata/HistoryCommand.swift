import ArgumentParser
import CoreDataBinaryStore
import CoreDataStorage
import Foundation

/// `coredata history STORE`: the persistent-history transactions a store keeps.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show the persistent-history transactions the store keeps, oldest first.",
        discussion: """
            Lists the transactions recorded by stores opened with NSPersistentHistoryTrackingKey \
            (Formats/binary-store.md §14): number, time, author, context, process and what each \
            inserted, updated (with the properties changed) and deleted (with the values kept). \
            Also prints the first number still kept and the last number handed out: a history \
            token below the first minus one has expired. Opens the store read-only.

            Example:
              coredata history Library.store
              coredata history Library.store --after 120 --limit 10 --json
            """
    )

    @OptionGroup var arguments: StoreArguments

    @Option(help: "Only transactions with a larger number.")
    var after: Int64 = 0

    @Option(help: "At most this many transactions.")
    var limit: Int?

    func run() throws {
        try reportingFailures {
            let path = arguments.store
            let store = try StoreAccess.open(path, command: "history")
            let page: StoreHistoryPage
            do throws(StoreError) {
                page = try store.history(StoreHistoryQuery(afterNumber: after, limit: limit.map { max(0, $0) }))
            } catch { throw CLIError.store(error, path: path) }
            try StoreAccess.close(store)
            if arguments.json {
                Console.print(json(page, path: path).pretty)
                return
            }
            Console.print("history \(path): \(page.transactions.count) transaction\(page.transactions.count == 1 ? "" : "s") shown, first kept \(page.firstRetained), last \(page.lastNumber)")
            let format = ISO8601DateFormatter()
            format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            for transaction in page.transactions {
                Console.print("transaction \(transaction.number) at \(format.string(from: transaction.timestamp)): author \(transaction.author ?? "-"), context \(transaction.contextName ?? "-"), process \(transaction.processID) (\(transaction.bundleID)), \(transaction.changes.count) change\(transaction.changes.count == 1 ? "" : "s")")
                for change in transaction.changes {
                    switch change.kind {
                    case .insert: Console.print("  inserted \(change.objectID)")
                    case .update: Console.print("  updated \(change.objectID): \(change.updatedProperties.joined(separator: ", "))")
                    case .delete:
                        let kept = change.tombstone.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }
                        Console.print("  deleted \(change.objectID)\(kept.isEmpty ? "" : ", kept \(kept.joined(separator: ", "))")")
                    }
                }
            }
        }
    }

    private func json(_ page: StoreHistoryPage, path: String) -> JSONValue {
        .object([
            ("store", .string(path)),
            ("firstRetained", .integer(page.firstRetained)),
            ("lastNumber", .integer(page.lastNumber)),
            ("transactions", .array(page.transactions.map { transaction in
                .object([
                    ("number", .integer(transaction.number)),
                    ("timestamp", .number(transaction.timestamp.timeIntervalSince1970)),
                    ("author", transaction.author.map(JSONValue.string) ?? .null),
                    ("contextName", transaction.contextName.map(JSONValue.string) ?? .null),
                    ("processID", .integer(Int64(transaction.processID))),
                    ("bundleID", .string(transaction.bundleID)),
                    ("changes", .array(transaction.changes.map { change in
                        .object([
                            ("kind", .string("\(change.kind)")),
                            ("object", .string(change.objectID.description)),
                            ("updatedProperties", .array(change.updatedProperties.map(JSONValue.string))),
                            ("tombstone", .object(change.tombstone.sorted { $0.key < $1.key }.map { ($0.key, .string("\($0.value)")) })),
                        ])
                    })),
                ])
            })),
        ])
    }
}

import ArgumentParser
import CoreDataBinaryStore
import CoreDataStorage
import Foundation

/// `coredata pages STORE`: the page map of the data file.
struct PagesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pages",
        abstract: "Show the data file's page map with compression ratios.",
        discussion: """
            One line per page, in file order: offset, kind, codec (lz4 or raw), stored and \
            decoded bytes, compression ratio, the checkpoint generation that wrote it, and for a \
            data page its records and how many are the current version of a live object (for \
            other pages, "live" means the current root uses them). Opens the store read-only.

            Example:
              coredata pages Library.store
              coredata pages Library.store --json
            """
    )

    @OptionGroup var arguments: StoreArguments

    func run() throws {
        try reportingFailures {
            let path = arguments.store
            let store = try StoreAccess.open(path, command: "pages")
            let pages: [BinaryStorePageSummary]
            do throws(StoreError) { pages = try store.pageMap() } catch { throw CLIError.store(error, path: path) }
            try StoreAccess.close(store)
            if arguments.json {
                Console.print(JSONValue.object([
                    ("store", .string(path)),
                    ("pages", .array(pages.map { page in
                        .object([
                            ("offset", .integer(Int64(page.offset))), ("kind", .string(page.kind.description)),
                            ("codec", .string(page.isCompressed ? "lz4" : "raw")),
                            ("storedBytes", .integer(Int64(page.storedBytes))), ("decodedBytes", .integer(Int64(page.decodedBytes))),
                            ("ratio", .number((page.compressionRatio * 100).rounded() / 100)),
                            ("generation", .integer(Int64(page.generation))),
                            ("records", .integer(Int64(page.records))), ("live", .integer(Int64(page.liveRecords))),
                        ])
                    })),
                ]).pretty)
                return
            }
            let header = ["offset", "kind", "codec", "stored", "decoded", "ratio", "gen", "records", "live"]
            var rows = [header]
            for page in pages {
                rows.append([
                    String(page.offset), page.kind.description, page.isCompressed ? "lz4" : "raw", String(page.storedBytes),
                    String(page.decodedBytes), String(format: "%.2f", page.compressionRatio), String(page.generation),
                    page.kind == .data ? String(page.records) : "-", String(page.liveRecords),
                ])
            }
            var widths = header.map { _ in 0 }
            for row in rows { for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) } }
            for row in rows {
                Console.print(row.enumerated().map { column, cell in
                    // Numbers right-aligned, words left-aligned.
                    let pad = String(repeating: " ", count: widths[column] - cell.count)
                    return column == 1 || column == 2 ? cell + pad : pad + cell
                }.joined(separator: "  "))
            }
            let stored = pages.reduce(0) { $0 + $1.storedBytes }
            let decoded = pages.reduce(0) { $0 + $1.decodedBytes }
            Console.print("\(pages.count) pages, \(stored) bytes stored, \(decoded) decoded (\(String(format: "%.2f", stored > 0 ? Double(decoded) / Double(stored) : 1))x)")
        }
    }
}

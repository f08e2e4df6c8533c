import ArgumentParser
import CoreData
import CoreDataBinaryStore
import CoreDataStorage

/// `coredata info STORE`: what a store is and holds, from its header, root, index and log.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a store's format, objects per entity, live and dead bytes, log and metadata.",
        discussion: """
            For a binary store, prints the format and version, page size, store UUID, objects per entity, live bytes \
            (the current record of each object) and dead bytes (superseded versions and \
            tombstones, which compact reclaims), the log's size and saves since the last \
            checkpoint, and the metadata with the model version hashes. For an XML store: the \
            format version, store UUID, next object ID, objects per entity, file size and the \
            metadata. Opens the store read-only.

            Example:
              coredata info Library.store
              coredata info Library.store --json
              coredata info Library.xml
            """
    )

    @OptionGroup var arguments: StoreArguments

    func run() throws {
        try reportingFailures {
            let path = arguments.store
            if try StoreKind.detect(path: path) == .xml { return try xmlInfo(path) }
            let store = try StoreAccess.open(path, command: "info")
            let stats: BinaryStoreStatistics
            let metadata: [String: Any]
            do throws(StoreError) {
                stats = try store.statistics()
                metadata = try store.metadata().values
            } catch {
                throw CLIError.store(error, path: path)
            }
            try StoreAccess.close(store)
            if arguments.json {
                Console.print(json(stats, metadata: metadata, path: path).pretty)
            } else {
                text(stats, metadata: metadata, path: path).forEach(Console.print)
            }
        }
    }

    /// An XML store's `<databaseInfo>`, objects per entity and size (Formats/xml-store.md §3, §4).
    private func xmlInfo(_ path: String) throws(CLIError) {
        let contents = try XMLStoreAccess.read(path)
        let info = contents.document.info
        let counts = contents.objectIDsByEntity.mapValues(\.count)
        let objects = contents.rows.count
        if arguments.json {
            Console.print(JSONValue.object([
                ("store", .string(path)),
                ("format", .string("xml")),
                ("formatVersion", .integer(info.version)),
                ("storeUUID", .string(info.uuid)),
                ("nextObjectID", .integer(info.nextObjectID)),
                ("objects", .integer(Int64(objects))),
                ("objectsByEntity", .counts(counts)),
                ("fileBytes", .integer(Int64(contents.fileBytes))),
                ("metadata", PlistValueFormatting.json(contents.metadata)),
            ]).pretty)
            return
        }
        let perEntity = counts.keys.sorted().map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", ")
        var lines = [
            "store            \(path)",
            "format           XML store, version \(info.version) (rewritten whole on every save: no log, no pages)",
            "store UUID       \(info.uuid)",
            "next object ID   \(info.nextObjectID)",
            "objects          \(objects)\(perEntity.isEmpty ? "" : " (\(perEntity))")",
            "file             \(contents.fileBytes) bytes",
            "metadata",
        ]
        lines += PlistValueFormatting.lines(contents.metadata, indent: "  ")
        lines.forEach(Console.print)
    }

    private func created(_ stats: BinaryStoreStatistics) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(stats.createdMilliseconds) / 1000))
    }

    private func json(_ stats: BinaryStoreStatistics, metadata: [String: Any], path: String) -> JSONValue {
        .object([
            ("store", .string(path)),
            ("format", .string("binary")),
            ("formatVersion", .integer(Int64(stats.formatVersion))),
            ("pageSize", .integer(Int64(stats.pageSize))),
            ("storeUUID", .string(stats.storeUUID.uuidString)),
            ("created", .string(created(stats))),
            ("objects", .integer(Int64(stats.objectsByEntity.values.reduce(0, +)))),
            ("objectsByEntity", .counts(stats.objectsByEntity)),
            ("liveBytes", .integer(Int64(stats.liveRecordBytes))),
            ("deadBytes", .integer(Int64(stats.deadRecordBytes))),
            ("dataFileBytes", .integer(Int64(stats.dataFileBytes))),
            ("dataEnd", .integer(Int64(stats.dataEnd))),
            ("pagesByKind", .counts(stats.pagesByKind)),
            ("storedDataPageBytes", .integer(Int64(stats.storedDataPageBytes))),
            ("decodedDataPageBytes", .integer(Int64(stats.decodedDataPageBytes))),
            ("lastCheckpoint", .object([("generation", .integer(Int64(stats.checkpointGeneration)))])),
            ("log", .object([
                ("bytes", .integer(Int64(stats.logFileBytes))),
                ("end", .integer(Int64(stats.logEnd))),
                ("savesSinceCheckpoint", .integer(Int64(stats.logSaves))),
                ("frames", .integer(Int64(stats.logFrames))),
                ("droppedBytes", .integer(Int64(stats.droppedLogBytes))),
            ])),
            ("metadata", PlistValueFormatting.json(metadata)),
        ])
    }

    private func text(_ stats: BinaryStoreStatistics, metadata: [String: Any], path: String) -> [String] {
        let objects = stats.objectsByEntity.values.reduce(0, +)
        let perEntity = stats.objectsByEntity.keys.sorted().map { "\($0) \(stats.objectsByEntity[$0] ?? 0)" }.joined(separator: ", ")
        let pages = stats.pagesByKind.keys.sorted().map { "\(stats.pagesByKind[$0] ?? 0) \($0)" }.joined(separator: ", ")
        let ratio = stats.storedDataPageBytes > 0 ? Double(stats.decodedDataPageBytes) / Double(stats.storedDataPageBytes) : 1
        var lines = [
            "store            \(path)",
            "format           binary store, version \(stats.formatVersion)",
            "page size        \(stats.pageSize)",
            "store UUID       \(stats.storeUUID.uuidString)",
            "created          \(created(stats))",
            "objects          \(objects)\(perEntity.isEmpty ? "" : " (\(perEntity))")",
            "live bytes       \(stats.liveRecordBytes) (the current record of each object)",
            "dead bytes       \(stats.deadRecordBytes) (superseded versions and tombstones; compact reclaims them)",
            "data file        \(stats.dataFileBytes) bytes, pages end at \(stats.dataEnd)",
            "pages            \(pages.isEmpty ? "none" : pages); data pages \(stats.storedDataPageBytes) bytes stored, \(stats.decodedDataPageBytes) decoded (\(String(format: "%.2f", ratio))x)",
            "last checkpoint  generation \(stats.checkpointGeneration)",
            "log              \(stats.logFileBytes) bytes, \(stats.logSaves) saves in \(stats.logFrames) frames since the last checkpoint\(stats.droppedLogBytes > 0 ? ", \(stats.droppedLogBytes) bytes after the last save (ignored)" : "")",
            "metadata",
        ]
        lines += PlistValueFormatting.lines(metadata, indent: "  ")
        return lines
    }
}

import ArgumentParser
import CoreData
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataSQLiteStore
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
            metadata. For an Apple SQLite store (Core Data's NSSQLiteStoreType file): the journal \
            mode (wal or delete), store UUID, the entities of Z_PRIMARYKEY (number, name, \
            superentity, Z_MAX), objects per entity (by Z_ENT) and per table, file size, and the \
            metadata Core Data keeps in Z_METADATA (NSPersistenceFrameworkVersion, \
            NSStoreModelVersionIdentifiers, version hashes in Base64); no model is needed. Opens \
            the store read-only.

            Example:
              coredata info Library.store
              coredata info Library.store --json
              coredata info Library.xml
              coredata info Library.sqlite --json
            """
    )

    @OptionGroup var arguments: StoreArguments

    func run() throws {
        try reportingFailures {
            let path = arguments.store
            switch try StoreKind.detect(path: path) {
            case .xml: return try xmlInfo(path)
            case .sqlite: return try sqliteInfo(path)
            case .binary: break
            }
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

    /// An Apple SQLite store's own tables, without a model (Formats/apple-sqlite-store.md §2, §3).
    private func sqliteInfo(_ path: String) throws(CLIError) {
        let inspection = try SQLiteStoreAccess.inspect(path)
        let metadata = try SQLiteStoreAccess.metadata(path)
        let uuid = (metadata["NSStoreUUID"] as? String) ?? ""
        let counts = inspection.objectsByEntity
        let objects = inspection.tables.reduce(0) { $0 + $1.objects }
        let fileBytes = Self.size(path)
        let walBytes = FileManager.default.fileExists(atPath: path + "-wal") ? Self.size(path + "-wal") : nil
        let names = Dictionary(inspection.entities.map { ($0.number, $0.name) }, uniquingKeysWith: { first, _ in first })
        if arguments.json {
            Console.print(JSONValue.object([
                ("store", .string(path)),
                ("format", .string("sqlite")),
                ("journalMode", .string(inspection.journalMode)),
                ("storeUUID", .string(uuid)),
                ("pageSize", .integer(Int64(inspection.pageSize))),
                ("pageCount", .integer(Int64(inspection.pageCount))),
                ("fileBytes", .integer(fileBytes)),
                ("walBytes", walBytes.map { .integer($0) } ?? .null),
                ("entities", .array(inspection.entities.map { entity in
                    .object([
                        ("number", .integer(entity.number)),
                        ("name", .string(entity.name)),
                        ("superentity", names[entity.superNumber].map { .string($0) } ?? .null),
                        ("superNumber", .integer(entity.superNumber)),
                        ("max", .integer(entity.maxKey)),
                        ("table", .string(entity.table)),
                        ("objects", .integer(Int64(entity.objects))),
                    ])
                })),
                ("tables", .array(inspection.tables.map { table in
                    .object([
                        ("name", .string(table.name)),
                        ("rootEntity", .string(table.rootEntity)),
                        ("objects", .integer(Int64(table.objects))),
                        ("largestPrimaryKey", table.largestKey.map { .integer($0) } ?? .null),
                    ])
                })),
                ("objects", .integer(Int64(objects))),
                ("objectsByEntity", .counts(counts)),
                ("otherTables", .array(inspection.tableNames.filter { name in
                    !AppleSQLiteInspection.bookkeepingTables.contains(name) && !inspection.tables.contains { $0.name == name }
                }.map { .string($0) })),
                ("modelCacheBytes", inspection.modelCacheBytes.map { .integer(Int64($0)) } ?? .null),
                ("metadata", PlistValueFormatting.json(metadata)),
            ]).pretty)
            return
        }
        let perEntity = counts.keys.sorted().map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", ")
        let journal: String
        switch inspection.journalMode {
        case "wal": journal = "wal (write-ahead log \(path)-wal: \(walBytes.map { "\($0) bytes" } ?? "none"))"
        case "delete": journal = "delete (rollback journal)"
        default: journal = inspection.journalMode
        }
        var lines = [
            "store            \(path)",
            "format           Apple SQLite store (Core Data's NSSQLiteStoreType layout, SQLite 3)",
            "journal mode     \(journal)",
            "store UUID       \(uuid)",
            "file             \(fileBytes) bytes, \(inspection.pageCount) pages of \(inspection.pageSize)",
            "objects          \(objects)\(perEntity.isEmpty ? "" : " (\(perEntity))")",
            "tables           \(inspection.tables.isEmpty ? "none" : inspection.tables.map { "\($0.name) \($0.objects)" }.joined(separator: ", "))",
            "entities         \(inspection.entities.count) (Z_PRIMARYKEY: number, name, superentity, Z_MAX, objects)",
        ]
        let width = inspection.entities.map(\.name.count).max() ?? 0
        for entity in inspection.entities {
            let superentity = entity.superNumber == 0 ? "root" : "super \(entity.superNumber) \(names[entity.superNumber] ?? "?")"
            lines.append("  \(String(entity.number).leftPadded(to: 3))  \(entity.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(superentity), Z_MAX \(entity.maxKey), \(entity.objects) in \(entity.table)")
        }
        if let bytes = inspection.modelCacheBytes { lines.append("model cache      \(bytes) bytes (Z_MODELCACHE)") }
        lines.append("metadata")
        lines += PlistValueFormatting.lines(metadata, indent: "  ")
        lines.forEach(Console.print)
    }

    private static func size(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
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
            ("secondaryIndexes", .counts(stats.secondaryIndexes)),
            ("externalData", .object([
                ("files", .integer(Int64(stats.externalFiles))),
                ("bytes", .integer(Int64(stats.externalBytes))),
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
        ]
        if !stats.secondaryIndexes.isEmpty {
            let indexes = stats.secondaryIndexes.keys.sorted().map { "\($0) (\(stats.secondaryIndexes[$0] ?? 0) entries)" }.joined(separator: ", ")
            lines.append("indexes          \(indexes), persisted by the last checkpoint")
        }
        if stats.externalFiles > 0 {
            lines.append("external data    \(stats.externalFiles) files, \(stats.externalBytes) bytes in \(path)\(ExternalDataLayout.folderSuffix)/ (values of attributes that allow external storage)")
        }
        lines.append("metadata")
        lines += PlistValueFormatting.lines(metadata, indent: "  ")
        return lines
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

import CoreDataModel
import CoreDataPredicate
import CoreDataSQL
import CoreDataStorage
import Foundation

/// Apple's SQLite store (`Formats/apple-sqlite-store.md`): opens, reads and writes the files Core
/// Data's `NSSQLiteStoreType` writes on Apple platforms, on the system `libsqlite3`.
///
/// The store reads every object into a ``RowTable`` when it opens (as the XML store does) and
/// answers fetches from it, so fetches run in the process, not as SQL. A save applies the change
/// to a copy of the table (version checks, uniqueness constraints), writes it to the database in
/// one transaction, and keeps the copy only when the transaction committed. Before every read and
/// save the store asks SQLite whether another connection committed (`PRAGMA data_version`) and
/// then reloads, so saves of another process (or of Apple's Core Data) are seen and a save over a
/// changed object fails with an optimistic-locking conflict (§8).
///
/// Threading: every method is safe from any thread; calls run one at a time on the connection.
/// Complexity: opening and a reload are O(size of the store); a fetch O(rows of the entities); a
/// save O(changed rows) statements plus an O(all rows) copy of the table.
/// Errors: a file that is not an SQLite database, or whose rows cannot be the model's, throws
/// ``StoreError/corrupt(detail:)`` naming the table, key and column; a store whose tables do not
/// match the model throws ``StoreError/io(detail:)`` listing what differs; SQLite's I/O errors and a
/// full disk are ``StoreError/io(detail:)``, and leave the file as the last committed save left it.
public final class AppleSQLiteStore: PersistentStoreEngine, @unchecked Sendable {
    /// The metadata's store type (`NSStoreType`), as Apple writes it.
    public static let storeTypeName = "SQLite"
    /// A statement waits this long for another connection's lock (§1).
    public static let defaultLockTimeout = 10.0
    /// The first 16 bytes of every SQLite 3 database (§1).
    public static let fileHeader = Array("SQLite format 3\0".utf8)
    /// `Z_METADATA.Z_VERSION` (§3).
    static let metadataVersion: Int64 = 1
    /// The largest primary key and version (`Z_PK`, `Z_MAX`, `Z_OPT`) a store may hold (§1):
    /// larger ones are damage, and counting past them is refused, so no arithmetic overflows.
    static let largestKey: Int64 = 1 << 62
    /// How many problems of SQLite's integrity check an open reports (§8).
    static let reportedDamage = 8
    /// Order keys are written `(position + 1) × step` (§6).
    static let orderKeyStep: Int64 = 1024
    /// Metadata keys kept in `Z_METADATA`'s own columns or made by the engine (§3).
    static let uuidKey = "NSStoreUUID"
    static let typeKey = "NSStoreType"
    static let hashesKey = "NSStoreModelVersionHashes"
    static let hashesDigestKey = "NSStoreModelVersionHashesDigest"
    static let hashesVersionKey = "NSStoreModelVersionHashesVersion"
    /// `NSStoreModelVersionHashesVersion` of the hashes Apple's Core Data writes (§3).
    static let appleHashesVersion = 3

    private struct State {
        var table: RowTable
        var metadata: StoreMetadata
        /// The next key of each hierarchy, by root entity number.
        var nextKeys: [Int64: Int64] = [:]
        /// The table each object key lives in → key → entity: resolves references (§5).
        var entityOfKey: [String: [Int64: EntityNumber]] = [:]
        var dataVersion: Int64 = 0
        var isClosed = false
        var poisoned: StoreError?
    }

    /// The database file.
    public let path: String
    private let options: AppleSQLiteStoreOptions
    private let model: NSManagedObjectModel
    private let schema: AppleSQLiteSchema
    private let connection: SQLiteConnection
    private let lock = NSLock()
    private var state: State

    /// Whether the file at `path` is an SQLite database (its first 16 bytes are SQLite's header).
    public static func isSQLiteFile(atPath path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: fileHeader.count)) ?? Data()
        return [UInt8](header) == fileHeader
    }

    /// Opens the store at `path`, or creates it (in WAL mode, with `metadata`) when there is none
    /// and the options allow it.
    ///
    /// - Throws: ``StoreError/corrupt(detail:)`` for a file that is not a Core Data SQLite store or
    ///   holds values the model's types cannot take; ``StoreError/io(detail:)`` when the store's
    ///   tables do not match `model` (it needs migration) or SQLite fails.
    public init(path: String, model: NSManagedObjectModel, metadata: StoreMetadata, options: AppleSQLiteStoreOptions = AppleSQLiteStoreOptions()) throws(StoreError) {
        self.path = path
        self.options = options
        self.model = model
        let exists = FileManager.default.fileExists(atPath: path)
        // An empty file is what a creation that failed before its first write leaves: a new store.
        let isEmpty = exists && ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil) == 0
        let creating = !exists || isEmpty
        if creating && (options.readOnly || !options.createsStore) {
            throw .io(detail: "there is no SQLite store at \(path)")
        }
        if !creating, !Self.isSQLiteFile(atPath: path) {
            throw .corrupt(detail: "\(path) is not an SQLite database (its first 16 bytes are not \"SQLite format 3\")")
        }
        if creating {
            // A model the layout cannot hold is refused before any file is made.
            do { _ = try AppleSQLiteSchema(model: model, records: []) } catch {
                throw .io(detail: "the model cannot be stored in Apple's SQLite layout at \(path): \(error.description)")
            }
        }
        do {
            connection = try SQLiteConnection(path: path, readOnly: options.readOnly, create: creating)
            try connection.setBusyTimeout(options.lockTimeout)
            if !options.readOnly {
                // A save that returned is on disk (§8): Apple's default NORMAL is not, in WAL mode.
                try connection.execute("PRAGMA synchronous=FULL")
            }
        } catch {
            throw Self.storeError(error, path)
        }
        var created = false
        do {
            if try !connection.tableExists("Z_PRIMARYKEY") {
                var tables = 0
                try connection.query("SELECT count(*) FROM sqlite_master") { (row) throws(SQLiteError) in
                    if case .integer(let count) = row[0] { tables = Int(count) }
                }
                guard tables == 0, !options.readOnly else {
                    throw StoreError.corrupt(detail: "\(path) is an SQLite database but not a Core Data store (it has no Z_PRIMARYKEY table)")
                }
                try Self.create(connection, model: model, metadata: metadata)
                created = true
            }
        } catch {
            if creating && !created {
                // Leave no half-made file that a later open would take for a damaged store.
                connection.close()
                for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
            throw Self.storeError(error, path)
        }
        let records: [AppleSQLiteSchema.EntityRecord]
        do { records = try Self.entityRecords(connection, path) } catch { throw Self.storeError(error, path) }
        do {
            schema = try AppleSQLiteSchema(model: model, records: records)
        } catch {
            throw .io(detail: "the SQLite store at \(path) does not match the model: \(error.description)")
        }
        state = State(table: RowTable(entities: model.entitiesByName, keyScope: .perEntity), metadata: StoreMetadata())
        do {
            var existing: [String: [String: String]] = [:]
            var tables: [String] = []
            try connection.query("SELECT name FROM sqlite_master WHERE type = 'table'") { (row) throws(SQLiteError) in
                if case .text(let name) = row[0] { tables.append(name) }
            }
            for table in tables { existing[table.uppercased()] = try connection.columns(of: table) }
            // SQLite answers from a damaged index without noticing, and translated fetches use the
            // indexes: a store is checked whole before it is trusted (§8).
            var damage: [String] = []
            try connection.query("PRAGMA integrity_check(\(Self.reportedDamage))") { (row) throws(SQLiteError) in
                if case .text(let line) = row[0], line != "ok" { damage.append(line) }
            }
            guard damage.isEmpty else {
                throw StoreError.corrupt(detail: "\(path) is damaged (SQLite's integrity check): \(damage.joined(separator: "; "))")
            }
            let problems = schema.problems(existingColumns: existing)
            guard problems.isEmpty else {
                throw StoreError.io(detail: "the SQLite store at \(path) does not match the model (it needs migration): \(problems.prefix(8).joined(separator: "; "))")
            }
            try reload(&state)
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw Self.storeError(error, path)
        } catch {
            throw .io(detail: "\(path): \(error)")
        }
    }

    // MARK: Creating (§3, §4, §6)

    /// Apple's key, metadata and model cache tables (§3).
    private static let keyAndMetadataTables = [
        "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
        "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
        "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
    ]

    private static func create(_ connection: SQLiteConnection, model: NSManagedObjectModel, metadata: StoreMetadata) throws {
        let schema = try AppleSQLiteSchema(model: model, records: [])
        // WAL is Apple's journal mode for new stores; it must be set outside a transaction.
        _ = try connection.pragma("journal_mode=WAL")
        try connection.execute("BEGIN IMMEDIATE")
        do {
            for statement in keyAndMetadataTables + schema.tableStatements() { try connection.execute(statement) }
            for record in schema.records {
                try connection.run(
                    "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                    [.integer(record.number), .text(record.name), .integer(record.superNumber), .integer(0)])
            }
            var values = metadata.values
            let uuid = (values[uuidKey] as? String) ?? UUID().uuidString
            values[typeKey] = storeTypeName
            try writeMetadata(connection, model: model, uuid: uuid, values: values)
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    private static func writeMetadata(_ connection: SQLiteConnection, model: NSManagedObjectModel, uuid: String, values: [String: Any]) throws {
        var list = values
        list[uuidKey] = nil
        list[typeKey] = storeTypeName
        // What Apple's Core Data checks when it opens the file (§3, §7).
        list[hashesKey] = model.appleEntityVersionHashesByName
        list[hashesDigestKey] = model.appleEntityVersionHashesDigest
        list[hashesVersionKey] = appleHashesVersion
        let data: Data
        do {
            data = try PropertyListSerialization.data(fromPropertyList: list, format: .binary, options: 0)
        } catch {
            throw StoreError.io(detail: "the store metadata is not a property list: \(error.localizedDescription)")
        }
        try connection.run(
            "INSERT OR REPLACE INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (?, ?, ?)",
            [.integer(metadataVersion), .text(uuid), .blob(data)])
    }

    private static func entityRecords(_ connection: SQLiteConnection, _ path: String) throws -> [AppleSQLiteSchema.EntityRecord] {
        var records: [AppleSQLiteSchema.EntityRecord] = []
        try connection.query("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") { (row) throws(SQLiteError) in
            guard case .integer(let number) = row[0], case .text(let name) = row[1] else { return }
            var superNumber: Int64 = 0
            if case .integer(let value) = row[2] { superNumber = value }
            var maxKey: Int64 = 0
            if case .integer(let value) = row[3] { maxKey = value }
            records.append(AppleSQLiteSchema.EntityRecord(number: number, name: name, superNumber: superNumber, maxKey: maxKey))
        }
        return records
    }

    // MARK: Loading

    /// Reads every object, relationship and the metadata into `state` (§3–§6), as one snapshot:
    /// inside the caller's transaction, or a read transaction of its own (§8).
    private func reload(_ state: inout State) throws {
        let ownTransaction = connection.isAutocommit
        if ownTransaction { try connection.execute("BEGIN") }
        do {
            try reloadInTransaction(&state)
            if ownTransaction { try connection.execute("COMMIT") }
        } catch {
            if ownTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    private func reloadInTransaction(_ state: inout State) throws {
        // Before any read: a commit between this and the reads is then reloaded again next time,
        // never stamped as seen.
        let version = try currentDataVersion()
        var rows: [StoreObjectID: StoreRow] = [:]
        var entityOfKey: [String: [Int64: EntityNumber]] = [:]
        var nextKeys: [Int64: Int64] = [:]
        for record in try Self.entityRecords(connection, path) {
            guard record.maxKey <= Self.largestKey else {
                throw StoreError.corrupt(detail: "\(path): Z_PRIMARYKEY gives entity \(record.number) Z_MAX \(record.maxKey), beyond the largest key \(Self.largestKey)")
            }
            nextKeys[record.number] = max(record.maxKey, 0) + 1
        }
        /// to-one references to resolve once every table is read: (object, slot, destination table,
        /// key, the relationship's destination entity).
        var pendingReferences: [(StoreObjectID, Int, String, Int64, NSEntityDescription?)] = []
        /// Children by (table, column) → parent key → (child, order).
        var children: [String: [Int64: [(StoreObjectID, Int64)]]] = [:]
        let externalFolder = Self.externalDataFolder(of: path)

        for hierarchy in schema.hierarchies {
            let columns = hierarchy.columns.map(\.name)
            let position = Dictionary(columns.enumerated().map { ($1, $0 + 3) }, uniquingKeysWith: { first, _ in first })
            let sql = "SELECT Z_PK, Z_ENT, Z_OPT\(columns.isEmpty ? "" : ", " + columns.joined(separator: ", ")) FROM \(hierarchy.table)"
            var keys: [Int64: EntityNumber] = [:]
            var largest: Int64 = 0
            var failure: Error?
            try connection.query(sql) { (row) throws(SQLiteError) in
                guard failure == nil else { return }
                guard case .integer(let key) = row[0], key >= 1, key <= Self.largestKey else {
                    // Z_PK is the table's INTEGER PRIMARY KEY, from 1; anything else is damage.
                    failure = StoreError.corrupt(detail: "\(path): \(hierarchy.table) has a row whose Z_PK is \(row[0].described), not a key from 1 to \(Self.largestKey)")
                    return
                }
                guard case .integer(let number) = row[1], let entity = schema.entitiesByNumber[number], entity.hierarchy === hierarchy else {
                    failure = StoreError.corrupt(detail: "\(path): \(hierarchy.table) row Z_PK \(key) has Z_ENT \(row[1]), which is no entity of that table")
                    return
                }
                guard !entity.entity.isAbstract else {
                    failure = StoreError.corrupt(detail: "\(path): \(hierarchy.table) row Z_PK \(key) is of the abstract entity '\(entity.name)'")
                    return
                }
                var version: Int64 = 1
                if case .integer(let value) = row[2], value > 0 {
                    guard value <= Self.largestKey else {
                        failure = StoreError.corrupt(detail: "\(path): \(hierarchy.table) row Z_PK \(key) has Z_OPT \(value), beyond \(Self.largestKey)")
                        return
                    }
                    version = value
                }
                let id = StoreObjectID(entity: entity.idEntity, primaryKey: key)
                var slots: [StoreValue?] = .emptySlots(entity.layout.count)
                for attribute in entity.attributes {
                    guard let index = position[attribute.column] else { continue }
                    let stored = row[index]
                    guard let value = AppleSQLiteValueCoding.decode(
                        stored, as: attribute.type, externalStorage: attribute.externalStorage,
                        externalData: { name in FileManager.default.contents(atPath: externalFolder + "/" + name) })
                    else {
                        failure = StoreError.corrupt(detail: "\(path): \(hierarchy.table) row Z_PK \(key) column \(attribute.column) holds \(stored.described), which is not a valid \(attribute.type.xcodeName) for '\(entity.name).\(attribute.name)'")
                        return
                    }
                    slots[attribute.slot] = value
                }
                for toOne in entity.toOnes {
                    slots[toOne.slot] = .null
                    guard let index = position[toOne.column], case .integer(let target) = row[index] else { continue }
                    pendingReferences.append((id, toOne.slot, toOne.destination.table, target, entity.entity.relationshipsByName[toOne.name]?.destinationEntity))
                    var order: Int64 = key
                    if let orderColumn = toOne.orderColumn, let orderIndex = position[orderColumn], case .integer(let value) = row[orderIndex] { order = value }
                    children[hierarchy.table + "." + toOne.column, default: [:]][target, default: []].append((id, order))
                }
                for toMany in entity.toManys { slots[toMany.slot] = .references([]) }
                rows[id] = StoreRow(objectID: id, version: version, layout: entity.layout, slots: slots)
                keys[key] = entity.idEntity
                largest = max(largest, key)
            }
            if let failure { throw failure }
            entityOfKey[hierarchy.table] = keys
            nextKeys[hierarchy.rootNumber] = max(nextKeys[hierarchy.rootNumber] ?? 1, largest + 1)
        }

        for (id, slot, table, key, destination) in pendingReferences {
            // A key that names no row (left by a batch delete) reads as no destination.
            guard let number = entityOfKey[table]?[key] else { continue }
            let name = number.name
            if let destination, let target = model.entitiesByName[name], !target.isKindOf(entity: destination) {
                throw StoreError.corrupt(detail: "\(path): \(id.entityName) Z_PK \(id.primaryKey) refers to \(name) \(key) in \(table), which is no \(destination.name ?? "")")
            }
            rows[id]?.slots[slot] = .reference(StoreObjectID(entity: number, primaryKey: key))
        }

        var joined: [String: [Int64: [(StoreObjectID, Int64)]]] = [:]
        // Join rows name only the key; the entity is looked up when the references are built.
        let unnamed = EntityNumber("")
        for table in schema.joinTables {
            let columns = table.columns.map(\.column) + table.columns.compactMap(\.orderColumn)
            try connection.query("SELECT \(columns.joined(separator: ", ")) FROM \(table.name)") { (row) throws(SQLiteError) in
                var values: [String: SQLiteValue] = [:]
                for (index, column) in columns.enumerated() { values[column] = row[index] }
                for (own, other) in [(0, 1), (1, 0)] {
                    guard case .integer(let source)? = values[table.columns[own].column],
                          case .integer(let target)? = values[table.columns[other].column] else { continue }
                    var order = target
                    if let orderColumn = table.columns[other].orderColumn, case .integer(let value)? = values[orderColumn] { order = value }
                    joined[table.name + "." + table.columns[own].column, default: [:]][source, default: []].append(
                        (StoreObjectID(entity: unnamed, primaryKey: target), order))
                }
            }
        }

        for entity in schema.entities.values {
            for toMany in entity.toManys {
                for (key, number) in entityOfKey[entity.hierarchy.table] ?? [:] where number == entity.idEntity {
                    let id = StoreObjectID(entity: number, primaryKey: key)
                    var targets: [(StoreObjectID, Int64)]
                    switch toMany.storage {
                    case .inverseColumn(let destination, let column, _):
                        targets = children[destination + "." + column]?[key] ?? []
                    case .joinTable(let table, let ownColumn, _, _):
                        let destinationTable = schema.entities[entity.entity.relationshipsByName[toMany.name]?.destinationEntity?.name ?? ""]?.hierarchy.table ?? ""
                        targets = (joined[table.name + "." + ownColumn]?[key] ?? []).compactMap { target, order in
                            guard let number = entityOfKey[destinationTable]?[target.primaryKey] else { return nil }
                            return (StoreObjectID(entity: number, primaryKey: target.primaryKey), order)
                        }
                    }
                    targets.sort { ($0.1, $0.0.primaryKey) < ($1.1, $1.0.primaryKey) }
                    rows[id]?.slots[toMany.slot] = .references(targets.map(\.0))
                }
            }
        }

        var table = RowTable(entities: model.entitiesByName, keyScope: .perEntity)
        do {
            try table.load(Array(rows.values))
        } catch {
            throw StoreError.corrupt(detail: "\(path): \(error)")
        }
        state.table = table
        state.entityOfKey = entityOfKey
        state.nextKeys = nextKeys
        try loadMetadata(&state)
        state.dataVersion = version
    }

    private func loadMetadata(_ state: inout State) throws {
        let metadata = try Self.readMetadata(connection, path)
        // §7: the hashes recorded must be the model's (Apple's algorithm, or ours).
        if let recorded = metadata[Self.hashesKey] as? [String: Any] {
            var differing: [String] = []
            for entity in model.entities {
                guard let name = entity.name else { continue }
                if !((recorded[name] as? Data).map(entity.matchesVersionHash) ?? false) { differing.append(name) }
            }
            for name in recorded.keys where model.entitiesByName[name] == nil { differing.append(name) }
            if !differing.isEmpty {
                throw StoreError.io(detail: "the SQLite store at \(path) was saved with another model version (it needs migration): the version hashes of \(differing.sorted().joined(separator: ", ")) differ")
            }
        }
        state.metadata = metadata
    }

    /// `Z_METADATA` as the file holds it, with `NSStoreUUID` from `Z_UUID` and `NSStoreType` (§3).
    private static func readMetadata(_ connection: SQLiteConnection, _ path: String) throws -> StoreMetadata {
        var uuid = ""
        var plist = Data()
        try connection.query("SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = ?", [.integer(metadataVersion)]) { (row) throws(SQLiteError) in
            if case .text(let text) = row[0] { uuid = text }
            if case .blob(let data) = row[1] { plist = data }
        }
        var values: [String: Any] = [:]
        if !plist.isEmpty {
            let decoded: Any
            do { decoded = try PropertyListBytes.decode(plist) } catch {
                throw StoreError.corrupt(detail: "\(path): Z_METADATA.Z_PLIST: \(error)")
            }
            guard let dictionary = decoded as? [String: Any] else {
                throw StoreError.corrupt(detail: "\(path): Z_METADATA.Z_PLIST is not a dictionary")
            }
            values = dictionary
        }
        values[uuidKey] = uuid
        values[typeKey] = storeTypeName
        return StoreMetadata(values)
    }

    private func currentDataVersion() throws(SQLiteError) -> Int64 {
        if case .integer(let version) = try connection.pragma("data_version") { return version }
        return 0
    }

    /// Reloads when another connection committed since this one last looked (§8).
    private func refreshIfChanged(_ state: inout State) throws(StoreError) {
        do {
            if try currentDataVersion() != state.dataVersion { try reload(&state) }
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw Self.storeError(error, path)
        } catch {
            throw .io(detail: "\(path): \(error)")
        }
    }

    /// The folder of external binary data beside the store (§1, §5).
    static func externalDataFolder(of path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let name = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT/_EXTERNAL_DATA").path
    }

    static func storeError(_ error: Error, _ path: String) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let error = error as? SQLiteError else { return .io(detail: "\(path): \(error)") }
        if error.isCorrupt { return .corrupt(detail: "\(path): \(error)") }
        if error.isFull { return .io(detail: "\(path): the disk is full (\(error)); nothing of this change was saved") }
        if error.isBusy { return .io(detail: "\(path): the store is locked by another connection (\(error))") }
        if error.isConstraint {
            return .io(detail: "\(path): a UNIQUE index of the file refused the save (\(error)); nothing of it was saved")
        }
        return .io(detail: "\(path): \(error)")
    }

    // MARK: Running under the lock

    private func withState<T>(refreshing: Bool = true, _ body: (inout State) throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        guard !state.isClosed else { throw .closed }
        if let poisoned = state.poisoned { throw poisoned }
        if refreshing { try refreshIfChanged(&state) }
        return try body(&state)
    }

    /// Runs one writer in a transaction: `change` makes the new table from a copy, `write`
    /// writes it, and the copy replaces the state only when the transaction committed.
    private func change<T>(
        _ change: (inout RowTable, inout StoreMetadata) throws(StoreError) -> T,
        write: (RowTable, RowTable, T) throws -> Void
    ) throws(StoreError) -> T {
        guard !options.readOnly else { throw .io(detail: "the SQLite store at \(path) is read-only") }
        return try withState(refreshing: false) { (state) throws(StoreError) -> T in
            do {
                // Take the write lock first: nobody commits between the refresh and our commit.
                try connection.execute("BEGIN IMMEDIATE")
            } catch {
                throw Self.storeError(error, path)
            }
            do {
                try refreshIfChanged(&state)
                var table = state.table
                var metadata = state.metadata
                let result = try change(&table, &metadata)
                try write(state.table, table, result)
                if !Self.sameMetadata(metadata, state.metadata) {
                    // Metadata without a UUID keeps the store's: a new one would orphan every object URI.
                    let uuid = (metadata[Self.uuidKey] as? String) ?? (state.metadata[Self.uuidKey] as? String) ?? UUID().uuidString
                    try Self.writeMetadata(connection, model: model, uuid: uuid, values: metadata.values)
                    metadata = try Self.readMetadata(connection, path)
                }
                try connection.execute("COMMIT")
                state.table = table
                state.metadata = metadata
                return result
            } catch {
                throw rollBack(after: error, &state)
            }
        }
    }

    /// Ends a failed write transaction and says why it failed. An I/O error (a failed write or
    /// sync: what the kernel kept is unknown) or a rollback that left the transaction open makes
    /// the handle refuse every later call (§8).
    private func rollBack(after error: Error, _ state: inout State) -> StoreError {
        let failure = Self.storeError(error, path)
        if !connection.isAutocommit { try? connection.execute("ROLLBACK") }
        if !connection.isAutocommit || (error as? SQLiteError)?.isIO == true {
            state.poisoned = .io(detail: "\(failure); the SQLite store at \(path) must be reopened")
        }
        return failure
    }

    private static func sameMetadata(_ a: StoreMetadata, _ b: StoreMetadata) -> Bool {
        NSDictionary(dictionary: a.values).isEqual(to: b.values)
    }

    // MARK: Writing rows (§4–§6)

    private func write(from old: RowTable, to new: RowTable, changed: Set<StoreObjectID>, deleted: [StoreObjectID]) throws {
        var statements: [String: SQLiteStatement] = [:]
        func statement(_ sql: String) throws -> SQLiteStatement {
            if let known = statements[sql] { return known }
            let made = try connection.prepare(sql)
            statements[sql] = made
            return made
        }
        var touched: Set<StoreObjectID> = Set(deleted)
        // Updated rows are deleted and inserted again rather than REPLACEd: REPLACE would also
        // delete, silently, any other row a UNIQUE index of the file says they clash with; a
        // plain INSERT fails instead and the whole save rolls back. Deleting every updated row
        // first lets a save swap unique values between objects.
        for id in deleted + changed.filter({ old.rows[$0] != nil }).sorted() {
            guard let entity = schema.entities[id.entityName] else { continue }
            try statement("DELETE FROM \(entity.hierarchy.table) WHERE Z_PK = ?").run([.integer(id.primaryKey)])
        }
        var largest: [Int64: Int64] = [:]
        for id in changed.sorted() {
            guard let stored = new.rows[id], let entity = schema.entities[id.entityName] else { continue }
            // Rows of a merge or a batch update may come in another layout than the entity's.
            let row = stored.layout === entity.layout ? stored : stored.relaid(as: entity.layout)
            touched.insert(id)
            let hierarchy = entity.hierarchy
            var values: [String: SQLiteValue] = [:]
            for attribute in entity.attributes {
                let value = row[slot: attribute.slot]
                guard let encoded = AppleSQLiteValueCoding.encode(value, as: attribute.type, externalStorage: attribute.externalStorage) else {
                    throw StoreError.io(detail: "\(id).\(attribute.name): \(value) cannot be stored as a \(attribute.type.xcodeName)")
                }
                values[attribute.column] = encoded
            }
            for toOne in entity.toOnes {
                guard case .reference(let target) = row[slot: toOne.slot] else { continue }
                values[toOne.column] = .integer(target.primaryKey)
                if let entityColumn = hierarchy.entityColumns[toOne.column], let targetEntity = schema.entities[target.entityName] {
                    values[entityColumn] = .integer(targetEntity.number)
                }
                if let orderColumn = toOne.orderColumn, let inverse = toOne.inverseName,
                   case .references(let siblings) = new.rows[target]?[inverse] ?? .null,
                   let index = siblings.firstIndex(of: id) {
                    values[orderColumn] = .integer(Int64(index + 1) * Self.orderKeyStep)
                }
            }
            let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + hierarchy.columns.map(\.name) + hierarchy.entityColumns.values.sorted()
            let sql = "INSERT INTO \(hierarchy.table) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
            var bound: [SQLiteValue] = [.integer(id.primaryKey), .integer(entity.number), .integer(row.version)]
            for column in columns.dropFirst(3) { bound.append(values[column] ?? .null) }
            try statement(sql).run(bound)
            if old.rows[id] == nil { largest[hierarchy.rootNumber] = max(largest[hierarchy.rootNumber] ?? 0, id.primaryKey) }

            // Destinations of an ordered one-to-many keep their order keys in their own rows.
            for toMany in entity.toManys where toMany.isOrdered {
                guard case .inverseColumn(let destination, _, let orderColumn?) = toMany.storage,
                      case .references(let targets) = row[slot: toMany.slot] else { continue }
                for (index, target) in targets.enumerated() where !changed.contains(target) {
                    try statement("UPDATE \(destination) SET \(orderColumn) = ? WHERE Z_PK = ?").run(
                        [.integer(Int64(index + 1) * Self.orderKeyStep), .integer(target.primaryKey)])
                }
            }
        }
        for (root, key) in largest {
            try statement("UPDATE Z_PRIMARYKEY SET Z_MAX = max(coalesce(Z_MAX, 0), ?) WHERE Z_ENT = ?").run([.integer(key), .integer(root)])
        }
        try writeJoinTables(new, touched: touched, statement: statement)
    }

    /// Replaces the join-table entries of every touched object (§6).
    private func writeJoinTables(_ table: RowTable, touched: Set<StoreObjectID>, statement: (String) throws -> SQLiteStatement) throws {
        for join in schema.joinTables {
            var pairs: [Int64: [Int64: (Int64?, Int64?)]] = [:]  // first-column key → second-column key → orders
            var cleared: [(column: String, key: Int64)] = []
            for id in touched {
                guard let entity = schema.entities[id.entityName] else { continue }
                for toMany in entity.toManys {
                    guard case .joinTable(let joinTable, let ownColumn, let otherColumn, _) = toMany.storage, joinTable === join else { continue }
                    cleared.append((ownColumn, id.primaryKey))
                    guard let row = table.rows[id], case .references(let targets) = row[toMany.name] else { continue }
                    let ownFirst = join.columns.first?.column == ownColumn
                    for (index, target) in targets.enumerated() {
                        let order = toMany.isOrdered ? Int64(index + 1) * Self.orderKeyStep : nil
                        // The other side's order of this object, when that side is ordered.
                        var otherOrder: Int64?
                        if let targetEntity = schema.entities[target.entityName],
                           let inverse = targetEntity.toManys.first(where: {
                               if case .joinTable(let t, let own, _, _) = $0.storage { return t === join && own == otherColumn } else { return false }
                           }), inverse.isOrdered,
                           case .references(let back) = table.rows[target]?[inverse.name] ?? .null,
                           let position = back.firstIndex(of: id) {
                            otherOrder = Int64(position + 1) * Self.orderKeyStep
                        }
                        if ownFirst {
                            pairs[id.primaryKey, default: [:]][target.primaryKey] = (otherOrder, order)
                        } else {
                            pairs[target.primaryKey, default: [:]][id.primaryKey] = (order, otherOrder)
                        }
                    }
                }
            }
            for (column, key) in cleared {
                try statement("DELETE FROM \(join.name) WHERE \(column) = ?").run([.integer(key)])
            }
            guard join.columns.count == 2 else { continue }
            let first = join.columns[0], second = join.columns[1]
            var columns = [first.column, second.column]
            if let order = first.orderColumn { columns.append(order) }
            if let order = second.orderColumn { columns.append(order) }
            let sql = "INSERT OR REPLACE INTO \(join.name) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
            for (a, targets) in pairs {
                for (b, orders) in targets {
                    var values: [SQLiteValue] = [.integer(a), .integer(b)]
                    if first.orderColumn != nil { values.append(orders.0.map(SQLiteValue.integer) ?? .null) }
                    if second.orderColumn != nil { values.append(orders.1.map(SQLiteValue.integer) ?? .null) }
                    try statement(sql).run(values)
                }
            }
        }
    }

    // MARK: PersistentStoreEngine

    public func metadata() throws(StoreError) -> StoreMetadata {
        try withState { $0.metadata }
    }

    /// Replaces the metadata and writes it at once (the version hashes in the file stay Apple's).
    public func setMetadata(_ metadata: StoreMetadata) throws(StoreError) {
        try change({ (_, stored) throws(StoreError) in stored = metadata }, write: { _, _, _ in })
    }

    public func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? {
        try withState { $0.table.rows[objectID] }
    }

    public func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] {
        try withState { state in objectIDs.compactMap { state.table.rows[$0] } }
    }

    /// Keys are counted per entity hierarchy (one table) and reserved in `Z_PRIMARYKEY` at once,
    /// so another process never hands out the same ones (§3).
    public func newPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64] {
        guard let entity = schema.entities[entityName] else { throw .io(detail: "the entity '\(entityName)' is not in the SQLite store at \(path)") }
        guard count > 0 else { return [] }
        let root = entity.hierarchy.rootNumber
        let wanted = Int64(clamping: count)
        /// The first of `wanted` keys after `last`, or nil when they would pass ``largestKey``.
        func first(after last: Int64) -> Int64? {
            let first = max(last, 0) + 1
            return first <= Self.largestKey - wanted + 1 ? first : nil
        }
        if options.readOnly {
            return try withState { (state) throws(StoreError) -> [Int64] in
                guard let start = first(after: (state.nextKeys[root] ?? 1) - 1) else { throw .io(detail: "the SQLite store at \(path) has no keys left for \(entityName)") }
                state.nextKeys[root] = start + wanted
                return (0..<wanted).map { start + $0 }
            }
        }
        return try withState(refreshing: false) { (state) throws(StoreError) -> [Int64] in
            do {
                try connection.execute("BEGIN IMMEDIATE")
                var stored: Int64 = 0
                try connection.query("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(root)]) { (row) throws(SQLiteError) in
                    if case .integer(let value) = row[0] { stored = value }
                }
                guard let start = first(after: max(stored, (state.nextKeys[root] ?? 1) - 1)) else {
                    throw StoreError.io(detail: "the SQLite store at \(path) has no keys left for \(entityName) (Z_MAX \(stored))")
                }
                try connection.run("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", [.integer(start + wanted - 1), .integer(root)])
                try connection.execute("COMMIT")
                // Not stamped as seen: SQLite never counts this connection's own commits in
                // data_version, and any other commit since must still be reloaded.
                state.nextKeys[root] = start + wanted
                return (0..<wanted).map { start + $0 }
            } catch {
                throw rollBack(after: error, &state)
            }
        }
    }

    /// Runs a fetch: its predicate translated to SQL picks the candidate rows (§10), the
    /// reference evaluator re-checks them where the translation is a superset, then sorts and
    /// pages them. A predicate with nothing SQL can say is evaluated over the loaded rows.
    public func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        // The refresh and the SQL that picks candidates read one snapshot: no commit between them.
        let (snapshot, selected) = try withState(refreshing: false) { (state) throws(StoreError) -> (RowTable, (rows: [StoreRow], exact: Bool)?) in
            do { try connection.execute("BEGIN") } catch { throw Self.storeError(error, path) }
            do {
                try refreshIfChanged(&state)
                let result = (state.table, try self.candidates(for: request, in: state.table))
                try connection.execute("COMMIT")
                return result
            } catch {
                throw rollBack(after: error, &state)
            }
        }
        var matches: [StoreRow]
        if let candidates = selected {
            var remaining = request
            if candidates.exact { remaining.predicate = nil }
            let rows = snapshot.rows
            matches = StoreQuery.run(remaining, candidates: candidates.rows, resolve: { rows[$0] }, entities: model.entitiesByName)
        } else {
            matches = snapshot.matching(request)
        }
        switch request.resultType {
        case .count: return .count(matches.count)
        case .objectIDs: return .objectIDs(matches.map(\.objectID))
        case .rows: return .rows(matches)
        }
    }

    /// Whether SQL alone decides `predicate` on `entity`'s rows, with no re-check (§10).
    package func translatesExactly(_ predicate: CoreDataPredicate.NSPredicate, for entity: NSEntityDescription) -> Bool {
        guard let described = entity.name.flatMap({ schema.entities[$0] }) else { return false }
        return SQLFetchTranslator(schema: schema).condition(predicate, entity: described).isExact
    }

    /// The rows SQL selects for the request's predicate, or `nil` when the translation says
    /// nothing (it would select every row). Caller holds the lock.
    private func candidates(for request: StoreFetchRequest, in table: RowTable) throws(StoreError) -> (rows: [StoreRow], exact: Bool)? {
        guard options.translatesFetchesToSQL, let predicate = request.predicate,
              let entity = request.entity.name.flatMap({ schema.entities[$0] }) else { return nil }
        let condition = SQLFetchTranslator(schema: schema).condition(predicate, entity: entity)
        guard !condition.selectsAll else { return nil }
        let numbers = request.entityNames.compactMap { schema.entities[$0]?.number }
        guard !numbers.isEmpty else { return ([], true) }
        let sql = "SELECT Z_PK, Z_ENT FROM \(entity.hierarchy.table) WHERE Z_ENT IN (\(numbers.map(String.init).joined(separator: ", "))) AND \(condition.sql)"
        var rows: [StoreRow] = []
        do {
            try connection.query(sql, condition.values.map(SQLiteValue.init)) { (row) throws(SQLiteError) in
                guard case .integer(let key) = row[0], case .integer(let number) = row[1],
                      let entity = schema.entitiesByNumber[number]?.idEntity,
                      let found = table.rows[StoreObjectID(entity: entity, primaryKey: key)] else { return }
                rows.append(found)
            }
        } catch {
            throw Self.storeError(error, path)
        }
        return (rows, condition.isExact)
    }

    public func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        if changes.isEmpty { return [:] }
        return try change({ (table, _) throws(StoreError) in try table.apply(changes) }, write: { old, new, _ in
            var changed = Set(changes.inserted.map(\.objectID))
            changed.formUnion(changes.updated.map(\.objectID))
            try self.write(from: old, to: new, changed: changed, deleted: changes.deleted.map(\.objectID))
        })
    }

    public func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] {
        try change({ (table, _) throws(StoreError) in try table.batchDelete(request) }, write: { old, new, deleted in
            try self.write(from: old, to: new, changed: [], deleted: deleted)
        })
    }

    public func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID] {
        try change({ (table, _) throws(StoreError) in try table.batchUpdate(request, values: values) }, write: { old, new, updated in
            try self.write(from: old, to: new, changed: Set(updated), deleted: [])
        })
    }

    /// Closes the connection; every save is already on disk.
    public func close() throws(StoreError) {
        lock.lock()
        defer { lock.unlock() }
        guard !state.isClosed else { throw .closed }
        state.isClosed = true
        connection.close()
        if let poisoned = state.poisoned { throw poisoned }
    }

    /// Deletes the store's files: the database, `-wal`, `-shm`, and the external data folder.
    ///
    /// - Throws: ``StoreError/io(detail:)`` when a file cannot be removed.
    public static func destroy(path: String) throws(StoreError) {
        let manager = FileManager.default
        let support = URL(fileURLWithPath: externalDataFolder(of: path)).deletingLastPathComponent().path
        for file in [path, path + "-wal", path + "-shm", path + "-journal", support] where manager.fileExists(atPath: file) {
            do { try manager.removeItem(atPath: file) } catch { throw .io(detail: "cannot remove \(file): \(error.localizedDescription)") }
        }
    }

    /// The metadata of the store at `path`, read without a model and without changing the file:
    /// `Z_METADATA` as the file holds it (Apple's version hashes included).
    ///
    /// - Throws: ``StoreError/corrupt(detail:)`` when the file is not a Core Data SQLite store.
    public static func metadata(atPath path: String) throws(StoreError) -> StoreMetadata {
        guard isSQLiteFile(atPath: path) else { throw .corrupt(detail: "\(path) is not an SQLite database") }
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true, create: false)
            defer { connection.close() }
            guard try connection.tableExists("Z_METADATA") else {
                throw StoreError.corrupt(detail: "\(path) is an SQLite database but not a Core Data store (it has no Z_METADATA table)")
            }
            return try readMetadata(connection, path)
        } catch {
            throw storeError(error, path)
        }
    }
}

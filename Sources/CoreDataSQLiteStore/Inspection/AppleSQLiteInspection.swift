import CoreDataModel
import CoreDataSQL
import CoreDataStorage
import Foundation

/// What an Apple SQLite store holds, read from its own tables without a model
/// (`Formats/apple-sqlite-store.md` §3, §4): the entities of `Z_PRIMARYKEY`, the objects of each
/// (counted by `Z_ENT` in its hierarchy's table), the journal mode and the database's size. For
/// tools (`coredata info`); the store's metadata is ``AppleSQLiteStore/metadata(atPath:)``.
///
/// The file is opened read-only and nothing is written. A store in WAL mode is read with its
/// `-wal` file, as every SQLite reader does.
///
/// Threading: a value; safe from any thread. Complexity: O(tables) queries, each answered by
/// SQLite in O(rows of the table).
public struct AppleSQLiteInspection: Sendable {
    /// One `Z_PRIMARYKEY` row (§3).
    public struct Entity: Sendable, Equatable {
        /// `Z_ENT`: the entity's number.
        public var number: Int64
        /// `Z_NAME`: the entity's name (Apple keeps the old name after a lightweight migration).
        public var name: String
        /// `Z_SUPER`: the superentity's number, 0 for a root entity.
        public var superNumber: Int64
        /// `Z_MAX`: the largest primary key handed out in the hierarchy (the root's row counts).
        public var maxKey: Int64
        /// The table the entity's objects live in: `Z` + the upper-cased root entity name (§4).
        public var table: String
        /// Rows of ``table`` whose `Z_ENT` is this entity's number (not its subentities').
        public var objects: Int
    }

    /// The table of one root entity (§4).
    public struct Table: Sendable, Equatable {
        public var name: String
        /// The root entity's name.
        public var rootEntity: String
        /// Every row of the table, whatever its `Z_ENT`.
        public var objects: Int
        /// The largest `Z_PK`, `nil` for an empty table.
        public var largestKey: Int64?
    }

    /// The tables every Core Data SQLite store has (§3).
    public static let bookkeepingTables = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]

    /// The database file.
    public let path: String
    /// SQLite's journal mode (`wal` for Apple's stores since iOS 7 / OS X 10.9, else `delete`).
    public let journalMode: String
    /// The database page size in bytes.
    public let pageSize: Int
    /// The number of pages of the database (with the `-wal` file's committed pages).
    public let pageCount: Int
    /// Every table of the database, sorted by name.
    public let tableNames: [String]
    /// The entities of `Z_PRIMARYKEY`, by number; empty when the table is missing.
    public let entities: [Entity]
    /// The tables of the root entities that exist in the file, in root-entity order.
    public let tables: [Table]
    /// The bytes of Apple's cached model (`Z_MODELCACHE.Z_CONTENT`); `nil` when the table is
    /// missing or empty.
    public let modelCacheBytes: Int?

    /// The bookkeeping tables (§3) the file lacks.
    public var missingBookkeepingTables: [String] {
        Self.bookkeepingTables.filter { !tableNames.contains($0) }
    }

    /// Whether the file looks like a Core Data store at all: it has `Z_PRIMARYKEY` or `Z_METADATA`.
    public var isCoreDataStore: Bool {
        tableNames.contains("Z_PRIMARYKEY") || tableNames.contains("Z_METADATA")
    }

    /// Objects per entity name, counted by `Z_ENT`.
    public var objectsByEntity: [String: Int] {
        var counts: [String: Int] = [:]
        for entity in entities { counts[entity.name, default: 0] += entity.objects }
        return counts
    }

    /// Reads the store at `path` read-only.
    ///
    /// - Throws: ``StoreError/corrupt(detail:)`` when the file is not an SQLite database or SQLite
    ///   finds it damaged, or `Z_PRIMARYKEY` or an entity table cannot be read as Core Data writes
    ///   them; ``StoreError/io(detail:)`` when it cannot be opened or read.
    public init(path: String) throws(StoreError) {
        self.path = path
        guard AppleSQLiteStore.isSQLiteFile(atPath: path) else {
            throw .corrupt(detail: "\(path) is not an SQLite database (its first 16 bytes are not \"SQLite format 3\")")
        }
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true, create: false)
            defer { connection.close() }
            try connection.setBusyTimeout(AppleSQLiteStore.defaultLockTimeout)
            // One read transaction: every count comes from the same committed state.
            try connection.execute("BEGIN")
            defer { try? connection.execute("COMMIT") }
            var mode = ""
            if case .text(let text) = try connection.pragma("journal_mode") { mode = text.lowercased() }
            journalMode = mode
            var size = 0
            if case .integer(let value) = try connection.pragma("page_size") { size = Int(value) }
            pageSize = size
            var count = 0
            if case .integer(let value) = try connection.pragma("page_count") { count = Int(value) }
            pageCount = count
            let names = try Self.tableNames(connection)
            tableNames = names

            var records: [Entity] = []
            if names.contains("Z_PRIMARYKEY") {
                for row in try Self.primaryKeyRows(connection) {
                    guard case .integer(let number) = row.number else { continue }
                    guard case .text(let name) = row.name else {
                        throw StoreError.corrupt(detail: "\(path): Z_PRIMARYKEY row Z_ENT \(number) has Z_NAME \(row.name.described), not an entity name")
                    }
                    records.append(Entity(number: number, name: name, superNumber: Self.integer(row.superNumber), maxKey: Self.integer(row.maxKey), table: "", objects: 0))
                }
            }
            let roots = Self.roots(of: records)
            var tables: [Table] = []
            var objects: [Int64: Int] = [:]
            for root in records where roots[root.number] == root.number {
                let table = Self.tableName(ofRoot: root.name, in: names)
                guard names.contains(table) else { continue }
                var total = 0
                try connection.query("SELECT Z_ENT, count(*) FROM \(SQLiteConnection.quote(table)) GROUP BY Z_ENT") { (row) throws(SQLiteError) in
                    guard case .integer(let rows) = row[1] else { return }
                    total += Int(rows)
                    if case .integer(let number) = row[0] { objects[number, default: 0] += Int(rows) }
                }
                var largest: Int64?
                try connection.query("SELECT max(Z_PK) FROM \(SQLiteConnection.quote(table))") { (row) throws(SQLiteError) in
                    if case .integer(let key) = row[0] { largest = key }
                }
                tables.append(Table(name: table, rootEntity: root.name, objects: total, largestKey: largest))
            }
            let byNumber = Dictionary(records.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
            for index in records.indices {
                let rootName = roots[records[index].number].flatMap { byNumber[$0]?.name } ?? records[index].name
                records[index].table = Self.tableName(ofRoot: rootName, in: names)
                // Rows count for their entity only in the table of its own hierarchy.
                if tables.contains(where: { $0.name == records[index].table }) { records[index].objects = objects[records[index].number] ?? 0 }
            }
            entities = records
            self.tables = tables

            var cache: Int?
            if names.contains("Z_MODELCACHE") {
                try connection.query("SELECT sum(length(Z_CONTENT)) FROM Z_MODELCACHE") { (row) throws(SQLiteError) in
                    if case .integer(let bytes) = row[0] { cache = Int(bytes) }
                }
            }
            modelCacheBytes = cache
        } catch {
            throw AppleSQLiteStore.storeError(error, path)
        }
    }

    // MARK: Reading helpers

    /// A `Z_PRIMARYKEY` row as the file holds it.
    struct PrimaryKeyRow {
        var number: SQLiteValue
        var name: SQLiteValue
        var superNumber: SQLiteValue
        var maxKey: SQLiteValue
    }

    static func primaryKeyRows(_ connection: SQLiteConnection) throws(SQLiteError) -> [PrimaryKeyRow] {
        var rows: [PrimaryKeyRow] = []
        try connection.query("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") { (row) throws(SQLiteError) in
            rows.append(PrimaryKeyRow(number: row[0], name: row[1], superNumber: row[2], maxKey: row[3]))
        }
        return rows
    }

    static func tableNames(_ connection: SQLiteConnection) throws(SQLiteError) -> [String] {
        var names: [String] = []
        try connection.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") { (row) throws(SQLiteError) in
            if case .text(let name) = row[0] { names.append(name) }
        }
        return names
    }

    /// The table of a hierarchy whose root entity is `name`: `Z` + the upper-cased name (§4); Apple's
    /// own entities (persistent history, CloudKit mirroring) have `A` instead, which is taken when
    /// only that table exists.
    static func tableName(ofRoot name: String, in tables: [String]) -> String {
        let table = "Z" + name.uppercased()
        let apple = "A" + name.uppercased()
        return !tables.contains(table) && tables.contains(apple) ? apple : table
    }

    /// Each entity's root entity number, following `Z_SUPER`; an entity whose chain breaks (an
    /// unknown superentity or a cycle) is left out.
    static func roots(of entities: [Entity]) -> [Int64: Int64] {
        let superOf = Dictionary(entities.map { ($0.number, $0.superNumber) }, uniquingKeysWith: { first, _ in first })
        var roots: [Int64: Int64] = [:]
        for entity in entities {
            var current = entity.number
            var seen: Set<Int64> = [current]
            while let parent = superOf[current], parent != 0 {
                guard superOf[parent] != nil, seen.insert(parent).inserted else { current = -1; break }
                current = parent
            }
            if current >= 0 { roots[entity.number] = current }
        }
        return roots
    }

    static func integer(_ value: SQLiteValue) -> Int64 {
        if case .integer(let number) = value { return number }
        return 0
    }

}

/// What ``AppleSQLiteInspection/verify(path:model:)`` found: every damaged location, notes, and the
/// objects per entity.
public struct AppleSQLiteVerification: Sendable {
    /// One damaged location: `Z_PRIMARYKEY Z_ENT 3`, `ZCAR Z_PK 7`, `ZCAR Z_PK 7 ZMAKER`, `database`, …
    public struct Issue: Sendable, Equatable {
        public var location: String
        public var problem: String
        public init(location: String, problem: String) {
            self.location = location
            self.problem = problem
        }
    }

    /// Every damaged location, in the order found.
    public var issues: [Issue] = []
    /// What is worth knowing but is no damage (references to rows that are gone, what was not checked).
    public var notes: [String] = []
    /// Objects per entity name, counted by `Z_ENT`.
    public var objectsByEntity: [String: Int] = [:]
    /// With a model: why the model cannot read the store (its entities or columns differ) —
    /// a mismatch, not damage. `nil` when it can, or without a model.
    public var modelMismatch: String?
    /// Another connection kept its write lock longer than ``AppleSQLiteStore/defaultLockTimeout``:
    /// nothing was checked.
    public var isLocked = false

    public var isIntact: Bool { issues.isEmpty }

    public init() {}
}

extension AppleSQLiteInspection {
    /// Checks the store at `path` without changing it, listing every damaged location:
    /// SQLite's `PRAGMA integrity_check`; the bookkeeping tables (§3) and `Z_METADATA`'s one row
    /// (a UUID, a property list dictionary); `Z_PRIMARYKEY` (names, superentities that exist,
    /// no cycles); every root entity's table, every row's `Z_ENT` naming an entity of that table,
    /// and `Z_MAX` at least the table's largest `Z_PK` (§3, §4).
    ///
    /// With `model`, the tables must be the model's (entities matched by name or renaming
    /// identifier, every column present; otherwise ``AppleSQLiteVerification/modelMismatch``),
    /// and then every value is checked against its attribute's type as the store reads it (§5),
    /// every to-one column (§4) must hold a key, and a key whose row is of an entity the
    /// relationship cannot point to is damage. A key that names no row (as a batch delete leaves
    /// behind; the store reads it as no destination) is a note, in to-one columns and join tables.
    ///
    /// Never throws: a file SQLite cannot read is one issue.
    public static func verify(path: String, model: NSManagedObjectModel? = nil) -> AppleSQLiteVerification {
        var report = AppleSQLiteVerification()
        func issue(_ location: String, _ problem: String) { report.issues.append(AppleSQLiteVerification.Issue(location: location, problem: problem)) }
        guard AppleSQLiteStore.isSQLiteFile(atPath: path) else {
            issue("file", "not an SQLite database (its first 16 bytes are not \"SQLite format 3\")")
            return report
        }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, readOnly: true, create: false)
        } catch {
            issue("file", "SQLite cannot open it: \(error.message)")
            return report
        }
        defer { connection.close() }

        // SQLite's own check of every page, index and row of the database. Everything is read in
        // one read transaction, so a save of another connection cannot fall between two checks
        // (in WAL mode it goes on; in rollback mode it waits until verify is done).
        do {
            try connection.setBusyTimeout(AppleSQLiteStore.defaultLockTimeout)
            try connection.execute("BEGIN")
            var problems: [String] = []
            try connection.query("PRAGMA integrity_check") { (row) throws(SQLiteError) in
                if case .text(let text) = row[0], text != "ok" { problems.append(text) }
            }
            for problem in problems { issue("database", problem) }
        } catch {
            if error.isBusy {
                report.isLocked = true
            } else {
                issue("database", "SQLite cannot read it: \(error.message)")
            }
            return report
        }
        defer { try? connection.execute("COMMIT") }

        let names: [String]
        do { names = try tableNames(connection) } catch {
            issue("database", "SQLite cannot list its tables: \(error.message)")
            return report
        }
        for table in bookkeepingTables where !names.contains(table) {
            issue(table, "the table is missing (every Core Data SQLite store has it)")
        }
        if names.contains("Z_METADATA") { checkMetadata(connection, issue: issue) }
        guard names.contains("Z_PRIMARYKEY") else { return report }

        // Z_PRIMARYKEY: one row per entity.
        var records: [Entity] = []
        do {
            var seenNames: [String: Int64] = [:]
            for row in try primaryKeyRows(connection) {
                guard case .integer(let number) = row.number else { continue }
                let location = "Z_PRIMARYKEY Z_ENT \(number)"
                guard case .text(let name) = row.name, !name.isEmpty else {
                    issue(location, "Z_NAME is \(row.name.described), not an entity name")
                    continue
                }
                if let other = seenNames[name] {
                    issue(location, "the entity name '\(name)' is entity \(other)'s too")
                    continue
                }
                seenNames[name] = number
                var superNumber: Int64 = 0
                switch row.superNumber {
                case .integer(let value): superNumber = value
                case .null: break
                default: issue(location, "Z_SUPER is \(row.superNumber.described), not an entity number")
                }
                var maxKey: Int64 = 0
                switch row.maxKey {
                case .integer(let value): maxKey = value
                case .null: break
                default: issue(location, "Z_MAX is \(row.maxKey.described), not a primary key")
                }
                records.append(Entity(number: number, name: name, superNumber: superNumber, maxKey: maxKey, table: "", objects: 0))
            }
        } catch {
            issue("Z_PRIMARYKEY", "cannot be read: \(error.message)")
            return report
        }
        let known = Set(records.map(\.number))
        for record in records where record.superNumber != 0 {
            if record.superNumber == record.number || !known.contains(record.superNumber) {
                issue("Z_PRIMARYKEY Z_ENT \(record.number)", "Z_SUPER \(record.superNumber) names no other entity of Z_PRIMARYKEY")
            }
        }
        let roots = Self.roots(of: records)
        let superOf = Dictionary(records.map { ($0.number, $0.superNumber) }, uniquingKeysWith: { first, _ in first })
        for record in records where roots[record.number] == nil && record.superNumber != record.number {
            // A chain that ends at an unknown number is reported where it breaks; one that comes
            // back to an entity is a cycle.
            var seen: Set<Int64> = [record.number]
            var current = record.number
            while let parent = superOf[current], parent != 0, superOf[parent] != nil {
                guard seen.insert(parent).inserted else {
                    issue("Z_PRIMARYKEY Z_ENT \(record.number)", "its superentities form a cycle")
                    break
                }
                current = parent
            }
        }
        let byNumber = Dictionary(records.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })

        // Every root entity's table: the fixed columns, each row's Z_ENT, Z_MAX.
        var rowEntities: [String: [Int64: Int64]] = [:]  // table → Z_PK → Z_ENT, for references
        for root in records where roots[root.number] == root.number {
            let table = tableName(ofRoot: root.name, in: names)
            let members = records.filter { roots[$0.number] == root.number }
            let memberNumbers = Set(members.map(\.number))
            guard names.contains(table) else {
                issue(table, "the table of entity \(root.number) '\(root.name)' is missing")
                continue
            }
            do {
                let columns = try connection.columns(of: table)
                let missing = ["Z_PK", "Z_ENT", "Z_OPT"].filter { columns[$0] == nil }
                guard missing.isEmpty else {
                    issue(table, "has no column \(missing.joined(separator: ", "))")
                    continue
                }
                var keys: [Int64: Int64] = [:]
                var largest: Int64?
                try connection.query("SELECT Z_PK, Z_ENT FROM \(SQLiteConnection.quote(table)) ORDER BY Z_PK") { (row) throws(SQLiteError) in
                    guard case .integer(let key) = row[0] else { return }
                    largest = max(largest ?? key, key)
                    guard case .integer(let number) = row[1], memberNumbers.contains(number) else {
                        let list = members.map { "\($0.number) \($0.name)" }.joined(separator: ", ")
                        issue("\(table) Z_PK \(key)", "Z_ENT is \(row[1].described), which is no entity of this table (\(list))")
                        return
                    }
                    keys[key] = number
                    if let name = byNumber[number]?.name { report.objectsByEntity[name, default: 0] += 1 }
                }
                rowEntities[table] = keys
                if let largest, largest > root.maxKey {
                    issue("Z_PRIMARYKEY Z_ENT \(root.number)", "Z_MAX of '\(root.name)' is \(root.maxKey), below the largest Z_PK \(largest) of \(table): new objects would reuse keys")
                }
            } catch {
                issue(table, "cannot be read: \(error.message)")
            }
        }
        for record in records where report.objectsByEntity[record.name] == nil { report.objectsByEntity[record.name] = 0 }

        guard let model else {
            report.notes.append("without a model, values and to-one references are not checked (the tables do not say which columns are relationships)")
            return report
        }
        checkAgainstModel(model, connection: connection, path: path, records: records, rowEntities: rowEntities, report: &report)
        return report
    }

    /// `Z_METADATA`: one row, `Z_VERSION` 1, a UUID and a property list dictionary (§3).
    private static func checkMetadata(_ connection: SQLiteConnection, issue: (String, String) -> Void) {
        do {
            var rows: [(SQLiteValue, SQLiteValue, SQLiteValue)] = []
            try connection.query("SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA") { (row) throws(SQLiteError) in
                rows.append((row[0], row[1], row[2]))
            }
            guard let row = rows.first(where: { $0.0 == .integer(AppleSQLiteStore.metadataVersion) }) else {
                issue("Z_METADATA", "has no row with Z_VERSION \(AppleSQLiteStore.metadataVersion) (it has \(rows.count) rows)")
                return
            }
            if case .text(let uuid) = row.1, UUID(uuidString: uuid) != nil {
            } else {
                issue("Z_METADATA", "Z_UUID is \(row.1.described), not a UUID")
            }
            switch row.2 {
            case .blob(let data) where !data.isEmpty:
                do {
                    if !(try PropertyListBytes.decode(data) is [String: Any]) {
                        issue("Z_METADATA", "Z_PLIST is a property list but not a dictionary")
                    }
                } catch {
                    issue("Z_METADATA", "Z_PLIST: \(error.message)")
                }
            case .null: break
            default: issue("Z_METADATA", "Z_PLIST is \(row.2.described), not a property list")
            }
        } catch {
            issue("Z_METADATA", "cannot be read: \(error.message)")
        }
    }

    /// The checks only a model makes possible: the layout, every value, every reference (§4–§6).
    private static func checkAgainstModel(
        _ model: NSManagedObjectModel, connection: SQLiteConnection, path: String, records: [Entity],
        rowEntities: [String: [Int64: Int64]], report: inout AppleSQLiteVerification
    ) {
        let schema: AppleSQLiteSchema
        do {
            schema = try AppleSQLiteSchema(
                model: model,
                records: records.map { AppleSQLiteSchema.EntityRecord(number: $0.number, name: $0.name, superNumber: $0.superNumber, maxKey: $0.maxKey) })
            var existing: [String: [String: String]] = [:]
            for table in try tableNames(connection) { existing[table.uppercased()] = try connection.columns(of: table) }
            let problems = schema.problems(existingColumns: existing)
            guard problems.isEmpty else {
                report.modelMismatch = problems.prefix(8).joined(separator: "; ") + (problems.count > 8 ? "; and \(problems.count - 8) more" : "")
                return
            }
        } catch let error as AppleSQLiteSchemaError {
            report.modelMismatch = error.description
            return
        } catch let error as SQLiteError {
            report.issues.append(AppleSQLiteVerification.Issue(location: "database", problem: "cannot read the tables' columns: \(error.message)"))
            return
        } catch {
            report.modelMismatch = "\(error)"
            return
        }
        func issue(_ location: String, _ problem: String) { report.issues.append(AppleSQLiteVerification.Issue(location: location, problem: problem)) }
        let externalFolder = AppleSQLiteStore.externalDataFolder(of: path)

        for hierarchy in schema.hierarchies {
            let columns = hierarchy.columns.map(\.name)
            let position = Dictionary(columns.enumerated().map { ($1, $0 + 2) }, uniquingKeysWith: { first, _ in first })
            let sql = "SELECT Z_PK, Z_ENT\(columns.isEmpty ? "" : ", " + columns.joined(separator: ", ")) FROM \(hierarchy.table)"
            do {
                try connection.query(sql) { (row) throws(SQLiteError) in
                    guard case .integer(let key) = row[0] else { return }
                    // A row of no entity of this table is reported already.
                    guard case .integer(let number) = row[1], let entity = schema.entitiesByNumber[number], entity.hierarchy === hierarchy else { return }
                    let location = "\(hierarchy.table) Z_PK \(key)"
                    if entity.entity.isAbstract {
                        issue(location, "is of the abstract entity '\(entity.name)', which has no objects")
                        return
                    }
                    for attribute in entity.attributes {
                        guard let index = position[attribute.column] else { continue }
                        let stored = row[index]
                        let decoded = AppleSQLiteValueCoding.decode(
                            stored, as: attribute.type, externalStorage: attribute.externalStorage,
                            externalData: { name in FileManager.default.contents(atPath: externalFolder + "/" + name) })
                        if decoded == nil {
                            issue("\(location) \(attribute.column)", "holds \(stored.described), which is not a valid \(attribute.type.xcodeName) for '\(entity.name).\(attribute.name)'")
                        }
                    }
                    for toOne in entity.toOnes {
                        guard let index = position[toOne.column] else { continue }
                        let stored = row[index]
                        guard case .integer(let target) = stored else {
                            if stored != .null {
                                issue("\(location) \(toOne.column)", "holds \(stored.described), not the primary key the to-one relationship '\(entity.name).\(toOne.name)' needs")
                            }
                            continue
                        }
                        guard let targetNumber = rowEntities[toOne.destination.table]?[target] else {
                            report.notes.append("\(location) \(toOne.column): '\(entity.name).\(toOne.name)' refers to \(toOne.destination.table) Z_PK \(target), which is no row (the store reads it as no destination, as a batch delete leaves it)")
                            continue
                        }
                        let destination = entity.entity.relationshipsByName[toOne.name]?.destinationEntity
                        let targetEntity = schema.entitiesByNumber[targetNumber]?.entity
                        if let destination, let targetEntity, !targetEntity.isKindOf(entity: destination) {
                            issue("\(location) \(toOne.column)", "'\(entity.name).\(toOne.name)' refers to \(toOne.destination.table) Z_PK \(target), a '\(targetEntity.name ?? "")', which is no '\(destination.name ?? "")'")
                        }
                    }
                }
            } catch {
                issue(hierarchy.table, "cannot be read: \(error.message)")
            }
        }

        // Join tables of many-to-many relationships (§6): each column holds keys of the entity its
        // name numbers.
        for join in schema.joinTables {
            let keyColumns = join.columns.map(\.column)
            do {
                try connection.query("SELECT \(keyColumns.joined(separator: ", ")) FROM \(join.name)") { (row) throws(SQLiteError) in
                    for (index, column) in keyColumns.enumerated() {
                        guard let number = Int64(column.dropFirst(2).prefix(while: \.isNumber)),
                              let table = schema.entitiesByNumber[number]?.hierarchy.table else { continue }
                        guard case .integer(let key) = row[index] else {
                            issue("\(join.name) \(column)", "holds \(row[index].described), not a primary key")
                            continue
                        }
                        if rowEntities[table]?[key] == nil {
                            report.notes.append("\(join.name) \(column): \(key) is no row of \(table) (the store leaves such an entry out)")
                        }
                    }
                }
            } catch {
                issue(join.name, "cannot be read: \(error.message)")
            }
        }
    }
}

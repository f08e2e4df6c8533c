import CoreDataModel
import CoreDataPredicate
import CoreDataSQL
import CoreDataStorage
import Foundation
import PostgresNIO

/// The PostgreSQL store (`Formats/postgresql-store.md`): the model's objects in tables of a
/// PostgreSQL schema, read and written with SQL that runs in the server.
///
/// Nothing is held in the process between calls: a fetch is a query (its predicate translated to
/// SQL, §7), a fault a read by key, a save one transaction whose updates and deletes check each
/// row's version (`Z_OPT`), so a change another app server made in between fails the save with an
/// optimistic-locking conflict that the context's merge policy resolves. Several processes on
/// one database therefore see each other's saves at their next fetch.
///
/// Threading: every method is safe from any thread and may run concurrently; each runs its SQL
/// on a pooled connection and waits for it (the store protocol is synchronous).
/// Complexity: a fetch costs one query for the rows plus one per to-many relationship of the
/// fetched entities; reading `n` objects by ID one query per table; a save one round trip per
/// changed row and relationship table.
/// Errors: ``StoreError/io(detail:)`` names the server's message and SQLSTATE and the store's URL
/// without its password; a table whose columns do not match the model is reported at open.
public final class PostgreSQLStore: PersistentStoreEngine, @unchecked Sendable {
    /// The metadata's store type (`NSStoreType`).
    public static let storeTypeName = "PostgreSQL"
    /// `Z_METADATA.Z_VERSION` (§3).
    static let metadataVersion: Int64 = 1
    /// Keys and versions stay below this (§3): counting past it is refused, so nothing overflows.
    static let largestKey: Int64 = 1 << 62
    /// Order values are written `(position + 1) × step` (§6), as Apple's SQLite store does.
    static let orderKeyStep: Int64 = 1024
    /// SQLSTATEs of a transaction PostgreSQL aborted that succeeds when run again (§8).
    static let retriedStates: Set<String> = ["40001", "40P01"]
    /// Keys reserved at once (§3).
    static let keyBlock = 100
    /// Values bound in one multi-row INSERT at most (PostgreSQL takes 65,535 parameters).
    static let insertBatchParameters = 30_000
    /// SQLSTATE of a unique index refusing a row.
    static let uniqueViolation = "23505"
    static let uuidKey = "NSStoreUUID"
    static let typeKey = "NSStoreType"

    /// Where the store is.
    public let configuration: PostgreSQLStoreConfiguration
    private let model: NSManagedObjectModel
    private let schema: SQLSchema
    private let readers: [String: PostgreSQLRowReader]
    let database: PostgreSQLDatabase
    /// Unique index name → the constraint it enforces (§4).
    private let uniqueIndexes: [String: (entity: String, names: [String])]
    private let lock = NSLock()
    private var cachedMetadata: StoreMetadata
    private var isClosed = false
    /// Keys reserved and not yet handed out, by hierarchy root: the next and the last.
    private var keyBlocks: [Int64: (next: Int64, last: Int64)] = [:]
    /// The largest key this handle reserved, by hierarchy root.
    private var reservedUpTo: [Int64: Int64] = [:]
    /// The task listening for other servers' saves, while changes are observed.
    private var listener: Task<Void, Never>?

    /// The `NOTIFY` channel of the store's saves (§9): one per schema.
    var notificationChannel: String { Self.notificationChannel(of: configuration.schema) }

    /// The channel of a schema's store.
    static func notificationChannel(of schema: String) -> String { "coredata_" + schema.lowercased() }

    /// Replaces the listening task; returns the one it replaced.
    @discardableResult
    func setListener(_ task: Task<Void, Never>?) -> Task<Void, Never>? {
        lock.withLock {
            let old = listener
            listener = task
            return old
        }
    }

    /// Tells listening servers that a save committed: delivered when the transaction commits.
    private func notifyChange(_ transaction: PostgreSQLTransaction) async throws {
        var binds = PostgresBindings()
        binds.append(notificationChannel)
        try await transaction.query("SELECT pg_notify($1, 'save')", binds)
    }

    /// Opens the store, creating its schema, tables and metadata at first open.
    ///
    /// - Throws: ``StoreError/io(detail:)`` when the server cannot be reached or refuses, or the
    ///   store's tables do not match `model` (it needs migration).
    public init(configuration: PostgreSQLStoreConfiguration, model: NSManagedObjectModel, metadata: StoreMetadata) throws(StoreError) {
        self.configuration = configuration
        self.model = model
        do {
            _ = try SQLSchema(model: model, records: [], dialect: .postgreSQL)
        } catch {
            throw .io(detail: "the model cannot be stored in PostgreSQL at \(configuration.redactedURL): \(error.description)")
        }
        let database: PostgreSQLDatabase
        do { database = try PostgreSQLDatabase(configuration: configuration) } catch { throw .io(detail: error.description) }
        self.database = database
        let opened: Opened
        do {
            // A server that does not answer fails the open after the connect timeout, not after
            // the pool's own retries.
            try database.checkReachable()
            opened = try database.bridge.run { try await Self.open(database, model: model, metadata: metadata) }
        } catch {
            database.shutDown()
            throw Self.storeError(error, configuration)
        }
        let schema: SQLSchema
        do {
            schema = try SQLSchema(model: model, records: opened.records, dialect: .postgreSQL)
        } catch {
            database.shutDown()
            throw .io(detail: "the PostgreSQL store at \(configuration.redactedURL) does not match the model: \(error.description)")
        }
        let problems = schema.problems(existingColumns: opened.columns)
        guard problems.isEmpty else {
            database.shutDown()
            throw .io(detail: "the PostgreSQL store at \(configuration.redactedURL) does not match the model (it needs migration): \(problems.prefix(8).joined(separator: "; "))")
        }
        self.schema = schema
        var readers: [String: PostgreSQLRowReader] = [:]
        for hierarchy in schema.hierarchies { readers[hierarchy.table] = PostgreSQLRowReader(hierarchy: hierarchy) }
        self.readers = readers
        uniqueIndexes = Self.uniqueIndexes(schema)
        cachedMetadata = opened.metadata
    }

    /// A store dropped without `close()` (its coordinator released) still returns its
    /// connections to the server: each store has a pool of its own.
    deinit {
        listener?.cancel()
        database.shutDown()
    }

    // MARK: Opening and creating (§1–§4)

    private struct Opened: Sendable {
        var records: [SQLSchema.EntityRecord]
        var columns: [String: [String: String]]
        var metadata: StoreMetadata
    }

    private static func open(_ database: PostgreSQLDatabase, model: NSManagedObjectModel, metadata: StoreMetadata) async throws -> Opened {
        let configuration = database.configuration
        let schemaName = configuration.schema
        return try await database.transaction { transaction in
            // Two processes opening a new store at once: the second waits and finds it made.
            var lockKey = PostgresBindings()
            lockKey.append("CoreData.\(schemaName)")
            try await transaction.query("SELECT pg_advisory_xact_lock(hashtext($1))", lockKey)
            var name = PostgresBindings()
            name.append(schemaName)
            let schemas = try await transaction.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", name)
            if schemas.isEmpty {
                guard !configuration.readOnly else { throw StoreError.io(detail: "there is no PostgreSQL store at \(configuration.redactedURL) (schema \(schemaName) does not exist)") }
                try await transaction.run("CREATE SCHEMA \(schemaName)")
            }
            try await transaction.run("SET LOCAL search_path TO \(schemaName)")
            let tables = try await transaction.query(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'z_primarykey'", name)
            if tables.isEmpty {
                guard !configuration.readOnly else { throw StoreError.io(detail: "there is no PostgreSQL store at \(configuration.redactedURL)") }
                try await create(transaction, model: model, metadata: metadata)
            }
            var records: [SQLSchema.EntityRecord] = []
            for row in try await transaction.query("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") {
                let cells = row.makeRandomAccess()
                let number = try PostgreSQLRowReader.integer(cells[0], table: "Z_PRIMARYKEY")
                let entityName = try cells[1].decode(String.self)
                let superNumber = try PostgreSQLRowReader.integer(cells[2], table: "Z_PRIMARYKEY")
                let maxKey = try PostgreSQLRowReader.integer(cells[3], table: "Z_PRIMARYKEY")
                records.append(SQLSchema.EntityRecord(number: number, name: entityName, superNumber: superNumber, maxKey: maxKey))
            }
            var columns: [String: [String: String]] = [:]
            for row in try await transaction.query(
                "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = $1", name) {
                let cells = row.makeRandomAccess()
                let table = try cells[0].decode(String.self).uppercased()
                columns[table, default: [:]][try cells[1].decode(String.self).uppercased()] = try cells[2].decode(String.self)
            }
            return Opened(records: records, columns: columns, metadata: try await readMetadata(transaction))
        }
    }

    /// Creates the key, metadata and entity tables of a new store in the current schema.
    private static func create(_ transaction: PostgreSQLTransaction, model: NSManagedObjectModel, metadata: StoreMetadata) async throws {
        let schema = try SQLSchema(model: model, records: [], dialect: .postgreSQL)
        try await transaction.run("CREATE TABLE Z_PRIMARYKEY (Z_ENT bigint PRIMARY KEY, Z_NAME text NOT NULL, Z_SUPER bigint NOT NULL, Z_MAX bigint NOT NULL)")
        try await transaction.run("CREATE TABLE Z_METADATA (Z_VERSION bigint PRIMARY KEY, Z_UUID text NOT NULL, Z_PLIST bytea NOT NULL)")
        for statement in schema.tableStatements() { try await transaction.run(statement) }
        for record in schema.records {
            var binds = PostgresBindings()
            binds.append(record.number)
            binds.append(record.name)
            binds.append(record.superNumber)
            try await transaction.run("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES ($1, $2, $3, 0)", binds)
        }
        var values = metadata.values
        values[uuidKey] = (values[uuidKey] as? String) ?? UUID().uuidString
        values[typeKey] = storeTypeName
        try await writeMetadata(transaction, StoreMetadata(values))
    }

    private static func readMetadata(_ transaction: PostgreSQLTransaction) async throws -> StoreMetadata {
        var binds = PostgresBindings()
        binds.append(metadataVersion)
        guard let row = try await transaction.query("SELECT Z_PLIST FROM Z_METADATA WHERE Z_VERSION = $1", binds).first else {
            throw StoreError.corrupt(detail: "Z_METADATA has no row \(metadataVersion)")
        }
        let data = try row.makeRandomAccess()[0].decode(Data.self)
        let list: Any
        do { list = try PropertyListSerialization.propertyList(from: data, options: [], format: nil) } catch {
            throw StoreError.corrupt(detail: "Z_METADATA's property list does not read: \(error.localizedDescription)")
        }
        guard let values = list as? [String: Any] else { throw StoreError.corrupt(detail: "Z_METADATA's property list is not a dictionary") }
        return StoreMetadata(values)
    }

    private static func writeMetadata(_ transaction: PostgreSQLTransaction, _ metadata: StoreMetadata) async throws {
        let data: Data
        do { data = try PropertyListSerialization.data(fromPropertyList: metadata.values, format: .binary, options: 0) } catch {
            throw StoreError.io(detail: "the store's metadata is not a property list: \(error.localizedDescription)")
        }
        var binds = PostgresBindings()
        binds.append(metadataVersion)
        binds.append((metadata.values[uuidKey] as? String) ?? "")
        try binds.append(data)
        try await transaction.run(
            "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES ($1, $2, $3) ON CONFLICT (Z_VERSION) DO UPDATE SET Z_UUID = EXCLUDED.Z_UUID, Z_PLIST = EXCLUDED.Z_PLIST",
            binds)
    }

    private static func uniqueIndexes(_ schema: SQLSchema) -> [String: (entity: String, names: [String])] {
        var indexes: [String: (entity: String, names: [String])] = [:]
        for entity in schema.entities.values {
            for constraint in entity.entity.uniquenessConstraintNames {
                indexes["Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_"))"] = (entity.name, constraint)
            }
        }
        return indexes
    }

    // MARK: Running

    /// Runs `body` on the pool and waits for it, mapping every error to a ``StoreError``.
    private func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws(StoreError) -> T {
        let closed = lock.withLock { isClosed }
        if closed { throw .closed }
        do { return try database.bridge.run(body) } catch { throw Self.storeError(error, configuration) }
    }

    /// A ``StoreError`` for any error of a statement: the server's message and SQLSTATE, or why
    /// the server could not be reached; never the password.
    static func storeError(_ error: any Error, _ configuration: PostgreSQLStoreConfiguration) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? PostgreSQLStoreError { return .io(detail: error.description) }
        if let error = error as? PSQLError {
            if let info = error.serverInfo {
                let message = info[.message] ?? "error"
                let state = info[.sqlState] ?? "?"
                let detail = info[.detail].map { " (\($0))" } ?? ""
                // The statement, never its values: they may be the app's private data.
                let statement = error.query.map { " in: \($0.sql.prefix(300))" } ?? ""
                return .io(detail: "PostgreSQL at \(configuration.redactedURL): \(message)\(detail) [SQLSTATE \(state)]\(statement)")
            }
            let underlying = error.underlying.map { ": \($0)" } ?? ""
            return .io(detail: "PostgreSQL at \(configuration.redactedURL) failed (\(error.code))\(underlying)")
        }
        if error is CancellationError { return .closed }
        if let error = error as? BridgeTimeout {
            return .io(detail: "PostgreSQL at \(configuration.redactedURL) gave no connection within \(error.seconds) s: the server does not answer, refuses the login or has no free connection (max_connections)")
        }
        if let error = error as? SQLSchemaError { return .io(detail: "PostgreSQL at \(configuration.redactedURL): \(error.description)") }
        return .io(detail: "PostgreSQL at \(configuration.redactedURL): \(error)")
    }

    private static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    // MARK: Metadata

    public func metadata() throws(StoreError) -> StoreMetadata {
        lock.withLock { cachedMetadata }
    }

    public func setMetadata(_ metadata: StoreMetadata) throws(StoreError) {
        guard !configuration.readOnly else { throw .io(detail: "the PostgreSQL store at \(configuration.redactedURL) is read-only") }
        var values = metadata.values
        values[Self.typeKey] = Self.storeTypeName
        let stored = StoreMetadata(values)
        try run { [database] in try await database.transaction { try await Self.writeMetadata($0, stored) } }
        lock.withLock { cachedMetadata = stored }
    }

    // MARK: Reading (§5, §7)

    public func row(for objectID: StoreObjectID) throws(StoreError) -> StoreRow? {
        try rows(for: [objectID]).first
    }

    /// Reads the rows of `objectIDs` with one query per table they live in.
    public func rows(for objectIDs: [StoreObjectID]) throws(StoreError) -> [StoreRow] {
        if objectIDs.isEmpty { return [] }
        return try run { [self] in try await self.readRows(objectIDs, on: PoolRunner(database: database)) }
    }

    private func readRows(_ objectIDs: [StoreObjectID], on runner: some SQLRunner) async throws -> [StoreRow] {
        var byTable: [String: (hierarchy: SQLSchema.Hierarchy, keys: [Int64], wanted: Set<StoreObjectID>)] = [:]
        for id in objectIDs {
            guard let entity = schema.entities[id.entityName] else { continue }
            let table = entity.hierarchy.table
            byTable[table, default: (entity.hierarchy, [], [])].keys.append(id.primaryKey)
            byTable[table, default: (entity.hierarchy, [], [])].wanted.insert(id)
        }
        var rows: [StoreRow] = []
        for (table, group) in byTable.sorted(by: { $0.key < $1.key }) {
            guard let reader = readers[table] else { continue }
            var binds = PostgresBindings()
            binds.append(group.keys)
            let found = try await runner.query("SELECT \(reader.selectList) FROM \(table) t WHERE t.Z_PK = ANY($1)", binds)
            for row in found {
                let decoded = try reader.decode(row.makeRandomAccess(), schema: schema)
                if group.wanted.contains(decoded.objectID) { rows.append(decoded) }
            }
        }
        return try await fillToMany(rows, on: runner)
    }

    /// Fills every to-many relationship of `rows`: one query per relationship of each entity.
    private func fillToMany(_ rows: [StoreRow], on runner: some SQLRunner) async throws -> [StoreRow] {
        var rows = rows
        var indexesByEntity: [String: [Int]] = [:]
        for (index, row) in rows.enumerated() { indexesByEntity[row.objectID.entityName, default: []].append(index) }
        for (entityName, indexes) in indexesByEntity.sorted(by: { $0.key < $1.key }) {
            guard let entity = schema.entities[entityName], !entity.toManys.isEmpty else { continue }
            let keys = indexes.map { rows[$0].objectID.primaryKey }
            for toMany in entity.toManys {
                guard let destination = entity.entity.relationshipsByName[toMany.name]?.destinationEntity?.name.flatMap({ schema.entities[$0] }) else { continue }
                var binds = PostgresBindings()
                binds.append(keys)
                let sql: String
                switch toMany.storage {
                case .inverseColumn(let table, let column, let orderColumn):
                    let order = orderColumn.map { "\($0), " } ?? ""
                    sql = "SELECT \(column), Z_PK, Z_ENT FROM \(table) WHERE \(column) = ANY($1) ORDER BY \(column), \(order)Z_PK"
                case .joinTable(let join, let ownColumn, let otherColumn, let orderColumn):
                    let order = orderColumn.map { "j.\($0), " } ?? ""
                    sql = "SELECT j.\(ownColumn), j.\(otherColumn), d.Z_ENT FROM \(join.name) j JOIN \(destination.hierarchy.table) d ON d.Z_PK = j.\(otherColumn) WHERE j.\(ownColumn) = ANY($1) ORDER BY j.\(ownColumn), \(order)j.\(otherColumn)"
                }
                var destinations: [Int64: [StoreObjectID]] = [:]
                for row in try await runner.query(sql, binds) {
                    let cells = row.makeRandomAccess()
                    let owner = try PostgreSQLRowReader.integer(cells[0], table: destination.hierarchy.table)
                    let key = try PostgreSQLRowReader.integer(cells[1], table: destination.hierarchy.table)
                    let number = try PostgreSQLRowReader.integer(cells[2], table: destination.hierarchy.table)
                    guard let kind = schema.entitiesByNumber[number] else { continue }
                    destinations[owner, default: []].append(StoreObjectID(entity: kind.idEntity, primaryKey: key))
                }
                for index in indexes {
                    let found = destinations[rows[index].objectID.primaryKey] ?? []
                    rows[index].slots[toMany.slot] = .references(toMany.isOrdered ? found : found.sorted())
                }
            }
        }
        return rows
    }

    public func execute(_ request: StoreFetchRequest) throws(StoreError) -> StoreFetchResult {
        let selected = try run { [self] in try await self.select(request, on: PoolRunner(database: database)) }
        return try finish(request, selected)
    }

    /// What the server selected for a fetch: the final answer when SQL decided everything, or a
    /// superset of rows to re-check, sort and page in the process.
    private enum Selection: Sendable {
        case count(Int)
        case objectIDs([StoreObjectID])
        case rows([StoreRow])
        /// Rows to sort and page in the process; `exact` when SQL decided the predicate.
        case candidates([StoreRow], exact: Bool)
    }

    private func select(_ request: StoreFetchRequest, on runner: some SQLRunner) async throws -> Selection {
        guard let entity = request.entity.name.flatMap({ schema.entities[$0] }), let reader = readers[entity.hierarchy.table] else {
            switch request.resultType {
            case .count: return .count(0)
            case .objectIDs: return .objectIDs([])
            case .rows: return .rows([])
            }
        }
        let numbers = request.entityNames.compactMap { schema.entities[$0]?.number }
        if numbers.isEmpty {
            switch request.resultType {
            case .count: return .count(0)
            case .objectIDs: return .objectIDs([])
            case .rows: return .rows([])
            }
        }
        let condition = request.predicate.map { SQLFetchTranslator(schema: schema).condition($0, entity: entity) }
            ?? SQLFetchTranslator.Condition(sql: "TRUE", values: [], isExact: true, selectsAll: true)
        var binds = PostgresBindings()
        for value in condition.values { try PostgreSQLValueCoding.bind(value, into: &binds) }
        let table = entity.hierarchy.table
        let scope = numbers.count == entity.hierarchy.entities.count ? "TRUE" : "t.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
        let filter = PostgreSQLDatabase.numbered("\(scope) AND \(condition.sql)")
        if condition.isExact {
            if request.resultType == .count && request.offset <= 0 && request.limit <= 0 {
                let rows = try await runner.query("SELECT count(*) FROM \(table) t WHERE \(filter)", binds)
                return .count(Int(try rows.first.map { try PostgreSQLRowReader.integer($0.makeRandomAccess()[0], table: table) } ?? 0))
            }
            var order = orderBy(request.sortDescriptors, entity: entity, numbers: numbers)
            if let columns = order?.asciiColumns, !columns.isEmpty, !(try await allASCII(columns, table: table, filter: filter, binds: binds, on: runner)) {
                order = nil
            }
            if let order = order?.sql {
                var paging = ""
                if request.limit > 0 { paging += " LIMIT \(request.limit)" }
                if request.offset > 0 { paging += " OFFSET \(request.offset)" }
                switch request.resultType {
                case .objectIDs, .count:
                    var ids: [StoreObjectID] = []
                    for row in try await runner.query("SELECT t.Z_PK, t.Z_ENT FROM \(table) t WHERE \(filter) ORDER BY \(order)\(paging)", binds) {
                        if let id = try reader.objectID(row.makeRandomAccess(), schema: schema) { ids.append(id) }
                    }
                    return request.resultType == .count ? .count(ids.count) : .objectIDs(ids)
                case .rows:
                    var rows: [StoreRow] = []
                    for row in try await runner.query("SELECT \(reader.selectList) FROM \(table) t WHERE \(filter) ORDER BY \(order)\(paging)", binds) {
                        rows.append(try reader.decode(row.makeRandomAccess(), schema: schema))
                    }
                    return .rows(try await fillToMany(rows, on: runner))
                }
            }
        }
        var rows: [StoreRow] = []
        for row in try await runner.query("SELECT \(reader.selectList) FROM \(table) t WHERE \(filter)", binds) {
            rows.append(try reader.decode(row.makeRandomAccess(), schema: schema))
        }
        // Sorting by a key SQL cannot order as the evaluator does, paging, and an inexact
        // predicate's re-check are left to the process.
        return .candidates(try await fillToMany(rows, on: runner), exact: condition.isExact)
    }

    /// Sorts, pages and re-checks what the server selected.
    private func finish(_ request: StoreFetchRequest, _ selection: Selection) throws(StoreError) -> StoreFetchResult {
        switch selection {
        case .count(let count): return .count(count)
        case .objectIDs(let ids): return .objectIDs(ids)
        case .rows(let rows): return .rows(rows)
        case .candidates(let rows, let exact):
            var remaining = request
            if exact { remaining.predicate = nil }
            let matches = StoreQuery.run(
                remaining, candidates: rows,
                resolve: { [weak self] id in (try? self?.row(for: id)) ?? nil }, entities: model.entitiesByName)
            switch request.resultType {
            case .count: return .count(matches.count)
            case .objectIDs: return .objectIDs(matches.map(\.objectID))
            case .rows: return .rows(matches)
            }
        }
    }

    /// `ORDER BY` for sort descriptors SQL orders exactly as the evaluator does — numbers, dates
    /// and booleans of the entity's own attributes with `compare:` — then by entity name and key,
    /// the evaluator's tie-break; `nil` when a descriptor is not such (§7).
    ///
    /// Strings order as the evaluator's `compare:` does only where they are ASCII: then
    /// `COLLATE "C"` (byte order) is the same order. `asciiColumns` lists the string columns the
    /// caller must find ASCII in every matching row before it trusts the order.
    private func orderBy(
        _ descriptors: [CoreDataPredicate.NSSortDescriptor], entity: SQLSchema.Entity, numbers: [Int64]
    ) -> (sql: String, asciiColumns: [String])? {
        var terms: [String] = []
        var asciiColumns: [String] = []
        for descriptor in descriptors {
            guard descriptor.selector == .compare, let key = descriptor.key, !key.contains("."),
                  let attribute = entity.attributes.first(where: { $0.name == key }) else { return nil }
            var column = "t.\(attribute.column)"
            switch attribute.type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
                 .doubleAttributeType, .floatAttributeType, .dateAttributeType, .decimalAttributeType:
                break
            case .stringAttributeType:
                asciiColumns.append(column)
                column += " COLLATE \"C\""
            default:
                return nil
            }
            // nil sorts first ascending, last descending (`NSSortDescriptor`).
            terms.append(descriptor.ascending ? "\(column) ASC NULLS FIRST" : "\(column) DESC NULLS LAST")
        }
        if numbers.count > 1 {
            // Object IDs order by entity name, then key.
            let ranked = numbers.compactMap { schema.entitiesByNumber[$0] }.sorted { $0.name < $1.name }
            terms.append("CASE t.Z_ENT " + ranked.enumerated().map { "WHEN \($0.element.number) THEN \($0.offset)" }.joined(separator: " ") + " END")
        }
        terms.append("t.Z_PK")
        return (terms.joined(separator: ", "), asciiColumns)
    }

    /// Whether every matching row's `columns` hold ASCII only (or nil): the condition under which
    /// `COLLATE "C"` orders strings as the evaluator does.
    private func allASCII(_ columns: [String], table: String, filter: String, binds: PostgresBindings, on runner: some SQLRunner) async throws -> Bool {
        let checks = columns.map { "octet_length(\($0)) = char_length(\($0))" }.joined(separator: " AND ")
        let rows = try await runner.query("SELECT bool_and(\(checks)) FROM \(table) t WHERE \(filter)", binds)
        guard let cell = rows.first?.makeRandomAccess()[0], cell.bytes != nil else { return true }
        return try cell.decode(Bool.self)
    }

    // MARK: Keys

    /// Hands out keys from a block this handle reserved, reserving a new block (at least
    /// ``keyBlock`` keys, one round trip) when it runs out: a save of a few objects then costs no
    /// round trip for its keys. Keys of a block the process never uses are never used (§3).
    public func newPrimaryKeys(entityName: String, count: Int) throws(StoreError) -> [Int64] {
        guard count > 0 else { return [] }
        guard let entity = schema.entities[entityName] else { throw .io(detail: "the PostgreSQL store has no entity \(entityName)") }
        guard count < Int(Self.largestKey) else { throw .io(detail: "\(count) keys at once are more than the store hands out") }
        let root = entity.hierarchy.rootNumber
        if let keys = lock.withLock({ () -> [Int64]? in
            guard let block = keyBlocks[root], block.last - block.next + 1 >= Int64(count) else { return nil }
            keyBlocks[root] = (block.next + Int64(count), block.last)
            return Array(block.next..<(block.next + Int64(count)))
        }) {
            return keys
        }
        let reserve = max(count, Self.keyBlock)
        let last = try run { [database] () async throws -> Int64 in
            var binds = PostgresBindings()
            binds.append(Int64(reserve))
            binds.append(root)
            binds.append(Self.largestKey)
            let rows = try await database.query(
                "UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + $1 WHERE Z_ENT = $2 AND Z_MAX <= $3 - $1 RETURNING Z_MAX", binds)
            guard let row = rows.first else { throw StoreError.io(detail: "entity \(entityName) has no keys left below 2^62 (Z_PRIMARYKEY)") }
            return try PostgreSQLRowReader.integer(row.makeRandomAccess()[0], table: "Z_PRIMARYKEY")
        }
        let first = last - Int64(reserve) + 1
        lock.withLock {
            keyBlocks[root] = (first + Int64(count), last)
            reservedUpTo[root] = max(reservedUpTo[root] ?? 0, last)
        }
        return Array(first..<(first + Int64(count)))
    }

    /// Whether `key` of the hierarchy `root` was reserved by this handle, so `Z_MAX` already
    /// covers it.
    private func isReserved(_ key: Int64, root: Int64) -> Bool {
        lock.withLock { key <= (reservedUpTo[root] ?? 0) }
    }

    // MARK: Saving (§6, §8)

    public func save(_ changes: StoreChangeSet) throws(StoreError) -> [StoreObjectID: Int64] {
        if changes.isEmpty { return [:] }
        guard !configuration.readOnly else { throw .io(detail: "the PostgreSQL store at \(configuration.redactedURL) is read-only") }
        if let single = singleStatementInsert(changes) {
            return try retrying { [self] in
                do {
                    _ = try await database.query(single.sql, single.binds)
                } catch where Self.sqlState(error) == Self.uniqueViolation {
                    throw StoreError.duplicateObjectID(changes.inserted[0].objectID)
                }
                return single.versions
            }
        }
        return try retrying { [self] in
            try await database.transaction { transaction in try await self.write(changes, in: transaction) }
        }
    }

    /// A save of one new object that needs nothing but its row (no uniqueness constraint, no
    /// reference to check, no relationship table, a key this handle reserved) as one statement
    /// in autocommit: the insert and the change notification, one round trip (§8).
    private func singleStatementInsert(_ changes: StoreChangeSet) -> (sql: String, binds: PostgresBindings, versions: [StoreObjectID: Int64])? {
        guard changes.updated.isEmpty, changes.deleted.isEmpty, changes.inserted.count == 1, let row = changes.inserted.first,
              let entity = schema.entities[row.objectID.entityName], !constrained(entity),
              isReserved(row.objectID.primaryKey, root: entity.hierarchy.rootNumber) else { return nil }
        for value in row.slots {
            switch value {
            case .reference?: return nil
            case .references(let ids)? where !ids.isEmpty: return nil
            default: continue
            }
        }
        var binds = PostgresBindings()
        binds.append(row.objectID.primaryKey)
        binds.append(entity.number)
        binds.append(Int64(1))
        guard let columns = try? ["Z_PK", "Z_ENT", "Z_OPT"] + columnValues(of: row, entity: entity, into: &binds) else { return nil }
        binds.append(notificationChannel)
        let parameters = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
        let sql = "WITH inserted AS (INSERT INTO \(entity.hierarchy.table) (\(columns.joined(separator: ", "))) VALUES (\(parameters)) RETURNING 1) "
            + "SELECT pg_notify($\(columns.count + 1), 'save') FROM inserted"
        return (sql, binds, [row.objectID: 1])
    }

    /// Runs a transaction again when PostgreSQL aborted it for a deadlock or a serialization failure.
    private func retrying<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws(StoreError) -> T {
        let retries = configuration.saveRetries
        return try run {
            var attempt = 0
            while true {
                do {
                    return try await body()
                } catch {
                    guard attempt < retries, let state = Self.sqlState(error), Self.retriedStates.contains(state) else { throw error }
                    attempt += 1
                }
            }
        }
    }

    private func write(_ changes: StoreChangeSet, in transaction: PostgreSQLTransaction) async throws -> [StoreObjectID: Int64] {
        var versions: [StoreObjectID: Int64] = [:]
        var stale: [(StoreObjectID, Int64)] = []
        for (id, expected) in changes.deleted {
            guard let entity = schema.entities[id.entityName] else { continue }
            var binds = PostgresBindings()
            binds.append(id.primaryKey)
            binds.append(entity.number)
            binds.append(expected)
            let deleted = try await transaction.run("DELETE FROM \(entity.hierarchy.table) WHERE Z_PK = $1 AND Z_ENT = $2 AND Z_OPT = $3", binds)
            if deleted == 0 { stale.append((id, expected)); continue }
            try await deleteJoinRows(of: id, entity: entity, in: transaction)
        }
        var conflicts: [StoreConstraintConflict] = []
        for row in changes.updated {
            guard let entity = schema.entities[row.objectID.entityName] else { continue }
            let found = try await constraintConflicts(of: row, in: transaction)
            if !found.isEmpty { conflicts += found; continue }
            var all = PostgresBindings()
            all.append(row.objectID.primaryKey)
            all.append(entity.number)
            all.append(row.version)
            let assignments = try columnValues(of: row, entity: entity, into: &all)
            let set = (["Z_OPT = Z_OPT + 1"] + assignments.enumerated().map { "\($0.element) = $\($0.offset + 4)" }).joined(separator: ", ")
            let updated: Int
            do {
                updated = try await transaction.run("UPDATE \(entity.hierarchy.table) SET \(set) WHERE Z_PK = $1 AND Z_ENT = $2 AND Z_OPT = $3", all)
            } catch where Self.sqlState(error) == Self.uniqueViolation {
                // Another server's save took the values between the check and the write.
                throw constraintConflict(error, [row.objectID])
            }
            if updated == 0 { stale.append((row.objectID, row.version)); continue }
            versions[row.objectID] = row.version + 1
        }
        if !stale.isEmpty {
            let stored = try await readRows(stale.map(\.0), on: transaction)
            let byID = Dictionary(stored.map { ($0.objectID, $0) }, uniquingKeysWith: { first, _ in first })
            throw StoreError.optimisticLockingFailure(stale.map { StoreVersionConflict(objectID: $0.0, expectedVersion: $0.1, storedRow: byID[$0.0]) })
        }
        var largestKeys: [Int64: Int64] = [:]
        // Rows of entities without uniqueness constraints go in multi-row INSERTs, one per table
        // and column set and at most `insertBatchParameters` values: a bulk save is a few round
        // trips, not one per object. Constrained rows are checked and inserted one by one.
        var batches: [String: (table: String, columns: [String], rows: [(StoreRow, SQLSchema.Entity)])] = [:]
        func flush(_ key: String) async throws {
            guard let batch = batches.removeValue(forKey: key), !batch.rows.isEmpty else { return }
            var binds = PostgresBindings(capacity: batch.rows.count * batch.columns.count)
            for (row, entity) in batch.rows {
                binds.append(row.objectID.primaryKey)
                binds.append(entity.number)
                binds.append(Int64(1))
                _ = try columnValues(of: row, entity: entity, into: &binds)
            }
            let width = batch.columns.count
            let tuples = (0..<batch.rows.count).map { row in
                "(" + (1...width).map { "$\(row * width + $0)" }.joined(separator: ", ") + ")"
            }
            do {
                try await transaction.run(
                    "INSERT INTO \(batch.table) (\(batch.columns.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))", binds)
            } catch where Self.sqlState(error) == Self.uniqueViolation {
                // The server names the key in its detail: "Key (z_pk)=(12) already exists."
                let detail = (error as? PSQLError)?.serverInfo?[.detail] ?? ""
                let duplicate = batch.rows.first(where: { detail.contains("(\($0.0.objectID.primaryKey))") })?.0.objectID ?? batch.rows[0].0.objectID
                throw StoreError.duplicateObjectID(duplicate)
            }
        }
        for row in changes.inserted {
            guard let entity = schema.entities[row.objectID.entityName] else {
                throw StoreError.io(detail: "the PostgreSQL store has no entity \(row.objectID.entityName)")
            }
            versions[row.objectID] = 1
            let root = entity.hierarchy.rootNumber
            largestKeys[root] = max(largestKeys[root] ?? 0, row.objectID.primaryKey)
            if !constrained(entity) {
                // Values are bound when the batch is written; only the column set is needed here.
                let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + columnNames(of: row, entity: entity)
                let key = entity.hierarchy.table + " " + columns.joined(separator: ",")
                var batch = batches.removeValue(forKey: key) ?? (entity.hierarchy.table, columns, [])
                batch.rows.append((row, entity))
                batches[key] = batch
                if batch.rows.count * columns.count >= Self.insertBatchParameters { try await flush(key) }
                continue
            }
            let found = try await constraintConflicts(of: row, in: transaction)
            if !found.isEmpty { conflicts += found; continue }
            var all = PostgresBindings()
            all.append(row.objectID.primaryKey)
            all.append(entity.number)
            all.append(Int64(1))
            let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + (try columnValues(of: row, entity: entity, into: &all))
            let parameters = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
            do {
                try await transaction.run("INSERT INTO \(entity.hierarchy.table) (\(columns.joined(separator: ", "))) VALUES (\(parameters))", all)
            } catch where Self.sqlState(error) == Self.uniqueViolation {
                if (error as? PSQLError)?.serverInfo?[.constraintName]?.hasSuffix("_pkey") == true { throw StoreError.duplicateObjectID(row.objectID) }
                throw constraintConflict(error, [row.objectID])
            }
        }
        for key in batches.keys.sorted() { try await flush(key) }
        if !conflicts.isEmpty { throw StoreError.constraintConflict(conflicts) }
        for row in changes.inserted + changes.updated {
            guard let entity = schema.entities[row.objectID.entityName] else { continue }
            try await writeToMany(of: row, entity: entity, in: transaction)
        }
        if changes.checksReferences { try await checkReferences(changes, in: transaction) }
        for (root, key) in largestKeys.sorted(by: { $0.key < $1.key }) where !isReserved(key, root: root) {
            var binds = PostgresBindings()
            binds.append(key)
            binds.append(root)
            try await transaction.run("UPDATE Z_PRIMARYKEY SET Z_MAX = GREATEST(Z_MAX, $1) WHERE Z_ENT = $2", binds)
        }
        try await notifyChange(transaction)
        return versions
    }

    /// Whether a row of `entity` is bound by a uniqueness constraint (its own or inherited).
    private func constrained(_ entity: SQLSchema.Entity) -> Bool {
        var current: NSEntityDescription? = entity.entity
        while let declaring = current {
            if declaring.uniquenessConstraintNames.contains(where: { !$0.isEmpty }) { return true }
            current = declaring.superentity
        }
        return false
    }

    /// The columns ``columnValues(of:entity:into:)`` writes for `row`, without its values.
    private func columnNames(of row: StoreRow, entity: SQLSchema.Entity) -> [String] {
        let row = row.layout === entity.layout ? row : row.relaid(as: entity.layout)
        var columns: [String] = []
        for attribute in entity.attributes where attribute.slot < row.slots.count && row.slots[attribute.slot] != nil {
            columns.append(attribute.column)
        }
        for toOne in entity.toOnes where toOne.slot < row.slots.count && row.slots[toOne.slot] != nil {
            columns.append(toOne.column)
        }
        return columns
    }

    /// The columns of an entity's row that `row` holds, their values appended to `binds`:
    /// attributes and to-one relationships whose slots the row fills.
    private func columnValues(of row: StoreRow, entity: SQLSchema.Entity, into binds: inout PostgresBindings) throws -> [String] {
        // The schema's slots are those of the entity's own layout.
        let row = row.layout === entity.layout ? row : row.relaid(as: entity.layout)
        var columns: [String] = []
        for attribute in entity.attributes {
            guard attribute.slot < row.slots.count, let value = row.slots[attribute.slot] else { continue }
            try PostgreSQLValueCoding.bind(value, as: attribute.type, into: &binds)
            columns.append(attribute.column)
        }
        for toOne in entity.toOnes {
            guard toOne.slot < row.slots.count, let value = row.slots[toOne.slot] else { continue }
            if case .reference(let id) = value { binds.append(id.primaryKey) } else { binds.appendNull() }
            columns.append(toOne.column)
        }
        return columns
    }

    /// Writes the to-many relationships `row` holds: order values of ordered one-to-many
    /// relationships in the destinations' rows, and join rows of many-to-many ones (§6).
    private func writeToMany(of row: StoreRow, entity: SQLSchema.Entity, in transaction: PostgreSQLTransaction) async throws {
        let row = row.layout === entity.layout ? row : row.relaid(as: entity.layout)
        for toMany in entity.toManys {
            guard toMany.slot < row.slots.count, let value = row.slots[toMany.slot] else { continue }
            let destinations: [StoreObjectID]
            if case .references(let ids) = value { destinations = ids } else { destinations = [] }
            let keys = destinations.map(\.primaryKey)
            let orders = keys.indices.map { (Int64($0) + 1) * Self.orderKeyStep }
            switch toMany.storage {
            case .inverseColumn(let table, let column, let orderColumn):
                guard let orderColumn, !keys.isEmpty else { continue }
                var binds = PostgresBindings()
                binds.append(keys)
                binds.append(orders)
                binds.append(row.objectID.primaryKey)
                try await transaction.run(
                    "UPDATE \(table) SET \(orderColumn) = v.o FROM unnest($1::bigint[], $2::bigint[]) AS v(k, o) WHERE \(table).Z_PK = v.k AND \(table).\(column) = $3",
                    binds)
            case .joinTable(let join, let ownColumn, let otherColumn, let orderColumn):
                var owner = PostgresBindings()
                owner.append(row.objectID.primaryKey)
                try await transaction.run("DELETE FROM \(join.name) WHERE \(ownColumn) = $1", owner)
                guard !keys.isEmpty else { continue }
                var binds = PostgresBindings()
                binds.append(row.objectID.primaryKey)
                binds.append(keys)
                if let orderColumn {
                    binds.append(orders)
                    try await transaction.run(
                        "INSERT INTO \(join.name) (\(ownColumn), \(otherColumn), \(orderColumn)) SELECT $1, v.k, v.o FROM unnest($2::bigint[], $3::bigint[]) AS v(k, o) ON CONFLICT DO NOTHING",
                        binds)
                } else {
                    try await transaction.run(
                        "INSERT INTO \(join.name) (\(ownColumn), \(otherColumn)) SELECT $1, v.k FROM unnest($2::bigint[]) AS v(k) ON CONFLICT DO NOTHING",
                        binds)
                }
            }
        }
    }

    /// Removes a deleted object's join rows.
    private func deleteJoinRows(of id: StoreObjectID, entity: SQLSchema.Entity, in transaction: PostgreSQLTransaction) async throws {
        for toMany in entity.toManys {
            guard case .joinTable(let join, let ownColumn, _, _) = toMany.storage else { continue }
            var binds = PostgresBindings()
            binds.append(id.primaryKey)
            try await transaction.run("DELETE FROM \(join.name) WHERE \(ownColumn) = $1", binds)
        }
    }

    /// The uniqueness constraints `row` would break: another row of the constraint's entities
    /// holding the same values (§4). A constraint with a nil value binds nothing, as in SQL.
    private func constraintConflicts(of row: StoreRow, in transaction: PostgreSQLTransaction) async throws -> [StoreConstraintConflict] {
        guard let entity = schema.entities[row.objectID.entityName] else { return [] }
        var conflicts: [StoreConstraintConflict] = []
        var declaring: NSEntityDescription? = entity.entity
        while let current = declaring {
            defer { declaring = current.superentity }
            for names in current.uniquenessConstraintNames where !names.isEmpty {
                var terms: [String] = []
                var binds = PostgresBindings()
                binds.append(row.objectID.primaryKey)
                var complete = true
                for name in names {
                    let value = row[name]
                    if value.isNull { complete = false; break }
                    if let attribute = entity.attributes.first(where: { $0.name == name }) {
                        try PostgreSQLValueCoding.bind(value, as: attribute.type, into: &binds)
                        terms.append("t.\(attribute.column) = $\(terms.count + 2)")
                    } else if let toOne = entity.toOnes.first(where: { $0.name == name }), case .reference(let target) = value {
                        binds.append(target.primaryKey)
                        terms.append("t.\(toOne.column) = $\(terms.count + 2)")
                    } else {
                        complete = false
                        break
                    }
                }
                guard complete, !terms.isEmpty else { continue }
                let kinds = entity.hierarchy.entities.filter { $0.entity.isKindOf(entity: current) }.map { String($0.number) }
                let sql = "SELECT t.Z_PK, t.Z_ENT FROM \(entity.hierarchy.table) t WHERE t.Z_ENT IN (\(kinds.joined(separator: ", "))) AND t.Z_PK <> $1 AND \(terms.joined(separator: " AND ")) LIMIT 1"
                guard let found = try await transaction.query(sql, binds).first,
                      let reader = readers[entity.hierarchy.table],
                      let owner = try reader.objectID(found.makeRandomAccess(), schema: schema) else { continue }
                conflicts.append(StoreConstraintConflict(entityName: current.name ?? "", constraint: names, objectIDs: [owner, row.objectID]))
            }
        }
        return conflicts
    }

    /// The constraint conflict a unique index's refusal stands for: the index names the
    /// constraint; the other object is not known, only this one.
    private func constraintConflict(_ error: any Error, _ objectIDs: [StoreObjectID]) -> StoreError {
        let index = (error as? PSQLError)?.serverInfo?[.constraintName] ?? ""
        let constraint = uniqueIndexes[index]
        return .constraintConflict([StoreConstraintConflict(
            entityName: constraint?.entity ?? objectIDs.first?.entityName ?? "", constraint: constraint?.names ?? [], objectIDs: objectIDs)])
    }

    /// Every reference the saved rows hold names a row (§8).
    private func checkReferences(_ changes: StoreChangeSet, in transaction: PostgreSQLTransaction) async throws {
        var wanted: [String: Set<Int64>] = [:]
        var firstUse: [StoreObjectID: (StoreObjectID, String)] = [:]
        for row in changes.inserted + changes.updated {
            for (slot, value) in row.slots.enumerated() {
                let targets: [StoreObjectID]
                switch value {
                case .reference(let target)?: targets = [target]
                case .references(let list)?: targets = list
                default: continue
                }
                for target in targets {
                    guard let table = schema.entities[target.entityName]?.hierarchy.table else {
                        throw StoreError.danglingReference(from: row.objectID, property: row.layout.names[slot], to: target)
                    }
                    wanted[table, default: []].insert(target.primaryKey)
                    if firstUse[target] == nil { firstUse[target] = (row.objectID, row.layout.names[slot]) }
                }
            }
        }
        for (table, keys) in wanted.sorted(by: { $0.key < $1.key }) {
            var binds = PostgresBindings()
            binds.append(Array(keys))
            var present = Set<Int64>()
            for row in try await transaction.query("SELECT Z_PK FROM \(table) WHERE Z_PK = ANY($1)", binds) {
                present.insert(try PostgreSQLRowReader.integer(row.makeRandomAccess()[0], table: table))
            }
            if let missing = firstUse.keys.sorted().first(where: { schema.entities[$0.entityName]?.hierarchy.table == table && !present.contains($0.primaryKey) }),
               let use = firstUse[missing] {
                throw StoreError.danglingReference(from: use.0, property: use.1, to: missing)
            }
        }
    }

    // MARK: Batch requests (§8)

    public func batchDelete(_ request: StoreFetchRequest) throws(StoreError) -> [StoreObjectID] {
        guard !configuration.readOnly else { throw .io(detail: "the PostgreSQL store at \(configuration.redactedURL) is read-only") }
        let matching = request
        return try retrying { [self] in
            try await database.transaction { transaction in
                let ids = try await self.matchingIDs(matching, in: transaction)
                for (entityName, group) in Dictionary(grouping: ids, by: \.entityName).sorted(by: { $0.key < $1.key }) {
                    guard let entity = schema.entities[entityName] else { continue }
                    var binds = PostgresBindings()
                    binds.append(group.map(\.primaryKey))
                    try await transaction.run("DELETE FROM \(entity.hierarchy.table) WHERE Z_PK = ANY($1)", binds)
                    for toMany in entity.toManys {
                        guard case .joinTable(let join, let ownColumn, _, _) = toMany.storage else { continue }
                        try await transaction.run("DELETE FROM \(join.name) WHERE \(ownColumn) = ANY($1)", binds)
                    }
                }
                if !ids.isEmpty { try await self.notifyChange(transaction) }
                return ids
            }
        }
    }

    public func batchUpdate(_ request: StoreFetchRequest, values: [String: StoreValue]) throws(StoreError) -> [StoreObjectID] {
        guard !configuration.readOnly else { throw .io(detail: "the PostgreSQL store at \(configuration.redactedURL) is read-only") }
        let matching = request
        return try retrying { [self] in
            try await database.transaction { transaction in
                let ids = try await self.matchingIDs(matching, in: transaction)
                for (entityName, group) in Dictionary(grouping: ids, by: \.entityName).sorted(by: { $0.key < $1.key }) {
                    guard let entity = schema.entities[entityName] else { continue }
                    var binds = PostgresBindings()
                    binds.append(group.map(\.primaryKey))
                    var assignments = ["Z_OPT = Z_OPT + 1"]
                    for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                        guard let attribute = entity.attributes.first(where: { $0.name == name }) else { continue }
                        try PostgreSQLValueCoding.bind(value, as: attribute.type, into: &binds)
                        assignments.append("\(attribute.column) = $\(binds.count)")
                    }
                    do {
                        try await transaction.run("UPDATE \(entity.hierarchy.table) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = ANY($1)", binds)
                    } catch where Self.sqlState(error) == Self.uniqueViolation {
                        throw self.constraintConflict(error, group.sorted())
                    }
                }
                if !ids.isEmpty { try await self.notifyChange(transaction) }
                return ids
            }
        }
    }

    /// The IDs a batch request's fetch matches, read in its transaction with the rows locked.
    private func matchingIDs(_ request: StoreFetchRequest, in transaction: PostgreSQLTransaction) async throws -> [StoreObjectID] {
        var request = request
        request.resultType = .objectIDs
        switch try await select(request, on: transaction) {
        case .objectIDs(let ids): return ids
        case .rows(let rows): return rows.map(\.objectID)
        case .count: return []
        case .candidates(let rows, let exact):
            var remaining = request
            remaining.resultType = .rows
            if exact { remaining.predicate = nil }
            let matches = StoreQuery.run(remaining, candidates: rows, resolve: { _ in nil }, entities: model.entitiesByName)
            return matches.map(\.objectID)
        }
    }

    // MARK: Inspection

    /// The names of the store's indexes (`pg_indexes` of its schema), sorted: for tests and tools.
    package func indexNames() throws(StoreError) -> [String] {
        try run { [database, configuration] () async throws -> [String] in
            var binds = PostgresBindings()
            binds.append(configuration.schema)
            return try await database.query("SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname", binds).map {
                try $0.makeRandomAccess()[0].decode(String.self)
            }
        }
    }

    // MARK: Closing

    public func close() throws(StoreError) {
        let wasClosed = lock.withLock { () -> Bool in
            defer { isClosed = true }
            return isClosed
        }
        if !wasClosed {
            setListener(nil)?.cancel()
            database.shutDown()
        }
    }

    /// Drops the store's schema and everything in it.
    ///
    /// - Throws: ``StoreError/io(detail:)`` when the server refuses.
    public static func destroy(configuration: PostgreSQLStoreConfiguration) throws(StoreError) {
        try withServer(configuration) { database in
            _ = try await database.query("DROP SCHEMA IF EXISTS \(configuration.schema) CASCADE")
        }
    }

    /// Runs `body` on a pool of its own for an operation without an open store (destroy,
    /// install, metadata): the server must answer within the connect timeout first.
    private static func withServer<T: Sendable>(
        _ configuration: PostgreSQLStoreConfiguration, _ body: @escaping @Sendable (PostgreSQLDatabase) async throws -> T
    ) throws(StoreError) -> T {
        let database: PostgreSQLDatabase
        do { database = try PostgreSQLDatabase(configuration: configuration) } catch { throw .io(detail: error.description) }
        defer { database.shutDown() }
        do {
            try database.checkReachable()
            return try database.bridge.run { try await body(database) }
        } catch {
            throw storeError(error, configuration)
        }
    }

    /// Puts the store in `staging`'s schema in place of the store in `target`'s, in one
    /// transaction (§10): the old schema is renamed away and dropped, the staging schema takes its
    /// name. Other servers' next statements see the new tables.
    ///
    /// - Throws: ``StoreError/io(detail:)`` when the server refuses; nothing changed then.
    public static func install(staging: PostgreSQLStoreConfiguration, at target: PostgreSQLStoreConfiguration) throws(StoreError) {
        let retired = String(target.schema.prefix(40)) + "_replaced"
        try withServer(target) { database in
            try await database.transaction { transaction in
                var lockKey = PostgresBindings()
                lockKey.append("CoreData.\(target.schema)")
                try await transaction.query("SELECT pg_advisory_xact_lock(hashtext($1))", lockKey)
                try await transaction.run("DROP SCHEMA IF EXISTS \(retired) CASCADE")
                try await transaction.run("ALTER SCHEMA \(target.schema) RENAME TO \(retired)")
                try await transaction.run("ALTER SCHEMA \(staging.schema) RENAME TO \(target.schema)")
                try await transaction.run("DROP SCHEMA \(retired) CASCADE")
                // Listeners of the store learn that everything changed.
                var channel = PostgresBindings()
                channel.append(notificationChannel(of: target.schema))
                try await transaction.query("SELECT pg_notify($1, 'migrated')", channel)
            }
        }
    }

    /// The metadata of the store at `configuration`, without opening it for a model.
    public static func metadata(configuration: PostgreSQLStoreConfiguration) throws(StoreError) -> StoreMetadata {
        try withServer(configuration) { database in
            try await database.transaction { transaction in
                var name = PostgresBindings()
                name.append(configuration.schema)
                let tables = try await transaction.query(
                    "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'z_metadata'", name)
                guard !tables.isEmpty else { throw StoreError.io(detail: "there is no PostgreSQL store at \(configuration.redactedURL)") }
                try await transaction.run("SET LOCAL search_path TO \(configuration.schema)")
                return try await readMetadata(transaction)
            }
        }
    }
}

/// Where a read runs: on any pooled connection, or in a save's transaction.
protocol SQLRunner: Sendable {
    func query(_ sql: String, _ binds: PostgresBindings) async throws -> [PostgresRow]
}

struct PoolRunner: SQLRunner {
    let database: PostgreSQLDatabase
    func query(_ sql: String, _ binds: PostgresBindings) async throws -> [PostgresRow] { try await database.query(sql, binds) }
}

extension PostgreSQLTransaction: SQLRunner {}

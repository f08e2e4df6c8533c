import ArgumentParser
import CoreData
import CoreDataBinaryFormat
import CoreDataBinaryStore
import CoreDataSQLiteStore
import CoreDataStorage

extension DumpFormat: ExpressibleByArgument {}

/// `coredata dump STORE`: the objects of a store with their attributes and relationships.
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print a store's objects with their attributes and relationships.",
        discussion: """
            Without --model, names come from the store's catalog and values print as the records \
            store them; with --model, each object shows every property of its entity (absent \
            ones as null), --where compares with the model's types, and a model that does not \
            match the store is refused (status 6). Objects come entity by entity (by name), in \
            primary-key order. Relationships print as destination IDs (Entity/pN).

            dump first checks the whole store as verify does and refuses a damaged one (status \
            1), so it never prints records decoded from damaged bytes. Opens the store read-only. \
            With --salvage, a binary store whose log has a damaged frame is dumped as it was \
            before that frame (the saves from it on are left out, and stderr names the frame); \
            damage elsewhere is still refused.

            An XML store is read whole with the store's reader and row mapping first. Without \
            --model, entities take the spelling of the metadata's version hashes, properties \
            the file's (lower-cased), and types come from the file's type attributes.

            An Apple SQLite store (Core Data's NSSQLiteStoreType file) needs --model: its tables \
            do not say which columns are relationships or which type an attribute has. It is \
            checked as verify --model does (damage: status 1; a model whose entities or columns \
            are not the store's: status 6), then opened read-only with the model; primary keys \
            are the file's Z_PK values.

            Example:
              coredata dump Library.store
              coredata dump Library.store --entity Book --where 'pages > 300'
              coredata dump Library.store --where 'author.name == "Ada Lovelace"' --json
              coredata dump Library.store --model Library.xcdatamodeld --format xml
              coredata dump Library.xml --entity Book --limit 10
              coredata dump Library.sqlite --model Library.xcdatamodeld --entity Book
            """
    )

    @OptionGroup var arguments: StoreArguments

    @Option(help: "Only objects of this entity (and, with --model, its subentities).")
    var entity: String?

    @Option(name: .customLong("where"), help: "An NSPredicate format string the objects must match, e.g. 'pages > 300'.")
    var predicate: String?

    @Option(help: "Print at most this many objects.")
    var limit: Int?

    @Option(help: "The output format: jsonl, xml or table (--json means jsonl).")
    var format: DumpFormat?

    @Option(help: "The model (.xcdatamodeld, .xcdatamodel or contents file) to read the store with.")
    var model: String?

    @Option(name: .customLong("model-version"), help: "The version of a .xcdatamodeld package to use (default: its current one).")
    var modelVersion: String?

    @Flag(help: "Dump a binary store whose log has a damaged frame as it was before that frame.")
    var salvage = false

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more, not \(limit)") }
        if arguments.json, let format, format != .jsonl { throw ValidationError("--json prints JSON Lines; it cannot be combined with --format \(format.rawValue)") }
        if modelVersion != nil, model == nil { throw ValidationError("--model-version needs --model") }
    }

    func run() throws {
        try reportingFailures {
            let path = arguments.store
            let loadedModel = try model.map { (modelPath: String) throws(CLIError) -> NSManagedObjectModel in
                try ModelLoading.load(modelPath, version: modelVersion)
            }
            let filter = try parsePredicate()
            let kind = try StoreKind.detect(path: path)
            if kind == .xml {
                // The whole file is decoded and mapped before anything prints: damage is reported,
                // never printed.
                let contents = try XMLStoreAccess.read(path, model: loadedModel, modelPath: model)
                let rows = Dictionary(contents.rows.map { ($0.objectID, $0) }, uniquingKeysWith: { first, _ in first })
                let ids = contents.objectIDsByEntity
                let described = contents.model.entitiesByName
                let source = DumpSource(
                    entityNames: contents.model.entities.compactMap(\.name),
                    entities: described,
                    propertyOrder: { name in described[name].map(Self.storedProperties) ?? [] },
                    objectIDs: { ids[$0] ?? [] },
                    row: { rows[$0] })
                try dump(source, model: loadedModel, filter: filter)
                return
            }
            if kind == .sqlite { return try dumpSQLite(path, model: loadedModel, filter: filter) }
            let store = try StoreAccess.open(path, command: "dump", model: loadedModel, salvaging: salvage)
            // The store's lock is held from here on: no writer changes what verify checked.
            if let damage = store.openReport.logDamage {
                Console.error("warning: \(path): \(damage); dumping the saves before it")
                try StoreAccess.requireIntact(path, except: damage.location)
            } else {
                try StoreAccess.requireIntact(path)
            }
            do {
                if let loadedModel, let modelPath = model {
                    try ModelLoading.requireMatch(loadedModel, metadata: try store.metadata().values, modelPath: modelPath, storePath: path)
                }
                let catalog = try store.storedCatalog()
                let source = DumpSource(
                    entityNames: catalog.entities.map(\.name),
                    entities: loadedModel?.entitiesByName ?? [:],
                    propertyOrder: { name in catalog.entityID(of: name).map { catalog.entities[$0].properties } ?? [] },
                    objectIDs: { name in try store.objectIDs(ofEntity: name) },
                    row: { id in try store.row(for: id) })
                try dump(source, model: loadedModel, filter: filter)
            } catch let error as StoreError {
                throw CLIError.store(error, path: path)
            }
            try StoreAccess.close(store)
        }
    }

    /// An Apple SQLite store: checked whole first (nothing prints from a damaged store), then
    /// read through its engine, read-only, with the app's model (Formats/apple-sqlite-store.md).
    private func dumpSQLite(_ path: String, model loadedModel: NSManagedObjectModel?, filter: NSPredicate?) throws {
        guard let loadedModel, let modelPath = model else {
            throw CLIError(.usage, "\(path) is an Apple SQLite store: dump needs --model (its tables do not say which columns are relationships or which type an attribute has)")
        }
        if salvage { throw CLIError(.usage, "--salvage applies to binary stores only: \(path) is an Apple SQLite store") }
        try SQLiteStoreAccess.requireIntact(path, model: loadedModel, modelPath: modelPath)
        let store = try SQLiteStoreAccess.open(path, model: loadedModel, modelPath: modelPath)
        defer { try? store.close() }
        let entities = loadedModel.entitiesByName
        let source = DumpSource(
            entityNames: loadedModel.entities.compactMap(\.name),
            entities: entities,
            propertyOrder: { name in entities[name].map(Self.storedProperties) ?? [] },
            objectIDs: { name in
                guard let entity = entities[name], !entity.isAbstract else { return [] }
                let request = StoreFetchRequest(entity: entity, includesSubentities: false, resultType: .objectIDs)
                switch try store.execute(request) {
                case .objectIDs(let ids): return ids.sorted { $0.primaryKey < $1.primaryKey }
                case .rows(let rows): return rows.map(\.objectID).sorted { $0.primaryKey < $1.primaryKey }
                case .count: return []
                }
            },
            row: { id in try store.row(for: id) })
        do {
            try dump(source, model: loadedModel, filter: filter)
        } catch let error as StoreError {
            throw CLIError.store(error, path: path)
        }
    }

    /// Where `dump` reads objects: a binary store through its engine, or an XML store's rows.
    private struct DumpSource {
        /// The entities the store knows (a binary store's catalog, an XML store's model).
        var entityNames: [String]
        /// The entities for typed `--where` comparisons.
        var entities: [String: NSEntityDescription]
        /// An entity's properties in print order, without `--model`.
        var propertyOrder: (String) -> [String]
        var objectIDs: (String) throws -> [StoreObjectID]
        var row: (StoreObjectID) throws -> StoreRow?
    }

    private func parsePredicate() throws(CLIError) -> NSPredicate? {
        guard let predicate else { return nil }
        do {
            return try NSPredicate(validatingFormat: predicate)
        } catch {
            throw CLIError(.badQuery, "bad predicate for --where: \(error)")
        }
    }

    /// The entities to print, by name.
    private func entityNames(_ stored: [String], model: NSManagedObjectModel?) throws(CLIError) -> [String] {
        guard let entity else { return stored.sorted() }
        if let model {
            guard let description = model.entitiesByName[entity] else {
                throw CLIError(.badQuery, "--entity \(entity): the model has no such entity (it has \(model.entitiesByName.keys.sorted().joined(separator: ", ")))")
            }
            var names: [String] = []
            var pending = [description]
            while let next = pending.popLast() {
                if let name = next.name { names.append(name) }
                pending += next.subentities
            }
            return names.sorted()
        }
        guard stored.contains(entity) else {
            throw CLIError(.badQuery, "--entity \(entity): the store has no such entity (it has \(stored.sorted().joined(separator: ", ")))")
        }
        return [entity]
    }

    private func dump(_ source: DumpSource, model: NSManagedObjectModel?, filter: NSPredicate?) throws {
        let names = try entityNames(source.entityNames, model: model)
        let resolve: (StoreObjectID) -> StoreRow? = { id in try? source.row(id) }
        let writer = DumpWriter(format: arguments.json ? .jsonl : (format ?? .table))
        writer.begin(store: arguments.store)
        defer { writer.end() }
        var printed = 0
        for name in names {
            let modelProperties = model?.entitiesByName[name].map(Self.storedProperties)
            let recordProperties = source.propertyOrder(name)
            for id in try source.objectIDs(name) {
                if let limit, printed >= limit { return }
                guard let row = try source.row(id) else { continue }
                if let filter, !filter.evaluate(with: RowObject(row: row, resolve: resolve, entities: source.entities)) { continue }
                let properties: [(name: String, value: StoreValue)]
                if let modelProperties {
                    properties = modelProperties.map { ($0, row[$0]) }
                } else {
                    properties = recordProperties.compactMap { name in row.contains(name) ? (name, row[name]) : nil }
                }
                writer.write(DumpObject(id: id, version: row.version, properties: properties))
                printed += 1
            }
        }
    }

    /// The properties a store keeps for an entity: its non-transient attributes and
    /// relationships, inherited ones included, attributes first, each group by name.
    private static func storedProperties(_ entity: NSEntityDescription) -> [String] {
        entity.attributesByName.filter { !$0.value.isTransient }.keys.sorted()
            + entity.relationshipsByName.filter { !$0.value.isTransient }.keys.sorted()
    }
}

import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation

/// The execution of a dictionary fetch (`resultType = .dictionaryResultType`): columns from
/// `propertiesToFetch`, grouping by `propertiesToGroupBy` with aggregate expressions, the
/// `havingPredicate`, `returnsDistinctResults`, then offset and limit.
///
/// As on Apple platforms the dictionaries describe the store, not the context: rows are read
/// from the stores and never become managed objects, and the context's unsaved changes are not
/// seen. A to-one relationship's value is the destination's `NSManagedObjectID`; nil values are
/// left out of the dictionaries.
struct DictionaryFetch {
    /// One key of the result dictionaries.
    private enum Column {
        /// A property or key path, read from each row.
        case keyPath(name: String, path: String)
        /// An ``NSExpressionDescription``; aggregate expressions are computed over a group.
        case expression(name: String, CoreDataPredicate.NSExpression, NSAttributeType, isAggregate: Bool)

        var name: String {
            switch self {
            case .keyPath(let name, _), .expression(let name, _, _, _): return name
            }
        }

        var isAggregate: Bool {
            if case .expression(_, _, _, true) = self { return true }
            return false
        }
    }

    /// The functions whose value summarises a group instead of one object.
    static let aggregateFunctions: Set<String> = ["sum:", "average:", "min:", "max:", "count:", "median:", "mode:", "stddev:"]

    private let columns: [Column]
    private let groupBy: [Column]
    private let having: CoreDataPredicate.NSPredicate?
    private let distinct: Bool
    private let entity: NSEntityDescription
    private let offset: Int
    private let limit: Int

    /// Whether rows must be complete before paging (grouping, aggregates or distinct results).
    private var pagesAfterGrouping: Bool { !groupBy.isEmpty || distinct || columns.contains(where: \.isAggregate) }

    /// Checks the request's columns against the entity.
    ///
    /// - Throws: `NSError` `NSPersistentStoreOperationError`-family codes for a key the entity
    ///   does not have, a to-many relationship or an unsupported object among the columns, a
    ///   column that is neither grouped by nor an aggregate, or a `havingPredicate` without
    ///   `propertiesToGroupBy`; each message names the column.
    init<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription) throws {
        self.entity = entity
        let fetched = request.propertiesToFetch ?? entity.properties.filter { $0 is NSAttributeDescription && !$0.isTransient }
        columns = try fetched.map { try Self.column($0, entity: entity, role: "propertiesToFetch") }
        groupBy = try (request.propertiesToGroupBy ?? []).map { try Self.column($0, entity: entity, role: "propertiesToGroupBy") }
        having = request.havingPredicate
        distinct = request.returnsDistinctResults
        offset = request.fetchOffset
        limit = request.fetchLimit
        if having != nil && groupBy.isEmpty {
            throw coreDataError(NSPersistentStoreOperationError, "havingPredicate requires propertiesToGroupBy (fetch of \(entity.name ?? "?"))")
        }
        if let aggregate = groupBy.first(where: \.isAggregate) {
            throw coreDataError(NSPersistentStoreOperationError, "propertiesToGroupBy cannot contain the aggregate '\(aggregate.name)' (fetch of \(entity.name ?? "?"))")
        }
        if !groupBy.isEmpty || columns.contains(where: \.isAggregate) {
            let grouped = Set(groupBy.map(\.name))
            for column in columns where !column.isAggregate && !grouped.contains(column.name) {
                throw coreDataError(
                    NSPersistentStoreOperationError,
                    "'\(column.name)' in propertiesToFetch of a grouped or aggregate fetch of \(entity.name ?? "?") must be in propertiesToGroupBy or be an aggregate expression")
            }
        }
    }

    private static func column(_ item: Any, entity: NSEntityDescription, role: String) throws -> Column {
        switch item {
        case let description as NSExpressionDescription:
            guard let expression = description.expression, !description.name.isEmpty else {
                throw coreDataError(NSPersistentStoreOperationError, "an NSExpressionDescription in \(role) needs a name and an expression (fetch of \(entity.name ?? "?"))")
            }
            try PredicateKeyPathCheck.check(expression: expression, entity: entity)
            let isAggregate = expression.expressionType == .function && aggregateFunctions.contains(expression.function)
                && expression.operand.expressionType == .constantValue
            return .expression(name: description.name, expression, description.expressionResultType, isAggregate: isAggregate)
        case let relationship as NSRelationshipDescription:
            return try keyPathColumn(relationship.name, entity: entity, role: role)
        case let property as NSPropertyDescription where property is NSAttributeDescription:
            return try keyPathColumn(property.name, entity: entity, role: role)
        case let property as NSPropertyDescription:
            throw coreDataError(NSPersistentStoreOperationError, "\(type(of: property)) '\(property.name)' cannot be in \(role) (fetch of \(entity.name ?? "?"))")
        case let name as String:
            return try keyPathColumn(name, entity: entity, role: role)
        default:
            throw coreDataError(NSPersistentStoreOperationError, "\(role) holds \(type(of: item)); it takes property names, NSPropertyDescriptions and NSExpressionDescriptions")
        }
    }

    private static func keyPathColumn(_ path: String, entity: NSEntityDescription, role: String) throws -> Column {
        try PredicateKeyPathCheck.check(keyPath: path, entity: entity, context: role)
        var current = entity
        for component in path.split(separator: ".").map(String.init) {
            guard let relationship = current.relationshipsByName[component], let destination = relationship.destinationEntity else { break }
            if relationship.isToMany {
                throw coreDataError(
                    NSPersistentStoreOperationError,
                    "\(role) cannot contain the to-many relationship '\(component)' of \(current.name ?? "?") ('\(path)'); use an aggregate expression")
            }
            current = destination
        }
        return .keyPath(name: path, path: path)
    }

    /// Runs the fetch against `stores` and returns its dictionaries.
    ///
    /// Complexity: one store fetch per store; O(n) column evaluations and O(n) grouping work
    /// for n matching rows (distinct results O(n) hashing).
    ///
    /// - Parameter engine: the engine that reads each store (a pinned context's snapshot).
    func run<T>(
        _ request: NSFetchRequest<T>, stores: [NSPersistentStore], model: NSManagedObjectModel,
        engine readEngine: (NSPersistentStore) -> any PersistentStoreEngine = { $0.engine }
    ) throws -> [NSDictionary] {
        let pagedInStore = !pagesAfterGrouping && stores.count <= 1
        var rows: [(RowObject, NSPersistentStore)] = []
        for store in stores {
            let storeRequest = StoreFetchRequest(
                entity: entity, includesSubentities: request.includesSubentities, predicate: request.predicate,
                sortDescriptors: request.sortDescriptors ?? [], offset: pagedInStore ? request.fetchOffset : 0,
                limit: pagedInStore ? request.fetchLimit : 0, resultType: .rows)
            let engine = readEngine(store)
            let result = try mapStoreError { () throws(StoreError) -> StoreFetchResult in try engine.execute(storeRequest) }
            let found: [StoreRow]
            switch result {
            case .rows(let matched):
                found = matched
            case .objectIDs(let ids):
                // A store that loads lazily (a user's NSIncrementalStore) answers with IDs: the
                // rows are read now, in one call, and kept in the order of the IDs.
                found = try Self.rows(of: ids, from: engine)
            case .count:
                continue
            }
            let resolve: (StoreObjectID) -> StoreRow? = { id in try? engine.row(for: id) }
            // Relationships such a store leaves out of its rows are read when a column needs them.
            let destinations: (StoreObjectID, String) -> StoreValue = { id, name in
                (try? engine.destinations(of: id, relationship: name)) ?? .null
            }
            rows += found.map { (RowObject(row: $0, resolve: resolve, entities: model.entitiesByName, destinations: destinations), store) }
        }
        if stores.count > 1, let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            rows.sort { lhs, rhs in
                for descriptor in descriptors {
                    switch descriptor.compare(lhs.0, to: rhs.0) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return false
            }
        }

        var dictionaries: [NSDictionary]
        if groupBy.isEmpty && !columns.contains(where: \.isAggregate) {
            dictionaries = rows.map { row, store in
                var values: [String: Any] = [:]
                for column in columns { values[column.name] = value(of: column, for: row, store: store, model: model) }
                return NSDictionary(dictionary: values)
            }
        } else {
            dictionaries = grouped(rows, model: model)
        }
        if let having {
            dictionaries = dictionaries.filter { dictionary in
                var variables: [String: Any] = [:]
                for (key, value) in dictionary { if let key = key as? String { variables[key] = value } }
                return having.evaluate(with: dictionary, substitutionVariables: variables)
            }
        }
        if distinct {
            var seen = Set<NSDictionary>()
            dictionaries = dictionaries.filter { seen.insert($0).inserted }
        }
        guard !pagedInStore else { return dictionaries }
        let start = min(max(0, offset), dictionaries.count)
        let end = limit > 0 ? min(dictionaries.count, start + limit) : dictionaries.count
        return Array(dictionaries[start..<end])
    }

    /// The rows of `ids` in the order of `ids`, read with one ``PersistentStoreEngine/rows(for:)``
    /// call; IDs without a row (deleted since the fetch) are left out, and a row the store gives
    /// twice or for an ID it was not asked about is used once or not at all.
    private static func rows(of ids: [StoreObjectID], from engine: any PersistentStoreEngine) throws -> [StoreRow] {
        guard !ids.isEmpty else { return [] }
        let read = try mapStoreError { () throws(StoreError) -> [StoreRow] in try engine.rows(for: ids) }
        var byID: [StoreObjectID: StoreRow] = [:]
        for row in read { byID[row.objectID] = row }
        return ids.compactMap { byID.removeValue(forKey: $0) }
    }

    /// One dictionary per group, in the order each group first appears among the sorted rows;
    /// without `propertiesToGroupBy`, one dictionary summarising all rows (even none, as SQL).
    private func grouped(_ rows: [(RowObject, NSPersistentStore)], model: NSManagedObjectModel) -> [NSDictionary] {
        var order: [NSDictionary] = []
        var members: [NSDictionary: [(RowObject, NSPersistentStore)]] = [:]
        for (row, store) in rows {
            var key: [String: Any] = [:]
            for column in groupBy { key[column.name] = value(of: column, for: row, store: store, model: model) }
            let dictionary = NSDictionary(dictionary: key)
            if members[dictionary] == nil { order.append(dictionary) }
            members[dictionary, default: []].append((row, store))
        }
        if groupBy.isEmpty && order.isEmpty { order = [NSDictionary()] }
        return order.map { key in
            let group = members[key] ?? []
            var values: [String: Any] = [:]
            for column in columns {
                if column.isAggregate {
                    values[column.name] = aggregate(column, over: group, model: model)
                } else if let value = key[column.name] {
                    values[column.name] = value
                }
            }
            return NSDictionary(dictionary: values)
        }
    }

    /// A column's value for one row, converted for a dictionary: rows become object IDs, numbers
    /// `NSNumber`s (as Apple's dictionaries hold them, so that `as? Int` works on any width).
    private func value(of column: Column, for row: RowObject, store: NSPersistentStore, model: NSManagedObjectModel) -> Any? {
        switch column {
        case .keyPath(_, let path):
            return FoundationBridge.dictionaryObject(Self.exported(row.value(forKeyPath: path), store: store, model: model))
        case .expression(_, let expression, let type, _):
            let value = Self.exported(expression.expressionValue(with: row, context: nil), store: store, model: model)
            return FoundationBridge.dictionaryObject(ExpressionResultConversion.convert(value, to: type))
        }
    }

    /// An aggregate column over a group: each argument is read from every row (through to-many
    /// key paths too), nils are dropped as SQL drops NULLs, and the function runs on the rest.
    private func aggregate(_ column: Column, over group: [(RowObject, NSPersistentStore)], model: NSManagedObjectModel) -> Any? {
        guard case .expression(_, let expression, let type, _) = column else { return nil }
        var values: [Any] = []
        for argument in expression.arguments ?? [] {
            for (row, store) in group {
                guard let value = Self.exported(argument.expressionValue(with: row, context: nil), store: store, model: model) else { continue }
                if let many = value as? [Any] {
                    values.append(contentsOf: many)
                } else if !(value is NSNull) {
                    values.append(value)
                }
            }
        }
        let summary = CoreDataPredicate.NSExpression(
            forFunction: expression.function, arguments: [CoreDataPredicate.NSExpression(forConstantValue: values)])
        return FoundationBridge.dictionaryObject(ExpressionResultConversion.convert(summary.expressionValue(with: nil, context: nil), to: type))
    }

    /// Store rows read through key paths become the object IDs of their objects.
    private static func exported(_ value: Any?, store: NSPersistentStore, model: NSManagedObjectModel) -> Any? {
        func objectID(_ id: StoreObjectID) -> Any? {
            model.entitiesByName[id.entityName].map { NSManagedObjectID(entity: $0, store: store, storeID: id) }
        }
        switch value {
        case let row as RowObject: return objectID(row.row.objectID)
        case let id as StoreObjectID: return objectID(id)
        case let many as [Any?]: return many.compactMap { exported($0, store: store, model: model) }
        default: return value
        }
    }
}

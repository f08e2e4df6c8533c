import CoreDataModel
import CoreDataStorage
import Foundation

/// How a model's entities and properties are laid out in Apple's SQLite store: entity numbers,
/// one table per entity hierarchy, a column per attribute and to-one relationship, join tables for
/// many-to-many relationships, order columns (`Formats/apple-sqlite-store.md` §3–§6). No I/O.
///
/// The PostgreSQL store keeps the same layout with typed columns (`Formats/postgresql-store.md`
/// §3): the ``SQLDialect`` decides the column types and the statements' spellings.
///
/// Made from the model alone for a new store, or from the model and what an existing store holds
/// (its `Z_PRIMARYKEY` rows and its tables' columns), whose entity numbers win.
///
/// Threading: immutable after creation; safe from any thread.
package struct SQLSchema: @unchecked Sendable {
    /// One `Z_PRIMARYKEY` row (§3).
    package struct EntityRecord: Equatable {
        package var number: Int64
        package var name: String
        package var superNumber: Int64
        package var maxKey: Int64
        package init(number: Int64, name: String, superNumber: Int64, maxKey: Int64) {
            self.number = number
            self.name = name
            self.superNumber = superNumber
            self.maxKey = maxKey
        }
    }

    /// One column holding an attribute.
    package struct AttributeColumn {
        package let slot: Int
        package let name: String
        package let column: String
        package let type: NSAttributeType
        package let externalStorage: Bool
    }

    /// One column holding a to-one relationship's destination key.
    package struct ToOneColumn {
        package let slot: Int
        package let name: String
        package let column: String
        /// The destination's hierarchy, whose table holds the key; the schema keeps it alive
        /// (a strong reference would close a cycle through the hierarchies' entities).
        package unowned let destination: Hierarchy
        /// `Z_FOK_…` in this table when the inverse is an ordered to-many (§6).
        package let orderColumn: String?
        /// The inverse to-many relationship, when there is one.
        package let inverseName: String?
    }

    /// Where a to-many relationship's destinations are kept (§6).
    package enum ToManyStorage {
        /// In the destination's to-one column (the inverse).
        /// Named by table, not held: hierarchies hold their entities, which hold these, and a
        /// reference back would be a cycle that outlives the schema.
        case inverseColumn(destinationTable: String, column: String, orderColumn: String?)
        /// In a join table.
        case joinTable(JoinTable, ownColumn: String, otherColumn: String, orderColumn: String?)
    }

    package struct ToManyRelationship {
        package let slot: Int
        package let name: String
        package let isOrdered: Bool
        package let storage: ToManyStorage
    }

    /// A many-to-many relationship's table: `Z_<n><NAME>` (§6).
    package final class JoinTable {
        package let name: String
        /// The columns, each with the order column of the relationship whose destinations it holds.
        package let columns: [(column: String, orderColumn: String?)]
        init(name: String, columns: [(column: String, orderColumn: String?)]) {
            self.name = name
            self.columns = columns
        }
    }

    /// An entity as the store sees it.
    package final class Entity {
        package let entity: NSEntityDescription
        package let name: String
        package let number: Int64
        /// The process-wide number of `name`, which the store's object IDs carry.
        package let idEntity: EntityNumber
        package let layout: PropertyLayout
        /// The table's hierarchy; the schema keeps it alive.
        package unowned let hierarchy: Hierarchy
        package var attributes: [AttributeColumn] = []
        package var toOnes: [ToOneColumn] = []
        package var toManys: [ToManyRelationship] = []
        init(entity: NSEntityDescription, name: String, number: Int64, hierarchy: Hierarchy) {
            self.entity = entity
            self.name = name
            self.number = number
            self.idEntity = EntityNumber(name)
            self.layout = entity.propertyLayout
            self.hierarchy = hierarchy
        }
    }

    /// A root entity and its subentities: one table.
    package final class Hierarchy {
        package let rootName: String
        package let rootNumber: Int64
        package let table: String
        /// Every column after `Z_PK`, `Z_ENT`, `Z_OPT`, with its declared type, in creation order.
        package var columns: [(name: String, type: String)] = []
        /// `Z<n>_<NAME>` entity columns the store already has, by to-one column (§5).
        package var entityColumns: [String: String] = [:]
        package var entities: [Entity] = []
        init(rootName: String, rootNumber: Int64, table: String) {
            self.rootName = rootName
            self.rootNumber = rootNumber
            self.table = table
        }
    }

    /// The spellings of the store's SQL.
    package let dialect: SQLDialect
    /// Entities by name.
    package let entities: [String: Entity]
    /// Entities by number.
    package let entitiesByNumber: [Int64: Entity]
    /// Hierarchies in root-number order.
    package let hierarchies: [Hierarchy]
    package let joinTables: [JoinTable]
    /// The `Z_PRIMARYKEY` rows this schema implies (the store's own when it had them).
    package let records: [EntityRecord]

    /// The layout of `model` in a store that has `records` (empty for a new store).
    ///
    /// - Throws: ``SQLSchemaError`` when a record names no entity of the model, an entity
    ///   has no record, a superentity differs, or the model has what this layout cannot hold (a
    ///   to-many relationship without an inverse).
    package init(model: NSManagedObjectModel, records existing: [EntityRecord], dialect: SQLDialect = .sqlite) throws(SQLSchemaError) {
        self.dialect = dialect
        let modelEntities = model.entities.filter { $0.name != nil }
        // Table, column and index names are made from these names and written into SQL: only
        // names SQL takes as bare identifiers are allowed (Xcode allows no others either).
        for entity in modelEntities {
            let name = entity.name ?? ""
            guard Self.isIdentifier(name) else { throw SQLSchemaError("the entity name '\(name)' cannot name \(dialect.databaseNameWithArticle) table") }
            for property in entity.properties where !Self.isIdentifier(property.name) {
                throw SQLSchemaError("the property name '\(name).\(property.name)' cannot name \(dialect.databaseNameWithArticle) column")
            }
            // Apple's columns for composite elements are not documented, and no store made by
            // Apple's framework has been seen: a guessed layout would not open Apple's stores.
            for property in entity.properties where property is NSCompositeAttributeDescription {
                throw SQLSchemaError(
                    "the composite attribute '\(name).\(property.name)' cannot be kept in \(dialect.databaseNameWithArticle) store here (Apple's column layout for composite elements is not reproduced); use the binary, XML or in-memory store")
            }
        }
        var numbers: [ObjectIdentifier: Int64] = [:]
        var records: [EntityRecord] = []
        if existing.isEmpty {
            // §3: roots by name, each followed depth-first by its subentities by name.
            var next: Int64 = 1
            func visit(_ entity: NSEntityDescription, superNumber: Int64) {
                let number = next
                next += 1
                numbers[ObjectIdentifier(entity)] = number
                records.append(EntityRecord(number: number, name: entity.name ?? "", superNumber: superNumber, maxKey: 0))
                for sub in entity.subentities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) { visit(sub, superNumber: number) }
            }
            for root in modelEntities.filter({ $0.superentity == nil }).sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
                visit(root, superNumber: 0)
            }
        } else {
            var byName: [String: NSEntityDescription] = [:]
            var byRenaming: [String: NSEntityDescription] = [:]
            for entity in modelEntities {
                if let name = entity.name { byName[name] = entity }
                if let renaming = entity.renamingIdentifier, !renaming.isEmpty { byRenaming[renaming] = entity }
            }
            for record in existing {
                guard let entity = byName[record.name] ?? byRenaming[record.name] else {
                    throw SQLSchemaError("the store's entity \(record.number) '\(record.name)' (Z_PRIMARYKEY) is no entity of the model")
                }
                guard numbers[ObjectIdentifier(entity)] == nil else {
                    throw SQLSchemaError("the store's Z_PRIMARYKEY names the model's entity '\(entity.name ?? "")' twice")
                }
                numbers[ObjectIdentifier(entity)] = record.number
            }
            for entity in modelEntities where numbers[ObjectIdentifier(entity)] == nil {
                throw SQLSchemaError("the model's entity '\(entity.name ?? "")' has no table rows in the store (no Z_PRIMARYKEY row)")
            }
            for record in existing {
                guard let entity = byName[record.name] ?? byRenaming[record.name] else { continue }
                let expectedSuper = entity.superentity.flatMap { numbers[ObjectIdentifier($0)] } ?? 0
                guard expectedSuper == record.superNumber else {
                    throw SQLSchemaError("the store's entity '\(record.name)' has superentity \(record.superNumber), the model's '\(entity.name ?? "")' has \(expectedSuper)")
                }
            }
            records = existing
        }

        var entities: [String: Entity] = [:]
        var byNumber: [Int64: Entity] = [:]
        var hierarchies: [Hierarchy] = []
        var hierarchyOfRoot: [String: Hierarchy] = [:]
        for entity in modelEntities.sorted(by: { (numbers[ObjectIdentifier($0)] ?? 0) < (numbers[ObjectIdentifier($1)] ?? 0) }) {
            guard let name = entity.name, let number = numbers[ObjectIdentifier(entity)] else { continue }
            var root = entity
            while let parent = root.superentity { root = parent }
            let rootName = root.name ?? ""
            let hierarchy: Hierarchy
            if let known = hierarchyOfRoot[rootName] {
                hierarchy = known
            } else {
                hierarchy = Hierarchy(rootName: rootName, rootNumber: numbers[ObjectIdentifier(root)] ?? number, table: "Z" + rootName.uppercased())
                hierarchyOfRoot[rootName] = hierarchy
                hierarchies.append(hierarchy)
            }
            let described = Entity(entity: entity, name: name, number: number, hierarchy: hierarchy)
            hierarchy.entities.append(described)
            entities[name] = described
            byNumber[number] = described
        }

        // §4: one column per property, on the entity that declares it; a name taken in the
        // hierarchy gets 1, 2, … in entity-number order.
        var columnOf: [String: [String: String]] = [:]  // declaring entity name → property → column
        for hierarchy in hierarchies {
            var taken: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            var typed: [(group: Int, entity: Int64, property: String, column: String, type: String)] = []
            for entity in hierarchy.entities {
                for property in entity.entity.properties.sorted(by: { $0.name < $1.name })
                where Self.declaringEntity(of: property.name, in: entity.entity) === entity.entity && !property.isTransient {
                    let declared: String
                    let group: Int
                    if let attribute = property as? NSAttributeDescription {
                        guard let type = dialect.columnType(attribute.attributeType) else { continue }
                        declared = type
                        group = Self.columnGroup(attribute.attributeType)
                    } else if let relationship = property as? NSRelationshipDescription, !relationship.isToMany {
                        declared = dialect.keyType
                        group = 0
                    } else {
                        continue
                    }
                    let base = "Z" + property.name.uppercased()
                    var column = base
                    var suffix = 1
                    while taken.contains(column) {
                        column = base + String(suffix)
                        suffix += 1
                    }
                    taken.insert(column)
                    columnOf[entity.name, default: [:]][property.name] = column
                    typed.append((group, entity.number, property.name, column, declared))
                }
            }
            typed.sort { ($0.group, $0.entity, $0.property) < ($1.group, $1.entity, $1.property) }
            hierarchy.columns = typed.map { ($0.column, $0.type) }
        }

        // §6: order columns of one-to-many relationships live in the destination's table.
        var joinTables: [String: JoinTable] = [:]
        for entity in byNumber.keys.sorted().compactMap({ byNumber[$0] }) {
            let hierarchy = entity.hierarchy
            for (slot, property) in entity.entity.layoutProperties.enumerated() where !property.isTransient {
                guard let ownerName = Self.declaringEntity(of: property.name, in: entity.entity).name else { continue }
                if let relationship = property as? NSRelationshipDescription, relationship.isToMany {
                    entity.toManys.append(try Self.toMany(
                        relationship, slot: slot, entity: entity, entities: entities, numbers: numbers, columnOf: columnOf, joinTables: &joinTables))
                    continue
                }
                guard let column = columnOf[ownerName]?[property.name] else { continue }
                if let attribute = property as? NSAttributeDescription {
                    entity.attributes.append(AttributeColumn(
                        slot: slot, name: property.name, column: column, type: attribute.attributeType,
                        externalStorage: attribute.allowsExternalBinaryDataStorage))
                } else if let relationship = property as? NSRelationshipDescription,
                          let destination = relationship.destinationEntity?.name.flatMap({ entities[$0] }) {
                    var orderColumn: String?
                    if let inverse = relationship.inverseRelationship, inverse.isToMany, inverse.isOrdered {
                        orderColumn = Self.orderColumnPrefix + column.dropFirst()
                    }
                    entity.toOnes.append(ToOneColumn(
                        slot: slot, name: property.name, column: column, destination: destination.hierarchy, orderColumn: orderColumn,
                        inverseName: relationship.inverseRelationship?.name))
                    if let orderColumn, !hierarchy.columns.contains(where: { $0.name == orderColumn }) {
                        hierarchy.columns.append((orderColumn, dialect.keyType))
                    }
                }
            }
        }
        self.entities = entities
        self.entitiesByNumber = byNumber
        self.hierarchies = hierarchies
        self.joinTables = joinTables.keys.sorted().compactMap { joinTables[$0] }
        var allRecords = records
        for index in allRecords.indices where allRecords[index].maxKey < 0 { allRecords[index].maxKey = 0 }
        self.records = allRecords
    }

    private static func toMany(
        _ relationship: NSRelationshipDescription, slot: Int, entity: Entity, entities: [String: Entity], numbers: [ObjectIdentifier: Int64],
        columnOf: [String: [String: String]], joinTables: inout [String: JoinTable]
    ) throws(SQLSchemaError) -> ToManyRelationship {
        guard let destinationEntity = relationship.destinationEntity, let destinationName = destinationEntity.name,
              let destination = entities[destinationName] else {
            throw SQLSchemaError("relationship '\(entity.name).\(relationship.name)' has no destination entity in the model")
        }
        guard let inverse = relationship.inverseRelationship, let inverseOwner = Self.declaringEntity(of: inverse.name, in: destinationEntity).name else {
            throw SQLSchemaError("to-many relationship '\(entity.name).\(relationship.name)' has no inverse; Apple's SQLite layout for it is not supported here")
        }
        if !inverse.isToMany {
            guard let column = columnOf[inverseOwner]?[inverse.name] else {
                throw SQLSchemaError("relationship '\(entity.name).\(relationship.name)': its inverse '\(destinationName).\(inverse.name)' has no column")
            }
            let orderColumn = relationship.isOrdered ? Self.orderColumnPrefix + column.dropFirst() : nil
            return ToManyRelationship(
                slot: slot, name: relationship.name, isOrdered: relationship.isOrdered,
                storage: .inverseColumn(destinationTable: destination.hierarchy.table, column: column, orderColumn: orderColumn))
        }
        // Many-to-many (§6): the table is named after the relationship of the side whose
        // declaring entity has the lower number (by name for one entity).
        let ownOwner = Self.declaringEntity(of: relationship.name, in: entity.entity)
        let inverseOwnerEntity = Self.declaringEntity(of: inverse.name, in: destinationEntity)
        let ownNumber = numbers[ObjectIdentifier(ownOwner)] ?? entity.number
        let inverseNumber = numbers[ObjectIdentifier(inverseOwnerEntity)] ?? destination.number
        let ownNamesTable = ownNumber < inverseNumber || (ownNumber == inverseNumber && relationship.name <= inverse.name)
        let tableName = ownNamesTable ? "Z_\(ownNumber)\(relationship.name.uppercased())" : "Z_\(inverseNumber)\(inverse.name.uppercased())"
        // The column holding this relationship's destinations: the destination's number and this
        // relationship's name; the other holds this side's keys: this side's number, the inverse's name.
        let destinationNumber = numbers[ObjectIdentifier(destinationEntity)] ?? destination.number
        let sourceNumber = inverse.destinationEntity.flatMap { numbers[ObjectIdentifier($0)] } ?? entity.number
        let otherColumn = "Z_\(destinationNumber)\(relationship.name.uppercased())"
        var ownColumn = "Z_\(sourceNumber)\(inverse.name.uppercased())"
        if ownColumn == otherColumn { ownColumn += "1" }
        let otherOrder = relationship.isOrdered ? Self.orderColumnPrefix + otherColumn.dropFirst(2) : nil
        let ownOrder = inverse.isOrdered ? Self.orderColumnPrefix + ownColumn.dropFirst(2) : nil
        let table: JoinTable
        if let known = joinTables[tableName] {
            table = known
        } else {
            // Columns in the table-naming side's order: its own keys first.
            let columns = ownNamesTable
                ? [(ownColumn, ownOrder), (otherColumn, otherOrder)]
                : [(otherColumn, otherOrder), (ownColumn, ownOrder)]
            table = JoinTable(name: tableName, columns: columns.map { (column: $0.0, orderColumn: $0.1) })
            joinTables[tableName] = table
        }
        return ToManyRelationship(
            slot: slot, name: relationship.name, isOrdered: relationship.isOrdered,
            storage: .joinTable(table, ownColumn: ownColumn, otherColumn: otherColumn, orderColumn: otherOrder))
    }

    /// `Z_FOK_`: the prefix of order columns (§1, §6).
    package static let orderColumnPrefix = "Z_FOK_"

    /// Whether `name` is `[A-Za-z_][A-Za-z0-9_]*`, an identifier SQL reads without quotes.
    package static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }

    /// The topmost entity of `entity`'s ancestry that has the property: where its column is.
    package static func declaringEntity(of property: String, in entity: NSEntityDescription) -> NSEntityDescription {
        var owner = entity
        while let parent = owner.superentity, parent.propertiesByName[property] != nil { owner = parent }
        return owner
    }

    /// Apple's column order (§4): integers, then dates and numbers, then text, then blobs.
    private static func columnGroup(_ type: NSAttributeType) -> Int {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType: return 0
        case .dateAttributeType, .doubleAttributeType, .floatAttributeType, .decimalAttributeType: return 1
        case .stringAttributeType, .URIAttributeType: return 2
        default: return 3
        }
    }

    /// Checks the schema against an existing store's tables; returns every missing table or
    /// column (empty when the store can hold the model's objects), and remembers the store's
    /// `Z<n>_<NAME>` entity columns (§5).
    package func problems(existingColumns: [String: [String: String]]) -> [String] {
        var problems: [String] = []
        for hierarchy in hierarchies {
            guard let columns = existingColumns[hierarchy.table] else {
                problems.append("table \(hierarchy.table) is missing")
                continue
            }
            for column in hierarchy.columns where columns[column.name] == nil {
                problems.append("\(hierarchy.table) has no column \(column.name)")
            }
            // A column the model does not know holds another version's property: writing rows
            // without it would lose its values.
            let known = Set(hierarchy.columns.map(\.name) + ["Z_PK", "Z_ENT", "Z_OPT"])
            for column in columns.keys.sorted() where !known.contains(column) && !Self.isEntityColumn(column) {
                problems.append("\(hierarchy.table) has column \(column), which the model has no property for")
            }
            for entity in hierarchy.entities {
                for toOne in entity.toOnes {
                    let suffix = "_" + toOne.column.dropFirst()
                    if let found = columns.keys.first(where: { name in
                        name.hasSuffix(suffix) && name.hasPrefix("Z") && name.dropFirst().dropLast(suffix.count).allSatisfy(\.isNumber)
                            && name.count > suffix.count + 1
                    }) {
                        hierarchy.entityColumns[toOne.column] = found
                    }
                }
            }
        }
        for table in joinTables {
            guard let columns = existingColumns[table.name] else {
                problems.append("join table \(table.name) is missing")
                continue
            }
            for column in table.columns {
                if columns[column.column] == nil { problems.append("\(table.name) has no column \(column.column)") }
                if let order = column.orderColumn, columns[order] == nil { problems.append("\(table.name) has no column \(order)") }
            }
        }
        return problems
    }

    /// Whether a column is a to-one relationship's entity column, `Z<n>_<NAME>` (§5).
    package static func isEntityColumn(_ column: String) -> Bool {
        guard column.hasPrefix("Z"), let underscore = column.firstIndex(of: "_") else { return false }
        let digits = column[column.index(after: column.startIndex)..<underscore]
        return !digits.isEmpty && digits.allSatisfy(\.isNumber) && column.index(after: underscore) < column.endIndex
    }

    /// The statements that create the entity tables, join tables and indexes of a new store
    /// (§4, §6); the store adds its own key and metadata tables.
    package func tableStatements() -> [String] {
        var statements: [String] = []
        let key = dialect.keyType
        for hierarchy in hierarchies {
            let columns = ["Z_PK \(key) PRIMARY KEY", "Z_ENT \(key)", "Z_OPT \(key)"] + hierarchy.columns.map { "\($0.name) \($0.type)" }
            statements.append("CREATE TABLE \(hierarchy.table) ( \(columns.joined(separator: ", ")) )")
            if hierarchy.entities.count > 1 {
                statements.append("CREATE INDEX \(hierarchy.table)_Z_ENT_INDEX ON \(hierarchy.table) (Z_ENT)")
            }
            var indexed: Set<String> = []
            for entity in hierarchy.entities {
                for toOne in entity.toOnes where indexed.insert(toOne.column).inserted {
                    statements.append("CREATE INDEX \(hierarchy.table)_\(toOne.column)_INDEX ON \(hierarchy.table) (\(toOne.column))")
                }
                let columnByName = Dictionary(
                    (entity.attributes.map { ($0.name, $0.column) } + entity.toOnes.map { ($0.name, $0.column) }), uniquingKeysWith: { first, _ in first })
                if dialect == .postgreSQL {
                    // The model's fetch indexes (`Formats/postgresql-store.md` §4); Apple's SQLite
                    // layout keeps only what Core Data wrote for the fixtures, which have none.
                    for index in entity.entity.indexes {
                        let columns = index.elements.compactMap { element in
                            // In the order fetches sort (nil first ascending, `NSSortDescriptor`),
                            // so an index scan yields it (read backwards for the other direction).
                            columnByName[element.propertyName].map { $0 + (element.isAscending ? " NULLS FIRST" : " DESC NULLS LAST") }
                        }
                        guard columns.count == index.elements.count, !columns.isEmpty else { continue }
                        let name = dialect.quote("Z_\(entity.name)_\(index.name)")
                        statements.append("CREATE INDEX \(name) ON \(hierarchy.table) (\(columns.joined(separator: ", ")))")
                    }
                }
                for constraint in entity.entity.uniquenessConstraintNames where entity.entity.superentity == nil || Self.ownsConstraint(constraint, entity.entity) {
                    let columns = constraint.compactMap { columnByName[$0] }
                    guard columns.count == constraint.count, !columns.isEmpty else { continue }
                    let name = dialect.quote("Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_"))")
                    // A subentity's constraint binds its own objects only: other entities of the
                    // table may share the values (§4).
                    let scope = entity.entity.superentity == nil ? "" : " WHERE Z_ENT IN (" + hierarchy.entities
                        .filter { $0.entity.isKindOf(entity: entity.entity) }.map { String($0.number) }.joined(separator: ", ") + ")"
                    statements.append("CREATE UNIQUE INDEX \(name) ON \(hierarchy.table) (\(columns.map { $0 + dialect.uniqueColumnSuffix }.joined(separator: ", ")))\(scope)")
                }
            }
        }
        for table in joinTables {
            var columns = table.columns.map { "\($0.column) \(key)" }
            columns += table.columns.compactMap { $0.orderColumn.map { "\($0) \(key)" } }
            let key = table.columns.map(\.column).joined(separator: ", ")
            statements.append("CREATE TABLE \(table.name) ( \(columns.joined(separator: ", ")), PRIMARY KEY (\(key)) )")
            if let second = table.columns.last?.column {
                statements.append("CREATE INDEX \(table.name)_\(second)_INDEX ON \(table.name) (\(second), \(table.columns.first?.column ?? second))")
            }
        }
        return statements
    }

    /// A constraint a subentity declares itself (not inherited whole from its superentity):
    /// the superentity's index already covers an inherited one.
    private static func ownsConstraint(_ constraint: [String], _ entity: NSEntityDescription) -> Bool {
        guard let parent = entity.superentity else { return true }
        return !parent.uniquenessConstraintNames.contains(constraint)
    }
}

/// A model the store's layout cannot hold, or a store that does not match the model.
package struct SQLSchemaError: Error, CustomStringConvertible, Sendable {
    package let description: String
    package init(_ description: String) { self.description = description }
}

import CoreDataModel
import CoreDataSQL
import CoreDataStorage
import Foundation
import PostgresNIO

/// How one hierarchy's table is read into store rows (`Formats/postgresql-store.md` §5): the
/// select list, and where each column lands in the result. No I/O.
///
/// A to-one column is read with the destination row's entity number, looked up by key in the
/// destination's table: a key that names no row (left by a batch delete) reads as no destination,
/// and the destination's entity is known without a column of its own.
struct PostgreSQLRowReader: @unchecked Sendable {
    let hierarchy: SQLSchema.Hierarchy
    /// `t.Z_PK, t.Z_ENT, t.Z_OPT`, the hierarchy's columns, then one entity lookup per to-one column.
    let selectList: String
    /// A column's position in the select list.
    private let position: [String: Int]
    /// The position of a to-one column's destination-entity lookup.
    private let destinationEntityPosition: [String: Int]

    init(hierarchy: SQLSchema.Hierarchy) {
        self.hierarchy = hierarchy
        var items = ["t.Z_PK", "t.Z_ENT", "t.Z_OPT"]
        var position: [String: Int] = [:]
        for column in hierarchy.columns {
            position[column.name] = items.count
            items.append("t.\(column.name)")
        }
        var lookups: [String: Int] = [:]
        for entity in hierarchy.entities {
            for toOne in entity.toOnes where lookups[toOne.column] == nil {
                lookups[toOne.column] = items.count
                items.append("(SELECT d.Z_ENT FROM \(toOne.destination.table) d WHERE d.Z_PK = t.\(toOne.column))")
            }
        }
        self.position = position
        self.destinationEntityPosition = lookups
        selectList = items.joined(separator: ", ")
    }

    /// The row's object ID, or `nil` for a row whose entity number the schema does not know.
    func objectID(_ row: PostgresRandomAccessRow, schema: SQLSchema) throws(StoreError) -> StoreObjectID? {
        let key = try Self.integer(row[0], table: hierarchy.table)
        let number = try Self.integer(row[1], table: hierarchy.table)
        guard let entity = schema.entitiesByNumber[number] else { return nil }
        return StoreObjectID(entity: entity.idEntity, primaryKey: key)
    }

    /// Decodes one row; to-many relationships are left out (their slots `nil`) for the caller
    /// to fill in one query per relationship.
    ///
    /// - Throws: ``StoreError/corrupt(detail:)`` for a value the attribute's type cannot hold or an
    ///   entity number of no entity in this table.
    func decode(_ row: PostgresRandomAccessRow, schema: SQLSchema) throws(StoreError) -> StoreRow {
        let key = try Self.integer(row[0], table: hierarchy.table)
        let number = try Self.integer(row[1], table: hierarchy.table)
        let version = try Self.integer(row[2], table: hierarchy.table)
        guard let entity = schema.entitiesByNumber[number], entity.hierarchy === hierarchy else {
            throw .corrupt(detail: "\(hierarchy.table) row Z_PK \(key) has entity number \(number), which is no entity of this table")
        }
        var slots: [StoreValue?] = .emptySlots(entity.layout.count)
        for attribute in entity.attributes {
            guard let index = position[attribute.column] else { continue }
            slots[attribute.slot] = try PostgreSQLValueCoding.decode(row[index], as: attribute.type, table: hierarchy.table)
        }
        for toOne in entity.toOnes {
            guard let index = position[toOne.column], let lookup = destinationEntityPosition[toOne.column] else { continue }
            let cell = row[index]
            guard cell.bytes != nil, row[lookup].bytes != nil else {
                slots[toOne.slot] = .null
                continue
            }
            let destinationKey = try Self.integer(cell, table: hierarchy.table)
            let destinationNumber = try Self.integer(row[lookup], table: toOne.destination.table)
            guard let destination = schema.entitiesByNumber[destinationNumber] else {
                throw .corrupt(detail: "\(toOne.destination.table) row Z_PK \(destinationKey) has entity number \(destinationNumber), which is no entity of the model")
            }
            slots[toOne.slot] = .reference(StoreObjectID(entity: destination.idEntity, primaryKey: destinationKey))
        }
        return StoreRow(objectID: StoreObjectID(entity: entity.idEntity, primaryKey: key), version: version, layout: entity.layout, slots: slots)
    }

    /// A key, entity number, version or order value.
    static func integer(_ cell: PostgresCell, table: String) throws(StoreError) -> Int64 {
        do {
            switch cell.dataType {
            case .int2: return Int64(try cell.decode(Int16.self))
            case .int4: return Int64(try cell.decode(Int32.self))
            default: return try cell.decode(Int64.self)
            }
        } catch {
            throw .corrupt(detail: "\(table).\(cell.columnName) holds no integer")
        }
    }
}

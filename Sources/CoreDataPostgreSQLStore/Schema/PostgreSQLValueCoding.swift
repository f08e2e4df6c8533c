import CoreDataModel
import CoreDataSQL
import CoreDataStorage
import Foundation
import PostgresNIO

/// Converts attribute values between store values and PostgreSQL's typed columns
/// (`Formats/postgresql-store.md` §4). No I/O.
enum PostgreSQLValueCoding {
    /// Appends `value`, an attribute of `type`, as the parameter of its column.
    ///
    /// Numbers are bound at their widest (`bigint`, `double precision`) and narrowed by
    /// PostgreSQL's assignment casts, which fail rather than truncate a value too wide.
    static func bind(_ value: StoreValue, as type: NSAttributeType, into bindings: inout PostgresBindings) throws {
        switch value {
        case .null: bindings.appendNull()
        case .bool(let flag):
            if type == .booleanAttributeType { bindings.append(flag) } else { bindings.append(Int64(flag ? 1 : 0)) }
        case .integer(let number):
            switch type {
            case .booleanAttributeType: bindings.append(number != 0)
            case .doubleAttributeType: bindings.append(Double(number))
            case .floatAttributeType: bindings.append(Float(number))
            case .decimalAttributeType: try bindings.append(Decimal(number))
            default: bindings.append(number)
            }
        case .double(let number):
            switch type {
            case .floatAttributeType: bindings.append(Float(number))
            case .decimalAttributeType: try bindings.append(Decimal(number))
            default: bindings.append(number)
            }
        case .decimal(let number): try bindings.append(number)
        case .string(let text): bindings.append(text)
        case .date(let date): bindings.append(date)
        case .data(let data): try bindings.append(data)
        case .uuid(let uuid): bindings.append(uuid)
        case .uri(let url): bindings.append(url.absoluteString)
        case .reference(let id): bindings.append(id.primaryKey)
        case .references: bindings.appendNull()
        }
    }

    /// Appends a translated fetch's parameter.
    static func bind(_ parameter: SQLParameter, into bindings: inout PostgresBindings) throws {
        switch parameter {
        case .integer(let number): bindings.append(number)
        case .real(let number): bindings.append(number)
        case .text(let text): bindings.append(text)
        case .blob(let data): try bindings.append(data)
        case .bool(let flag): bindings.append(flag)
        case .date(let date): bindings.append(date)
        case .uuid(let uuid): bindings.append(uuid)
        }
    }

    /// The store value of a cell of an attribute's column.
    ///
    /// - Throws: ``StoreError/corrupt(detail:)`` when the column's type cannot hold the
    ///   attribute (a table changed behind the store's back), naming the column.
    static func decode(_ cell: PostgresCell, as type: NSAttributeType, table: String) throws(StoreError) -> StoreValue {
        guard cell.bytes != nil else { return .null }
        do {
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
                switch cell.dataType {
                case .int2: return .integer(Int64(try cell.decode(Int16.self)))
                case .int4: return .integer(Int64(try cell.decode(Int32.self)))
                default: return .integer(try cell.decode(Int64.self))
                }
            case .booleanAttributeType:
                return .bool(try cell.decode(Bool.self))
            case .doubleAttributeType, .floatAttributeType:
                if cell.dataType == .float4 { return .double(Double(try cell.decode(Float.self))) }
                return .double(try cell.decode(Double.self))
            case .decimalAttributeType:
                return .decimal(try cell.decode(Decimal.self))
            case .stringAttributeType:
                return .string(try cell.decode(String.self))
            case .URIAttributeType:
                let text = try cell.decode(String.self)
                guard let url = URL(string: text) else {
                    throw StoreError.corrupt(detail: "\(table).\(cell.columnName) holds \"\(text)\", which is no URI")
                }
                return .uri(url)
            case .dateAttributeType:
                return .date(try cell.decode(Date.self))
            case .UUIDAttributeType:
                return .uuid(try cell.decode(UUID.self))
            case .binaryDataAttributeType, .transformableAttributeType, .objectIDAttributeType:
                return .data(try cell.decode(Data.self))
            default:
                return .null
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .corrupt(detail: "\(table).\(cell.columnName) (PostgreSQL type \(cell.dataType)) cannot hold a \(type) attribute's value")
        }
    }
}

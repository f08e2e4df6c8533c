import CoreDataModel
import Foundation

/// The SQL a store's database speaks, where the SQL stores differ: column types, boolean
/// literals, string functions (`Formats/apple-sqlite-store.md` §5 and §10,
/// `Formats/postgresql-store.md` §4 and §7). The layout (tables, columns, entity numbers) and
/// the fetch translation are shared; only these spellings are not.
package enum SQLDialect: Sendable {
    /// SQLite as Apple's Core Data uses it: dynamic types under Apple's declared names,
    /// booleans as integers.
    case sqlite
    /// PostgreSQL: typed columns, a real boolean type.
    case postgreSQL

    /// The database's name, as messages say it ("cannot name an SQLite column").
    package var databaseName: String {
        switch self {
        case .sqlite: return "SQLite"
        case .postgreSQL: return "PostgreSQL"
        }
    }

    /// "an SQLite", "a PostgreSQL".
    package var databaseNameWithArticle: String {
        switch self {
        case .sqlite: return "an SQLite"
        case .postgreSQL: return "a PostgreSQL"
        }
    }

    /// The declared type of a column holding an attribute, `nil` for an attribute with no column.
    package func columnType(_ type: NSAttributeType) -> String? {
        switch self {
        case .sqlite:
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType: return "INTEGER"
            case .decimalAttributeType: return "DECIMAL"
            case .doubleAttributeType, .floatAttributeType: return "FLOAT"
            case .stringAttributeType, .URIAttributeType: return "VARCHAR"
            case .dateAttributeType: return "TIMESTAMP"
            case .binaryDataAttributeType, .transformableAttributeType, .UUIDAttributeType, .objectIDAttributeType: return "BLOB"
            default: return nil
            }
        case .postgreSQL:
            switch type {
            case .integer16AttributeType: return "smallint"
            case .integer32AttributeType: return "integer"
            case .integer64AttributeType: return "bigint"
            case .booleanAttributeType: return "boolean"
            case .decimalAttributeType: return "numeric"
            case .doubleAttributeType: return "double precision"
            case .floatAttributeType: return "real"
            case .stringAttributeType, .URIAttributeType: return "text"
            case .dateAttributeType: return "timestamptz"
            case .UUIDAttributeType: return "uuid"
            case .binaryDataAttributeType, .transformableAttributeType, .objectIDAttributeType: return "bytea"
            default: return nil
            }
        }
    }

    /// The type of key, entity-number, version and order columns.
    package var keyType: String {
        switch self {
        case .sqlite: return "INTEGER"
        case .postgreSQL: return "bigint"
        }
    }

    /// A condition that always holds.
    package var trueSQL: String {
        switch self {
        case .sqlite: return "1"
        case .postgreSQL: return "TRUE"
        }
    }

    /// A condition that never holds.
    package var falseSQL: String {
        switch self {
        case .sqlite: return "0"
        case .postgreSQL: return "FALSE"
        }
    }

    /// A boolean attribute's column as a condition: SQLite stores booleans as integers, and a
    /// file may hold any nonzero integer for true (`Formats/apple-sqlite-store.md` §5).
    package func booleanCondition(_ column: String) -> String {
        switch self {
        case .sqlite: return "(\(column) != 0)"
        case .postgreSQL: return column
        }
    }

    /// `column` begins with the text bound twice (`?`, `?`), by characters and case kept.
    package func beginsWith(_ column: String) -> String {
        switch self {
        case .sqlite: return "substr(\(column), 1, length(?)) = ?"
        case .postgreSQL: return "left(\(column), length(?)) = ?"
        }
    }

    /// `column` ends with the text bound twice.
    package func endsWith(_ column: String) -> String {
        switch self {
        case .sqlite: return "substr(\(column), -length(?)) = ?"
        case .postgreSQL: return "right(\(column), length(?)) = ?"
        }
    }

    /// `column` contains the text bound once.
    package func contains(_ column: String) -> String {
        switch self {
        case .sqlite: return "instr(\(column), ?) > 0"
        case .postgreSQL: return "strpos(\(column), ?) > 0"
        }
    }

    /// How a unique index orders a column: SQLite's Core Data names the collation.
    package var uniqueColumnSuffix: String {
        switch self {
        case .sqlite: return " COLLATE BINARY ASC"
        case .postgreSQL: return ""
        }
    }

    /// `identifier` quoted, its quotes doubled.
    package func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// A value bound to a `?` of translated SQL, typed so that each store binds it its own way
/// (SQLite: a boolean as an integer, a date as seconds since 2001, a UUID as 16 bytes).
package enum SQLParameter: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    case bool(Bool)
    case date(Date)
    case uuid(UUID)
}

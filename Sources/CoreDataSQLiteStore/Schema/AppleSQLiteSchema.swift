import CoreDataSQL
import Foundation

/// Apple's SQLite layout is the shared SQL layout (``SQLSchema``) in the SQLite dialect.
typealias AppleSQLiteSchema = SQLSchema
typealias AppleSQLiteSchemaError = SQLSchemaError

extension SQLiteValue {
    /// A translated fetch's parameter as SQLite stores the column's value
    /// (`Formats/apple-sqlite-store.md` §5): booleans as integers, dates as seconds since
    /// 2001-01-01, UUIDs as their 16 bytes.
    init(_ parameter: SQLParameter) {
        switch parameter {
        case .integer(let number): self = .integer(number)
        case .real(let number): self = .real(number)
        case .text(let text): self = .text(text)
        case .blob(let data): self = .blob(data)
        case .bool(let flag): self = .integer(flag ? 1 : 0)
        case .date(let date): self = .real(date.timeIntervalSinceReferenceDate)
        case .uuid(let uuid): self = .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        }
    }
}

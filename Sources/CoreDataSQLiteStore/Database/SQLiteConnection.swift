import CSQLite
import Foundation

/// One SQLite database connection, the little of the C API the store needs: statements with
/// bound values, rows read by column, transactions, pragmas.
///
/// Threading: not thread-safe; the engine serializes every use under its own lock (the connection
/// is opened with `SQLITE_OPEN_NOMUTEX` for that reason).
/// Errors: every failure is an ``SQLiteError`` carrying SQLite's code and message, and the SQL
/// that failed.
final class SQLiteConnection {
    private var handle: OpaquePointer?
    let path: String

    /// Opens `path`; `create` makes the file when it is missing.
    init(path: String, readOnly: Bool, create: Bool) throws(SQLiteError) {
        self.path = path
        var flags = SQLITE_OPEN_NOMUTEX
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(code: code, message: message, sql: "open \(path)")
        }
        handle = db
        // Extended codes tell a full disk (SQLITE_FULL) and an I/O error's kind apart.
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Closes the connection; later calls fail.
    func close() {
        sqlite3_close_v2(handle)
        handle = nil
    }

    private func database(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed", sql: sql) }
        return handle
    }

    private func failure(_ code: Int32, _ sql: String) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed"
        return SQLiteError(code: code, message: message, sql: sql)
    }

    /// Whether no transaction is open (SQLite's autocommit mode).
    var isAutocommit: Bool { handle.map { sqlite3_get_autocommit($0) != 0 } ?? true }

    /// Waits up to `seconds` for another connection's lock before a statement fails with `SQLITE_BUSY`.
    func setBusyTimeout(_ seconds: Double) throws(SQLiteError) {
        // An infinite or huge timeout waits as long as SQLite can count (about 24 days).
        let wanted = (seconds * 1000).rounded()
        let milliseconds = wanted.isFinite ? Int32(clamping: Int64(max(0, min(wanted, Double(Int32.max))))) : Int32.max
        sqlite3_busy_timeout(try database("busy_timeout"), milliseconds)
    }

    /// Runs statements that return no rows (several may be separated by `;`).
    func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(try database(sql), sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(code, sql) }
    }

    /// Runs one statement with `values` bound to its `?` parameters, handing each row to `row`.
    func query(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteRow) throws(SQLiteError) -> Void) throws(SQLiteError) {
        let statement = try prepare(sql)
        try statement.bind(values)
        try statement.rows(row)
    }

    /// Runs one statement with `values` bound; returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        let statement = try prepare(sql)
        try statement.bind(values)
        try statement.rows { _ throws(SQLiteError) in }
        return Int(sqlite3_changes(try database(sql)))
    }

    /// A statement to run many times with different values.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        let db = try database(sql)
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw failure(code, sql) }
        return SQLiteStatement(statement: statement, connection: self, sql: sql)
    }

    /// The error of the last call, for a statement.
    fileprivate func lastError(_ code: Int32, _ sql: String) -> SQLiteError { failure(code, sql) }

    /// The value of a pragma that returns one value (`PRAGMA data_version`, `PRAGMA journal_mode`).
    func pragma(_ name: String) throws(SQLiteError) -> SQLiteValue {
        var result = SQLiteValue.null
        try query("PRAGMA \(name)") { (row) throws(SQLiteError) in result = row[0] }
        return result
    }

    /// Whether a table of that name exists.
    func tableExists(_ name: String) throws(SQLiteError) -> Bool {
        var found = false
        try query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]) { _ throws(SQLiteError) in found = true }
        return found
    }

    /// The columns of a table, upper-cased, with their declared types.
    func columns(of table: String) throws(SQLiteError) -> [String: String] {
        var columns: [String: String] = [:]
        try query("PRAGMA table_info(\(SQLiteConnection.quote(table)))") { (row) throws(SQLiteError) in
            if case .text(let name) = row[1] {
                if case .text(let type) = row[2] { columns[name.uppercased()] = type.uppercased() } else { columns[name.uppercased()] = "" }
            }
        }
        return columns
    }

    /// An identifier quoted for SQL: names come from the model and the file, never spliced raw.
    static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// A prepared statement. Finalized when released.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private let connection: SQLiteConnection
    let sql: String

    fileprivate init(statement: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.statement = statement
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(statement) }

    /// Binds `values` to the parameters in order, after clearing the previous run.
    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(statement, position)
            case .integer(let number): code = sqlite3_bind_int64(statement, position, number)
            case .real(let number): code = sqlite3_bind_double(statement, position, number)
            case .text(let text):
                // By byte count, not NUL-terminated: a string may hold NUL characters.
                var utf8 = Array(text.utf8)
                if utf8.isEmpty { utf8 = [0] }
                let length = text.utf8.count
                code = utf8.withUnsafeBufferPointer { buffer in
                    buffer.baseAddress.map { base in
                        base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                            sqlite3_bind_text64(statement, position, $0, sqlite3_uint64(length), SQLiteStatement.transient, UInt8(SQLITE_UTF8))
                        }
                    } ?? SQLITE_NOMEM
                }
            case .blob(let bytes):
                code = bytes.withUnsafeBytes { buffer in
                    // A zero-length blob must stay a blob, not become NULL: bind zeroblob then.
                    guard let base = buffer.baseAddress, buffer.count > 0 else { return sqlite3_bind_zeroblob(statement, position, 0) }
                    return sqlite3_bind_blob64(statement, position, base, sqlite3_uint64(buffer.count), SQLiteStatement.transient)
                }
            }
            guard code == SQLITE_OK else { throw connection.lastError(code, sql) }
        }
    }

    /// Steps through every row, then resets the statement for the next run.
    func rows(_ body: (SQLiteRow) throws(SQLiteError) -> Void) throws(SQLiteError) {
        defer { sqlite3_reset(statement) }
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw connection.lastError(code, sql) }
            try body(SQLiteRow(statement: statement))
        }
    }

    /// Runs the statement with `values`, ignoring any rows.
    func run(_ values: [SQLiteValue]) throws(SQLiteError) {
        try bind(values)
        try rows { _ throws(SQLiteError) in }
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// The current row of a statement; valid only inside the closure it is handed to.
struct SQLiteRow {
    fileprivate let statement: OpaquePointer

    var count: Int { Int(sqlite3_column_count(statement)) }

    func name(_ column: Int) -> String {
        sqlite3_column_name(statement, Int32(column)).map { String(cString: $0) } ?? ""
    }

    subscript(column: Int) -> SQLiteValue {
        let index = Int32(column)
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            let length = Int(sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
        case SQLITE_BLOB:
            let length = Int(sqlite3_column_bytes(statement, index))
            guard let bytes = sqlite3_column_blob(statement, index), length > 0 else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: length))
        default: return .null
        }
    }
}

/// A value as SQLite stores it: its five storage classes.
enum SQLiteValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The value as an error message names it ("the integer 7", "a blob of 3 bytes").
    var described: String {
        switch self {
        case .null: return "NULL"
        case .integer(let number): return "the integer \(number)"
        case .real(let number): return "the real \(number)"
        case .text(let text): return "the text '\(text.prefix(40))'"
        case .blob(let data): return "a blob of \(data.count) bytes"
        }
    }
}

/// A failed SQLite call: SQLite's (extended) result code and message, and the SQL that failed.
struct SQLiteError: Error, CustomStringConvertible, Sendable {
    let code: Int32
    let message: String
    let sql: String

    /// The primary result code (the extended code's low byte).
    var primaryCode: Int32 { code & 0xFF }
    var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    var isFull: Bool { primaryCode == SQLITE_FULL }
    var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    var isIO: Bool { primaryCode == SQLITE_IOERR }
    var isConstraint: Bool { primaryCode == SQLITE_CONSTRAINT }

    var description: String {
        let name = sqlite3_errstr(code).map { String(cString: $0) } ?? "error \(code)"
        return "SQLite \(name) (\(code)): \(message) [\(sql.prefix(200))]"
    }
}

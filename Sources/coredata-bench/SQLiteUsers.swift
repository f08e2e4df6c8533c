import CSQLite
import Foundation

/// The SQLite side: the `user` table through SQLite's C API, WAL mode, prepared statements.
/// Values are handed back as Swift values (Strings built), the same work the binary store does
/// when it returns a row.
final class SQLiteUsers {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private var db: OpaquePointer?
    let path: String

    /// Opens (creating) the database with `synchronous` = `FULL` or `NORMAL`.
    init(path: String, synchronous: String, autocheckpoint: Bool = true) throws {
        self.path = path
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw Failure(description: "sqlite3_open_v2 \(path) failed")
        }
        sqlite3_busy_timeout(db, 60_000)
        try exec("PRAGMA journal_mode=WAL")
        // Keep the WAL file after the last connection closes, as a crashed process leaves it.
        try exec("PRAGMA main.journal_size_limit=-1")
        try exec("PRAGMA synchronous=\(synchronous)")
        if !autocheckpoint { try exec("PRAGMA wal_autocheckpoint=0") }
        // An experiment's knobs (SQLite's best against a larger page cache of ours), never the
        // figures on record, which use SQLite's defaults.
        let environment = ProcessInfo.processInfo.environment
        if let mebibytes = environment["BENCH_SQLITE_CACHE_MIB"].flatMap({ Int($0) }) { try exec("PRAGMA cache_size=-\(mebibytes * 1024)") }
        if let mebibytes = environment["BENCH_SQLITE_MMAP_MIB"].flatMap({ Int($0) }) { try exec("PRAGMA mmap_size=\(mebibytes << 20)") }
    }

    deinit { sqlite3_close_v2(db) }

    func close() { sqlite3_close_v2(db); db = nil }

    func createTable(indexOnAge: Bool) throws {
        try exec("CREATE TABLE IF NOT EXISTS user(id INTEGER PRIMARY KEY, name TEXT, email TEXT, age INTEGER, score REAL, created REAL)")
        if indexOnAge { try exec("CREATE INDEX IF NOT EXISTS user_age ON user(age)") }
    }

    func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "unknown"
            sqlite3_free(message)
            throw Failure(description: "\(sql): \(text)")
        }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw Failure(description: "prepare \(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        return statement
    }

    private func step(_ statement: OpaquePointer?) throws {
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw Failure(description: "step: \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func bind(_ statement: OpaquePointer?, id: Int64, _ user: User) {
        sqlite3_bind_int64(statement, 1, id)
        sqlite3_bind_text(statement, 2, user.name, -1, Self.transient)
        sqlite3_bind_text(statement, 3, user.email, -1, Self.transient)
        sqlite3_bind_int64(statement, 4, user.age)
        sqlite3_bind_double(statement, 5, user.score)
        sqlite3_bind_double(statement, 6, user.created)
    }

    /// Inserts rows with IDs `firstID…` in one transaction.
    func insert(_ users: ArraySlice<User>, firstID: Int64) throws {
        try exec("BEGIN")
        let statement = try prepare("INSERT INTO user VALUES(?,?,?,?,?,?)")
        defer { sqlite3_finalize(statement) }
        var id = firstID
        for user in users {
            bind(statement, id: id, user)
            try step(statement)
            sqlite3_reset(statement)
            id += 1
        }
        try exec("COMMIT")
    }

    /// The persistent-history tables as Apple's SQLite store lays them out (ATRANSACTION,
    /// ACHANGE with an index on the transaction), for the history phase.
    func createHistoryTables() throws {
        try exec("CREATE TABLE IF NOT EXISTS ATRANSACTION(Z_PK INTEGER PRIMARY KEY, ZAUTHOR TEXT, ZBUNDLEID TEXT, ZCONTEXTNAME TEXT, ZPROCESSID TEXT, ZTIMESTAMP REAL)")
        try exec("CREATE TABLE IF NOT EXISTS ACHANGE(Z_PK INTEGER PRIMARY KEY, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB)")
        try exec("CREATE INDEX IF NOT EXISTS ACHANGE_TRANSACTION ON ACHANGE(ZTRANSACTIONID)")
    }

    /// One transaction per row, each also writing a history transaction and its insert change,
    /// as Apple's store does with history tracking on.
    func insertEachWithHistory(_ users: ArraySlice<User>, firstID: Int64, author: String) throws {
        let insert = try prepare("INSERT INTO user VALUES(?,?,?,?,?,?)")
        let transaction = try prepare("INSERT INTO ATRANSACTION VALUES(?,?,?,?,?,?)")
        let change = try prepare("INSERT INTO ACHANGE VALUES(NULL,0,1,?,?,NULL)")
        defer {
            sqlite3_finalize(insert)
            sqlite3_finalize(transaction)
            sqlite3_finalize(change)
        }
        var id = firstID
        for user in users {
            try exec("BEGIN")
            bind(insert, id: id, user)
            try step(insert)
            sqlite3_reset(insert)
            sqlite3_bind_int64(transaction, 1, id)
            sqlite3_bind_text(transaction, 2, author, -1, Self.transient)
            sqlite3_bind_text(transaction, 3, "coredata-bench", -1, Self.transient)
            sqlite3_bind_text(transaction, 4, "writer", -1, Self.transient)
            sqlite3_bind_text(transaction, 5, "4242", -1, Self.transient)
            sqlite3_bind_double(transaction, 6, Date().timeIntervalSinceReferenceDate)
            try step(transaction)
            sqlite3_reset(transaction)
            sqlite3_bind_int64(change, 1, id)
            sqlite3_bind_int64(change, 2, id)
            try step(change)
            sqlite3_reset(change)
            try exec("COMMIT")
            id += 1
        }
    }

    /// Reads every history transaction after `after` with its changes, building Swift values;
    /// returns the number of changes read.
    func fetchHistory(after: Int64) throws -> Int {
        let query = try prepare("SELECT t.Z_PK, t.ZAUTHOR, t.ZBUNDLEID, t.ZCONTEXTNAME, t.ZPROCESSID, t.ZTIMESTAMP, c.Z_PK, c.ZCHANGETYPE, c.ZENTITY, c.ZENTITYPK FROM ATRANSACTION t JOIN ACHANGE c ON c.ZTRANSACTIONID = t.Z_PK WHERE t.Z_PK > ? ORDER BY t.Z_PK, c.Z_PK")
        defer { sqlite3_finalize(query) }
        sqlite3_bind_int64(query, 1, after)
        var changes = 0
        var authors = 0
        while sqlite3_step(query) == SQLITE_ROW {
            let author = sqlite3_column_text(query, 1).map { String(cString: $0) }
            let bundle = sqlite3_column_text(query, 2).map { String(cString: $0) }
            let context = sqlite3_column_text(query, 3).map { String(cString: $0) }
            let process = sqlite3_column_text(query, 4).map { String(cString: $0) }
            _ = Date(timeIntervalSinceReferenceDate: sqlite3_column_double(query, 5))
            if author != nil, bundle != nil, context != nil, process != nil { authors += 1 }
            changes += Int(sqlite3_column_int64(query, 9) > 0 ? 1 : 0)
        }
        return min(changes, authors)
    }

    /// One transaction (one commit) per row.
    func insertEach(_ users: ArraySlice<User>, firstID: Int64) throws {
        let statement = try prepare("INSERT INTO user VALUES(?,?,?,?,?,?)")
        defer { sqlite3_finalize(statement) }
        var id = firstID
        for user in users {
            bind(statement, id: id, user)
            try step(statement)
            sqlite3_reset(statement)
            id += 1
        }
    }

    private func readUser(_ statement: OpaquePointer?, from column: Int32) -> User {
        User(
            name: String(cString: sqlite3_column_text(statement, column)),
            email: String(cString: sqlite3_column_text(statement, column + 1)),
            age: sqlite3_column_int64(statement, column + 2),
            score: sqlite3_column_double(statement, column + 3),
            created: sqlite3_column_double(statement, column + 4)
        )
    }

    /// The rows in the table.
    func count() throws -> Int {
        let statement = try prepare("SELECT count(*) FROM user")
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return -1 }
        return Int(sqlite3_column_int64(statement, 0))
    }

    /// Point lookups inside one read transaction; returns the sum of ages read.
    func lookups(_ ids: [Int64]) throws -> Int64 {
        try exec("BEGIN")
        let statement = try prepare("SELECT name,email,age,score,created FROM user WHERE id=?")
        defer { sqlite3_finalize(statement) }
        var sum: Int64 = 0
        for id in ids {
            sqlite3_bind_int64(statement, 1, id)
            if sqlite3_step(statement) == SQLITE_ROW { sum &+= readUser(statement, from: 0).age }
            sqlite3_reset(statement)
        }
        try exec("COMMIT")
        return sum
    }

    /// `age > 50 ORDER BY name LIMIT n`; returns the rows.
    func olderThan50ByName(limit: Int) throws -> [User] {
        let statement = try prepare("SELECT name,email,age,score,created FROM user WHERE age > 50 ORDER BY name LIMIT \(limit)")
        defer { sqlite3_finalize(statement) }
        var users: [User] = []
        while sqlite3_step(statement) == SQLITE_ROW { users.append(readUser(statement, from: 0)) }
        return users
    }

    /// Every row, reading one attribute each (the managed-object fetch's counterpart).
    func scanNames() throws -> Int {
        let statement = try prepare("SELECT id,name,email,age,score,created FROM user")
        defer { sqlite3_finalize(statement) }
        var total = 0
        while sqlite3_step(statement) == SQLITE_ROW { total &+= readUser(statement, from: 1).name.utf8.count }
        return total
    }

    /// Sets one user's age in its own transaction.
    func setAge(_ age: Int64, of id: Int64) throws {
        let statement = try prepare("UPDATE user SET age=? WHERE id=?")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, age)
        sqlite3_bind_int64(statement, 2, id)
        try step(statement)
    }

    /// Sets each user's score to its ID over `divisor`, in one transaction. (SQLite skips a row
    /// written again with the bytes it has: a change must change the value.)
    func updateScores(_ ids: ArraySlice<Int64>, divisor: Double = 3) throws {
        try exec("BEGIN")
        let statement = try prepare("UPDATE user SET score=? WHERE id=?")
        defer { sqlite3_finalize(statement) }
        for id in ids {
            sqlite3_bind_double(statement, 1, Double(id) / divisor)
            sqlite3_bind_int64(statement, 2, id)
            try step(statement)
            sqlite3_reset(statement)
        }
        try exec("COMMIT")
    }

    func delete(_ ids: ArraySlice<Int64>) throws {
        try exec("BEGIN")
        let statement = try prepare("DELETE FROM user WHERE id=?")
        defer { sqlite3_finalize(statement) }
        for id in ids {
            sqlite3_bind_int64(statement, 1, id)
            try step(statement)
            sqlite3_reset(statement)
        }
        try exec("COMMIT")
    }

    /// Opens the database and reads one row: SQLite's "open plus first lookup" (and its recovery
    /// when a WAL is left behind), then closes it.
    static func openAndLookup(path: String, id: Int64) throws -> User? {
        let opened = try Opened(path: path)
        defer { opened.close() }
        return try opened.lookup(id: id)
    }

    /// A connection opened for one lookup, closed apart so the close (which checkpoints a WAL
    /// left behind) is measured on its own.
    final class Opened {
        private var db: OpaquePointer?

        init(path: String) throws {
            guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
                throw Failure(description: "open \(path)")
            }
        }

        func lookup(id: Int64) throws -> User? {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, "SELECT name,email,age,score,created FROM user WHERE id=?", -1, &statement, nil) == SQLITE_OK else {
                throw Failure(description: "prepare: \(String(cString: sqlite3_errmsg(db)))")
            }
            defer { sqlite3_finalize(statement) }
            sqlite3_bind_int64(statement, 1, id)
            guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
            return User(
                name: String(cString: sqlite3_column_text(statement, 0)), email: String(cString: sqlite3_column_text(statement, 1)),
                age: sqlite3_column_int64(statement, 2), score: sqlite3_column_double(statement, 3), created: sqlite3_column_double(statement, 4)
            )
        }

        func close() {
            sqlite3_close_v2(db)
            db = nil
        }
    }

    /// WAL size in bytes.
    var walSize: Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? NSNumber)?.intValue ?? 0
    }
}

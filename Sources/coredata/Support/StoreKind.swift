import CoreDataBinaryFormat
import CoreDataSQLiteStore
import Foundation

/// What kind of store a file is, judged by its first bytes: the one place the CLI decides it.
///
/// A binary store starts with its magic (Formats/binary-store.md §2), or has a log beside it
/// that starts with the log's magic (Formats/wal.md §2) when its own magic is damaged; an XML
/// store is an XML document (`<?xml` or a `<database>` root, after an optional byte-order mark
/// and blanks); an Apple SQLite store (Core Data's `NSSQLiteStoreType` on Apple platforms,
/// Formats/apple-sqlite-store.md) is an SQLite 3 database, which starts with `SQLite format 3` and
/// a NUL.
enum StoreKind: String {
    case binary
    case xml
    case sqlite

    /// How many leading bytes detection reads.
    private static let probeSize = 512

    /// Detects the kind of the file at `path`.
    ///
    /// - Throws: ``CLIError`` with ``ExitStatus/unreadable`` for a missing or unreadable file,
    ///   ``ExitStatus/notAStore`` for a folder or a file of another kind.
    static func detect(path: String) throws(CLIError) -> StoreKind {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CLIError(.unreadable, "no such file: \(path)")
        }
        guard !isDirectory.boolValue else { throw CLIError(.notAStore, "\(path) is a folder, not a store file") }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError(.unreadable, "\(path) cannot be read (permission denied?)") }
        defer { try? handle.close() }
        let head: [UInt8]
        do { head = [UInt8](try handle.read(upToCount: probeSize) ?? Data()) } catch {
            throw CLIError(.unreadable, "\(path) cannot be read: \(error.localizedDescription)")
        }
        if let kind = kind(ofFirstBytes: head) { return kind }
        // A damaged magic still leaves the store's log beside it: the file is a damaged binary
        // store, for verify to report, not some other file.
        if let log = FileHandle(forReadingAtPath: path + "-wal") {
            defer { try? log.close() }
            if let logHead = try? log.read(upToCount: LogLayout.magic.count), [UInt8](logHead) == LogLayout.magic { return .binary }
        }
        throw CLIError(.notAStore, "\(path) is not a store: it starts with neither the binary store magic \(String(decoding: BinaryStoreLayout.magic, as: UTF8.self)) nor an XML declaration nor SQLite's header")
    }

    /// The kind the first bytes of a file show, or `nil` for neither.
    static func kind(ofFirstBytes bytes: [UInt8]) -> StoreKind? {
        if bytes.starts(with: BinaryStoreLayout.magic) { return .binary }
        if bytes.starts(with: AppleSQLiteStore.fileHeader) { return .sqlite }
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        let rest = bytes[start...]
        if rest.starts(with: Array("<?xml".utf8)) || rest.starts(with: Array("<database".utf8)) { return .xml }
        return nil
    }

    /// Throws the documented failure of the binary-only commands (`log`, `pages`, `checkpoint`,
    /// `compact`) for an XML store, which has no log or pages: it is rewritten whole on every save
    /// (Formats/xml-store.md §11); and for an Apple SQLite store, whose journal, pages and free
    /// space are SQLite's own (Formats/apple-sqlite-store.md §2).
    static func requireBinary(path: String, command: String) throws(CLIError) {
        switch try detect(path: path) {
        case .binary:
            return
        case .xml:
            let lacks: String
            switch command {
            case "log": lacks = "has no log"
            case "pages": lacks = "has no pages"
            case "checkpoint": lacks = "has no log to checkpoint"
            case "compact": lacks = "keeps no old versions to compact"
            default: lacks = "has no log or pages"
            }
            throw CLIError(.notApplicable, "\(path) is an XML store, which \(lacks): it is rewritten whole on every save (coredata \(command) applies to binary stores only)")
        case .sqlite:
            let lacks: String
            switch command {
            case "log": lacks = "has no log of ours: its -wal file is SQLite's own write-ahead log"
            case "pages": lacks = "has no pages of ours: its pages are SQLite's"
            case "checkpoint": lacks = "has no log of ours to checkpoint: SQLite checkpoints its own"
            case "compact": lacks = "keeps no old versions to compact: SQLite's VACUUM reclaims its free pages"
            default: lacks = "has no log or pages of ours: they are SQLite's"
            }
            throw CLIError(.notApplicable, "\(path) is an Apple SQLite store, which \(lacks) (coredata \(command) applies to binary stores only; use the sqlite3 tool)")
        }
    }
}

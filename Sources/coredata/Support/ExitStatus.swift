import ArgumentParser

/// The exit statuses of `coredata`, one per kind of failure, so scripts can tell them apart.
/// The table is in `coredata --help` and the README; keep the three in step.
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// The store is damaged or truncated: `verify` lists every damaged location, other commands
    /// name the first they met.
    case damaged = 1
    /// The file does not exist or cannot be read (`convert`: DEST cannot be written).
    case unreadable = 2
    /// The file is neither a binary store, an XML store nor an Apple SQLite store.
    case notAStore = 3
    /// Another process holds the store's lock: a writer (for reading commands) or anyone (for
    /// `checkpoint` and `compact`).
    case locked = 4
    /// `--where` does not parse, or `--entity` names no entity of the store or the model.
    case badQuery = 5
    /// The model does not load, or it does not match the store.
    case badModel = 6
    /// The command does not apply to the store's kind: `log`, `pages`, `checkpoint` and `compact`
    /// on an XML store (no log or pages: it is rewritten whole on every save) or an Apple SQLite
    /// store (SQLite's own files).
    case notApplicable = 7
    /// `convert`'s destination already exists: convert never overwrites a file.
    case destinationExists = 8
    /// `migrate`: the store cannot be migrated (no version of the model matches it, a change
    /// cannot be inferred, or an object cannot migrate); the store is unchanged.
    case migrationFailed = 9
    /// The command line is wrong (swift-argument-parser's `EX_USAGE`).
    case usage = 64
    /// Something that should not happen (a bug in coredata).
    case internalError = 70

    /// The table for `--help` and the README.
    static let table = """
        Exit status:
          0   success (verify: the store is intact)
          1   the store is damaged or truncated (verify lists every damaged location)
          2   no such file, or it cannot be read (convert: the destination cannot be written)
          3   not a store: neither a binary, an XML nor an Apple SQLite store
          4   the store is locked by another process
          5   bad query: --where does not parse, or --entity names no entity
          6   bad model: it does not load, or it does not match the store
          7   the command does not apply to an XML or SQLite store (log, pages, checkpoint,
              compact: an XML store is rewritten whole on every save, SQLite keeps its own files)
          8   convert: the destination already exists (convert never overwrites a file)
          9   migrate: the store cannot be migrated (no matching model version, a change that
              cannot be inferred, an object that cannot migrate); the store is unchanged
          64  bad command line
          70  internal error (a bug in coredata)
        """

    var code: ExitCode { ExitCode(rawValue) }
}

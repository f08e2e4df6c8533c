/// What ``BinaryStore/verify()`` found: every damaged location, and what the store holds.
public struct BinaryStoreVerification: Sendable, CustomStringConvertible {
    /// One damaged place.
    public struct Issue: Sendable, Equatable, CustomStringConvertible {
        /// `data file offset N …` or `log offset N …`.
        public var location: String
        public var problem: String

        public var description: String { "\(location): \(problem)" }
    }

    /// Every damaged location, in file order; empty when the store is intact.
    public var issues: [Issue] = []
    /// Observations that are not damage (a dropped log tail, pages past the data end).
    public var notes: [String] = []
    /// Pages read, by kind name.
    public var pagesByKind: [String: Int] = [:]
    /// Records read in data pages (all versions, tombstones included).
    public var pageRecords = 0
    /// Live objects per entity, from the index and the log.
    public var objectsByEntity: [String: Int] = [:]
    /// Committed saves in the log.
    public var logCommits = 0
    /// Valid frames in the log.
    public var logFrames = 0
    /// Stored and decoded bytes of all data pages (the compression ratio).
    public var storedPageBytes = 0
    public var decodedPageBytes = 0
    /// External data files the records name, checked whole (Formats/binary-store.md §15).
    public var externalFiles = 0
    /// The bytes of those files.
    public var externalBytes: UInt64 = 0
    /// Files in the external-data folder that no record names, by name: not damage
    /// (compaction removes them), listed in ``notes`` too.
    public var orphanedExternalFiles: [String] = []

    public var isIntact: Bool { issues.isEmpty }

    mutating func report(_ location: String, _ problem: String) {
        issues.append(Issue(location: location, problem: problem))
    }

    public var description: String {
        if isIntact { return "intact: \(objectsByEntity.values.reduce(0, +)) objects, \(pagesByKind.values.reduce(0, +)) pages, \(logCommits) saves in the log" }
        return issues.map(\.description).joined(separator: "\n")
    }
}

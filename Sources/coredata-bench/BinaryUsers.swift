import CoreData
import CoreDataBinaryStore
import CoreDataStorage
import Foundation

/// The binary store side, through the store protocol (what every context's save and fetch become).
final class BinaryUsers: Sendable {
    let store: BinaryStore
    let entity: NSEntityDescription
    let path: String
    /// The User entity's layout (the store froze the model: the same object its rows carry).
    let layout: UsersLayout

    init(path: String, model: NSManagedObjectModel, durability: BinaryStoreOptions.Durability, fileSystem: (any StoreFileSystem)? = nil,
         backgroundCheckpoints: Bool = true, checkpointThreshold: Int? = nil, metadata: StoreMetadata = StoreMetadata(), recordsHistory: Bool = false) throws {
        var options = BinaryStoreOptions()
        options.durability = durability
        options.recordsHistory = recordsHistory
        options.backgroundCheckpoints = backgroundCheckpoints
        if let checkpointThreshold { options.checkpointThreshold = checkpointThreshold }
        if let fileSystem { options.fileSystem = fileSystem }
        options.exclusiveAccess = ProcessInfo.processInfo.environment["BENCH_EXCLUSIVE"] == "1"
        // An experiment's knob, never a default: the figures on record use the store's own.
        if let mebibytes = ProcessInfo.processInfo.environment["BENCH_PAGE_CACHE_MIB"].flatMap({ Int($0) }) { options.pageCacheBytes = mebibytes << 20 }
        self.path = path
        store = try BinaryStore(path: path, model: model, metadata: metadata, options: options)
        guard let entity = model.entitiesByName["User"] else { fatalError("benchmark model has no User entity") }
        self.entity = entity
        self.layout = UsersLayout(entity.propertyLayout)
    }

    /// The entity's number, made once: `StoreObjectID(entityName:)` looks the name up under a
    /// lock, as a store's own callers avoid per object.
    static let entity = EntityNumber("User")
    static func objectID(_ key: Int64) -> StoreObjectID { StoreObjectID(entity: entity, primaryKey: key) }

    func row(_ key: Int64, _ user: User, version: Int64 = 0) -> StoreRow { layout.row(key, user, version: version) }

    /// Inserts the users in one save; returns their primary keys.
    @discardableResult
    func insert(_ users: ArraySlice<User>) throws -> [Int64] {
        let keys = try store.newPrimaryKeys(entityName: "User", count: users.count)
        var rows: [StoreRow] = []
        rows.reserveCapacity(users.count)
        for (key, user) in zip(keys, users) { rows.append(row(key, user)) }
        _ = try store.save(StoreChangeSet(inserted: rows))
        return keys
    }

    /// One save per user; with an author, each names it for persistent history.
    func insertEach(_ users: ArraySlice<User>, author: String? = nil) throws {
        let history = author.map { StoreHistoryContext(author: $0, contextName: "writer") }
        for user in users {
            let key = try store.newPrimaryKeys(entityName: "User", count: 1)[0]
            var changes = StoreChangeSet(inserted: [row(key, user)])
            changes.history = history
            _ = try store.save(changes)
        }
    }

    /// The users in the store.
    func count() throws -> Int {
        guard case .count(let count) = try store.execute(StoreFetchRequest(entity: entity, resultType: .count)) else { return -1 }
        return count
    }

    /// Point lookups; returns the sum of ages read.
    ///
    /// Each lookup reads the whole user into a `User`, Strings built, as SQLite's side does,
    /// through `visitValues(of:_:)`: the values go from the cached page to the struct, no
    /// `StoreRow` built.
    func lookups(_ keys: [Int64]) throws -> Int64 {
        var sum: Int64 = 0
        for key in keys {
            if let user = try user(key) { sum &+= user.age }
        }
        return sum
    }

    /// One user by key, read by slot into the struct; `nil` when there is none.
    func user(_ key: Int64) throws -> User? {
        var user = User(name: "", email: "", age: 0, score: 0, created: 0)
        let layout = self.layout
        let found = try store.visitValues(of: Self.objectID(key)) { slot, value in
            switch value {
            case .string(let text):
                if slot == layout.name { user.name = text } else if slot == layout.email { user.email = text }
            case .integer(let age) where slot == layout.age: user.age = age
            case .double(let score) where slot == layout.score: user.score = score
            case .date(let created) where slot == layout.created: user.created = created.timeIntervalSinceReferenceDate
            default: break
            }
        }
        guard let found else { return nil }
        precondition(found.layout === layout.layout, "coredata-bench: the store answered in another layout than the entity's")
        return user
    }

    func olderThan50ByName(limit: Int) throws -> Int {
        let request = StoreFetchRequest(
            entity: entity, predicate: NSPredicate(format: "age > 50"),
            sortDescriptors: [NSSortDescriptor(key: "name", ascending: true)], limit: limit
        )
        guard case .rows(let rows) = try store.execute(request) else { return 0 }
        return rows.count
    }

    /// Updates the score of each key (full row snapshots, as a context's save sends them).
    func updateScores(_ keys: ArraySlice<Int64>, users: [User]) throws {
        var rows: [StoreRow] = []
        rows.reserveCapacity(keys.count)
        for key in keys {
            var user = users[Int(key - 1)]
            user.score = Double(key) / 3
            rows.append(row(key, user, version: 1))
        }
        _ = try store.save(StoreChangeSet(updated: rows))
    }

    /// Sets one user's age in its own save (the row read first, as a context's save sends it).
    func setAge(_ age: Int64, of key: Int64) throws {
        guard var row = try store.row(for: Self.objectID(key)) else { return }
        row.slots[layout.age] = .integer(age)
        _ = try store.save(StoreChangeSet(updated: [row]))
    }

    func delete(_ keys: ArraySlice<Int64>, version: Int64 = 1) throws {
        _ = try store.save(StoreChangeSet(deleted: keys.map { (Self.objectID($0), version) }))
    }

    static func openAndLookup(path: String, model: NSManagedObjectModel, key: Int64) throws -> StoreRow? {
        let store = try BinaryStore(path: path, model: model, metadata: StoreMetadata())
        defer { try? store.close() }
        return try store.row(for: objectID(key))
    }

    func close() throws { try store.close() }
}

/// The slots of User's properties in a layout: rows are built by slot, as the object graph builds them.
struct UsersLayout: Sendable {
    let layout: PropertyLayout
    let name: Int, email: Int, age: Int, score: Int, created: Int

    init(_ layout: PropertyLayout) {
        func slot(_ property: String) -> Int {
            guard let slot = layout.slot(of: property) else { fatalError("User has no \(property)") }
            return slot
        }
        self.layout = layout
        (name, email, age, score, created) = (slot("name"), slot("email"), slot("age"), slot("score"), slot("created"))
    }

    func row(_ key: Int64, _ user: User, version: Int64 = 0) -> StoreRow {
        // As the library's own rows start (`emptySlots`): `Array(repeating:count:)` would spend
        // about 300 more instructions per row looking up the array's generic metadata.
        var slots: [StoreValue?] = []
        slots.reserveCapacity(layout.count)
        for _ in 0..<layout.count { slots.append(nil) }
        slots[name] = .string(user.name)
        slots[email] = .string(user.email)
        slots[age] = .integer(user.age)
        slots[score] = .double(user.score)
        slots[created] = .date(Date(timeIntervalSinceReferenceDate: user.created))
        return StoreRow(objectID: BinaryUsers.objectID(key), version: version, layout: layout, slots: slots)
    }
}

/// Counts `fdatasync` calls so the single-save workload can report syncs per save.
final class SyncCounter: StoreFileSystem, @unchecked Sendable {
    private let base = POSIXFileSystem()
    private let lock = NSLock()
    private var syncs = 0

    var count: Int { lock.withLock { syncs } }

    func open(_ path: String, create: Bool, readOnly: Bool) throws(StoreIOError) -> any StoreFile {
        CountedFile(try base.open(path, create: create, readOnly: readOnly), counter: self)
    }
    func fileExists(_ path: String) -> Bool { base.fileExists(path) }
    func remove(_ path: String) throws(StoreIOError) { try base.remove(path) }
    func rename(_ source: String, to destination: String) throws(StoreIOError) { try base.rename(source, to: destination) }
    func syncDirectory(containing path: String) throws(StoreIOError) { try base.syncDirectory(containing: path) }
    func identity(of path: String) -> FileIdentity? { base.identity(of: path) }
    func sharedCounters(at path: String, writable: Bool, permissionsOf reference: String?) throws(StoreIOError) -> (any StoreSharedCounters)? {
        try base.sharedCounters(at: path, writable: writable, permissionsOf: reference)
    }
    func openOwnFile(_ path: String, creation: StoreFileCreation, readOnly: Bool, permissionsOf reference: String?) throws(StoreIOError) -> any StoreFile {
        CountedFile(try base.openOwnFile(path, creation: creation, readOnly: readOnly, permissionsOf: reference), counter: self)
    }
    func publish(_ source: String, as destination: String) throws(StoreIOError) { try base.publish(source, as: destination) }
    func paths(startingWith prefix: String) -> [String] { base.paths(startingWith: prefix) }

    fileprivate func counted() { lock.withLock { syncs += 1 } }

    private final class CountedFile: StoreFile, @unchecked Sendable {
        let file: any StoreFile
        let counter: SyncCounter
        init(_ file: any StoreFile, counter: SyncCounter) { self.file = file; self.counter = counter }
        func read(at offset: UInt64, count: Int) throws(StoreIOError) -> [UInt8] { try file.read(at: offset, count: count) }
        func write(_ bytes: [UInt8], at offset: UInt64) throws(StoreIOError) { try file.write(bytes, at: offset) }
        func sync() throws(StoreIOError) { counter.counted(); try file.sync() }
        func size() throws(StoreIOError) -> UInt64 { try file.size() }
        func truncate(to size: UInt64) throws(StoreIOError) { try file.truncate(to: size) }
        func lock(exclusive: Bool, wait: Bool) throws(StoreIOError) -> Bool { try file.lock(exclusive: exclusive, wait: wait) }
        func unlock() { file.unlock() }
        func identity() -> FileIdentity? { file.identity() }
        func close() { file.close() }
    }
}

import CoreDataModel
import CoreDataStorage
import Foundation

/// A scratch pad of managed objects: it fetches them from stores, tracks their changes, and
/// saves the changes all at once.
///
/// Matches Apple's `NSManagedObjectContext`. A context and its objects belong to one queue: a
/// private serial queue (`.privateQueueConcurrencyType`) or the main queue
/// (`.mainQueueConcurrencyType`). Use them inside `perform`/`performAndWait` (a main-queue
/// context also directly on the main thread). In debug builds, touching a context or its objects
/// off its queue traps with a message naming the context and the thread, like Core Data's
/// concurrency debug flag; set `COREDATA_CONCURRENCY_DEBUG=0` to turn that off.
open class NSManagedObjectContext: NSObject, @unchecked Sendable {
    /// Which queue a context's work runs on.
    public enum ConcurrencyType: UInt, Sendable {
        /// Deprecated by Apple; treated like a private queue whose owner is any thread.
        case confinementConcurrencyType = 0
        /// A private serial queue owned by the context.
        case privateQueueConcurrencyType = 1
        /// The main queue.
        case mainQueueConcurrencyType = 2
    }

    /// The context's queue kind.
    public let concurrencyType: ConcurrencyType
    /// A name for debugging messages.
    public var name: String?
    /// The coordinator whose stores the context reads and writes. Set it, or ``parent``, before
    /// use; a child context reports its root parent's coordinator.
    public var persistentStoreCoordinator: NSPersistentStoreCoordinator? {
        get { parent?.persistentStoreCoordinator ?? ownCoordinator }
        set {
            precondition(parent == nil || newValue == nil, "CoreData: a context has either a parent or a persistentStoreCoordinator, not both")
            ownCoordinator = newValue
        }
    }

    private var ownCoordinator: NSPersistentStoreCoordinator?

    /// The parent context: this context's saves go into the parent (not to a store), and its
    /// fetches and faults see the parent's unsaved changes.
    ///
    /// Objects inserted in a child keep their temporary IDs when the parent saves; call
    /// `obtainPermanentIDs(for:)` before saving the child when you need permanent ones.
    // `@exclusivity(unchecked)` here and on the flags below: every fault fired and every value
    // read checks them, and the queue serialises their writes with those reads (the runtime's
    // check was some 80 instructions a read).
    @exclusivity(unchecked) public var parent: NSManagedObjectContext? {
        willSet {
            precondition(newValue !== self, "CoreData: a context cannot be its own parent")
            precondition(ownCoordinator == nil || newValue == nil, "CoreData: a context has either a parent or a persistentStoreCoordinator, not both")
        }
        didSet { if automaticallyMergesChangesFromParent { updateAutomaticMerging() } }
    }
    /// How conflicts at save are resolved; ``NSErrorMergePolicy`` (fail) by default.
    public var mergePolicy: Any = NSMergePolicy.error
    /// Whether faults whose rows were deleted by someone else read as empty instead of trapping.
    @exclusivity(unchecked) public var shouldDeleteInaccessibleFaults = true
    /// Whether the context keeps a strong reference to every object registered with it;
    /// `false` by default, as Apple's.
    ///
    /// With `false`, the context holds strongly only the objects with pending changes (inserted,
    /// updated or deleted, until saved or rolled back). Any other object stays registered as
    /// long as something else references it: your code, another live object's relationship, an
    /// undo manager, a fetched-results controller. When the last reference goes, the object is
    /// released and unregistered (``registeredObject(for:)`` returns `nil`), and a later fetch,
    /// ``object(with:)`` or relationship read makes a new instance with the stored values. With
    /// `true`, every registered object stays until ``reset()``, a saved delete, or the context's
    /// own release.
    ///
    /// Threading: set it on the context's queue. Complexity: changing it is O(registered objects).
    public var retainsRegisteredObjects: Bool {
        get { registered.retainsObjects }
        set { noteUnregistered(registered.setRetainsObjects(newValue)) }
    }
    /// Whether changes saved by other contexts of the same coordinator are merged in
    /// automatically (asynchronously, on this context's queue), as Apple's does.
    public var automaticallyMergesChangesFromParent = false {
        didSet { updateAutomaticMerging() }
    }

    var mergeObserver: NSObjectProtocol?
    /// The query generation the context is pinned to (`setQueryGenerationFrom(_:)`), if any.
    var queryGeneration: QueryGenerationPin?
    /// Set on the private contexts a user's store (`NSIncrementalStore`, `NSAtomicStore`) is
    /// handed: their objects are the store's working copies, so lifecycle hooks
    /// (`awakeFromFetch`) and registration notices to the store stay silent.
    @exclusivity(unchecked) var isStoreSide = false
    /// How old the row data a fetch left with a fault may be when the fault fires, in seconds;
    /// negative (the default) for any age, `0` for none.
    ///
    /// A fetch that returns faults (`returnsObjectsAsFaults`, the default) keeps the row it read
    /// with each fault, and firing the fault fills it from that row: the values of the fetch's
    /// time, as Apple's cached snapshots are. When more than the interval has passed, firing a
    /// fault reads the store's current row instead. As on Apple's platforms, the interval does
    /// not touch objects already filled; ``refresh(_:mergeChanges:)`` does.
    ///
    /// Objects keep no fetch time of their own (it would cost every fetched object a word): the
    /// age is measured from the oldest fetch whose rows faults may still hold. When that one is
    /// older than the interval, the context drops the rows every fault holds and measures later
    /// fetches from their own time. A fault may so be read again sooner than the interval asks,
    /// never later. There is no row cache shared between contexts: a fault with no row of its
    /// own always reads the store. A value that is not a number counts as negative.
    ///
    /// A fetch under an interval of `0` keeps no rows with its faults: each reads the store when
    /// it fires.
    ///
    /// Complexity: each time the rows expire, one pass over the context's registered objects.
    @exclusivity(unchecked) public var stalenessInterval: TimeInterval = -1
    /// When the oldest row faults may still hold was read (``stalenessInterval``), in monotonic
    /// nanoseconds (``monotonicNanoseconds()``); 0 while none holds one (none fetched since
    /// ``reset()`` or since the rows last expired). A plain integer: an optional
    /// `ContinuousClock.Instant`, a resilient type, cost every fetched row some 350 instructions
    /// of value-witness calls to test for `nil` (callgrind).
    @exclusivity(unchecked) var oldestPrefetch: UInt64 = 0

    /// The monotonic clock in nanoseconds, never 0 (which ``oldestPrefetch`` keeps for none).
    static func monotonicNanoseconds() -> UInt64 { max(1, DispatchTime.now().uptimeNanoseconds) }

    /// Notes that a fetch leaves a row with a fault: the clock is read for the first row only.
    @inline(__always)
    func notePrefetch() {
        if oldestPrefetch == 0 { oldestPrefetch = Self.monotonicNanoseconds() }
    }

    /// Whether rows fetches left with faults may still fill them (``stalenessInterval``). When
    /// they may not, drops every such row, so that rows fetched from now on count from their
    /// own time.
    func prefetchedRowsAreFresh() -> Bool {
        guard stalenessInterval >= 0, oldestPrefetch != 0 else { return true }
        // Compared in seconds as Doubles, so that an infinite interval needs no special case.
        let age = Double(Self.monotonicNanoseconds() &- oldestPrefetch) / 1e9
        if age <= stalenessInterval { return true }
        for object in registered.values where object.hasPrefetchedRow { object.prefetchedRow = nil }
        oldestPrefetch = 0
        return false
    }

    /// Fills a fault from the row a fetch left with it, when ``stalenessInterval`` allows;
    /// otherwise drops that row so that the caller reads the store's. `false` when not filled.
    func fillFromFreshPrefetchedRow(_ object: NSManagedObject) -> Bool {
        guard object.hasPrefetchedRow else { return false }
        guard prefetchedRowsAreFresh() else {
            object.prefetchedRow = nil
            return false
        }
        return object.fillFromPrefetchedRow()
    }
    /// A label stored with saved transactions (persistent history).
    public var transactionAuthor: String?
    /// Whether reading a property of this context's objects registers the read with the
    /// Observation framework, so that `withObservationTracking { object.name }` (or an
    /// `Observations` sequence) hears of the property's next change; `false` by default.
    ///
    /// Not in Apple's Core Data, whose objects offer Combine's `ObservableObject` instead. Off,
    /// a read costs nothing more; on, each object read gets an `ObservationRegistrar` (one
    /// allocation, on its first read) and each `value(forKey:)`, typed `@Managed` getter and
    /// `willAccessValue(forKey:)` call reports the key to it. Changes are reported whether it is
    /// on or not, to the tracking set up while it was on.
    ///
    /// Threading: set it on the context's queue, before the objects are read.
    @exclusivity(unchecked) public var tracksObservationAccess = false

    /// The undo manager the context registers its changes with; `nil` (no undo) by default, as
    /// Apple's.
    ///
    /// With one set, every insert, delete and change of an attribute or relationship can be
    /// undone. The context registers the changes made since it last did when it processes its
    /// pending changes: at the end of each `perform` block, at `save()`, when
    /// ``processPendingChanges()`` is called, at the end of a main-queue event for a main-queue
    /// context, and when the manager opens, closes, undoes or redoes a group (its checkpoint).
    /// Those changes are one group when the manager groups by event (``UndoManager/groupsByEvent``,
    /// the default), or join the group the caller opened. Apple groups by run-loop event instead;
    /// Linux has no run loop.
    ///
    /// Share a manager between contexts, or with other undoable code, only on one queue. Setting
    /// the property drops changes not yet registered; set it to `nil` around large imports to
    /// save the work of recording them.
    open var undoManager: UndoManager? {
        didSet {
            guard undoManager !== oldValue else { return }
            undoRecord = UndoRecord()
            tracksUndo = undoManager != nil
            observeUndoCheckpoints()
        }
    }

    /// Whether an undo manager is set; read on every change, so kept as a plain stored flag.
    @exclusivity(unchecked) var tracksUndo = false
    /// The changes not yet registered with the undo manager, as what undoes them.
    var undoRecord = UndoRecord()
    /// Set while the context registers with its undo manager, whose checkpoints it then ignores.
    @exclusivity(unchecked) var isRegisteringUndo = false
    /// Above zero while changes are not edits to undo (refreshes and merges).
    var undoSuspensions = 0
    var undoCheckpointObserver: NSObjectProtocol?

    let queue: DispatchQueue
    /// Whoever runs the context's work holds this lock and is recorded as its owner thread, so
    /// that "am I on this context's queue?" has an exact answer even when libdispatch runs a
    /// synchronous block on the caller's thread.
    private let executionLock = NSRecursiveLock()
    private let ownerLock = NSLock()
    private var ownerThread: pthread_t?
    private var ownerDepth = 0

    // `@exclusivity(unchecked)` on the registry and the pending sets: every insert, change and
    // fetched object touches them, the runtime's exclusivity check costs about 80 instructions
    // an access, and the context's queue already serialises them.

    /// Objects by ID, held unretained unless ``retainsRegisteredObjects``; the pending sets below
    /// keep changed objects alive.
    @exclusivity(unchecked) var registered = RegisteredObjects()
    /// Unsaved inserts, updates and deletes, in the order they happened.
    @exclusivity(unchecked) var pendingInserted: [ObjectIdentifier: NSManagedObject] = [:]
    @exclusivity(unchecked) var pendingUpdated: [ObjectIdentifier: NSManagedObject] = [:]
    /// Changes not yet announced by `NSManagedObjectContextObjectsDidChange` (``processPendingChanges()``).
    @exclusivity(unchecked) var changeNotice = PendingChangeNotice()
    /// Counts the change notices posted (``processPendingChanges()``).
    @exclusivity(unchecked) var changeNoticeGeneration = 0
    /// Whether a main-queue context has queued a ``processPendingChanges()`` call.
    @exclusivity(unchecked) var changeNoticeScheduled = false
    @exclusivity(unchecked) var pendingDeleted: [ObjectIdentifier: NSManagedObject] = [:]

    /// Creates a context with its queue.
    public init(concurrencyType: ConcurrencyType) {
        self.concurrencyType = concurrencyType
        switch concurrencyType {
        case .mainQueueConcurrencyType:
            queue = DispatchQueue.main
        case .privateQueueConcurrencyType, .confinementConcurrencyType:
            queue = DispatchQueue(label: "CoreData.NSManagedObjectContext")
        }
        super.init()
    }

    deinit {
        if let mergeObserver { NotificationCenter.default.removeObserver(mergeObserver) }
        if let undoCheckpointObserver { NotificationCenter.default.removeObserver(undoCheckpointObserver) }
        noteUnregistered(registered.listeningKeys)
        // The objects hold the registry's table (to leave it in their deinit): a retaining
        // registry would hold them in a cycle if it were not emptied here.
        registered.removeAll()
    }

    /// The model of the coordinator this context (or its parent) uses.
    var parentModel: NSManagedObjectModel? { persistentStoreCoordinator?.managedObjectModel }

    // MARK: Queues

    private var holdsExecution: Bool {
        ownerLock.lock()
        defer { ownerLock.unlock() }
        guard let ownerThread else { return false }
        return pthread_equal(ownerThread, pthread_self()) != 0
    }

    var isOnQueue: Bool {
        switch concurrencyType {
        case .mainQueueConcurrencyType: return Thread.isMainThread || holdsExecution
        case .privateQueueConcurrencyType: return holdsExecution
        case .confinementConcurrencyType: return true
        }
    }

    /// Runs `body` as the context's one worker.
    private func withExecution<T>(_ body: () throws -> T) rethrows -> T {
        executionLock.lock()
        ownerLock.lock()
        if ownerDepth == 0 { ownerThread = pthread_self() }
        ownerDepth += 1
        ownerLock.unlock()
        defer {
            ownerLock.lock()
            ownerDepth -= 1
            if ownerDepth == 0 { ownerThread = nil }
            ownerLock.unlock()
            executionLock.unlock()
        }
        // NSFetchRequest.execute() runs against the context whose block is running.
        return try CurrentContext.with(self, body)
    }

    /// Runs `block` on the context's queue and returns at once.
    ///
    /// As Apple's, each block ends with a call to ``processPendingChanges()``, so observers hear of
    /// its changes in one `NSManagedObjectContextObjectsDidChange`. `performAndWait` does not.
    open func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async { self.withExecution { block(); self.processPendingChanges() } }
    }

    /// Runs `block` on the context's queue and waits for it; re-entrant.
    ///
    /// The block runs after blocks already queued with `perform`, on the calling thread when the
    /// queue is free (libdispatch's synchronous dispatch), so a child context's `performAndWait`
    /// can call into a main-queue parent from the main thread.
    open func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        if isOnQueue { return try withExecution(block) }
        // The block runs while this thread waits, so handing it to the queue is safe.
        return try withoutActuallyEscaping(block) { escapable in
            nonisolated(unsafe) let work = escapable
            return try queue.sync { try self.withExecution(work) }
        }
    }

    /// Runs `block` on the context's queue and returns its result.
    ///
    /// As Apple documents for `ScheduledTaskType`: with ``ScheduledTaskType/immediate`` (the
    /// default) a caller already on the context's queue (a main-queue context's caller on the
    /// main actor, or code inside the context's own `performAndWait`) runs the block at once,
    /// before work already queued; any other caller's block is enqueued. With
    /// ``ScheduledTaskType/enqueued`` the block always goes to the end of the queue, after blocks
    /// already queued with `perform`. The method runs on its caller's actor
    /// (`nonisolated(nonsending)`), so that a main-actor caller of a main-queue context counts as
    /// on its queue. Either way, like `perform(_:)`, it ends with
    /// ``processPendingChanges()``, thrown error or not: one change notification, and one undo
    /// group, per block.
    nonisolated(nonsending) public func perform<T: Sendable>(schedule: ScheduledTaskType = .immediate, _ block: @escaping @Sendable () throws -> T) async throws -> T {
        if schedule == .immediate, isOnQueue {
            return try withExecution {
                defer { processPendingChanges() }
                return try block()
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do {
                    continuation.resume(returning: try self.withExecution {
                        defer { self.processPendingChanges() }
                        return try block()
                    })
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Runs a non-throwing `block` on the context's queue and returns its result; scheduled as
    /// the throwing form is, and like it ending with ``processPendingChanges()``.
    nonisolated(nonsending) public func perform<T: Sendable>(schedule: ScheduledTaskType = .immediate, _ block: @escaping @Sendable () -> T) async -> T {
        if schedule == .immediate, isOnQueue {
            return withExecution {
                defer { processPendingChanges() }
                return block()
            }
        }
        return await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: self.withExecution {
                    defer { self.processPendingChanges() }
                    return block()
                })
            }
        }
    }

    /// When an `async` `perform` runs its block (Apple's `NSManagedObjectContext.ScheduledTaskType`).
    public enum ScheduledTaskType: Sendable {
        /// At once when the caller is already on the context's queue; enqueued otherwise.
        case immediate
        /// Always at the end of the context's queue.
        case enqueued
    }

    static let concurrencyDebug: Bool = {
        #if DEBUG
        return ProcessInfo.processInfo.environment["COREDATA_CONCURRENCY_DEBUG"] != "0"
        #else
        return ProcessInfo.processInfo.environment["COREDATA_CONCURRENCY_DEBUG"] == "1"
        #endif
    }()

    /// Traps when the context is used off its queue (debug builds).
    func assertOnQueue(touching object: NSManagedObject? = nil) {
        guard Self.concurrencyDebug, !isOnQueue else { return }
        let what = object.map { "object \($0.objectID) of context" } ?? "context"
        preconditionFailure(
            "CoreData concurrency violation: \(what) '\(name ?? String(describing: ObjectIdentifier(self)))' "
                + "(\(concurrencyType == .mainQueueConcurrencyType ? "main queue" : "private queue")) was used on "
                + "\(Self.currentThreadDescription()); use perform or performAndWait")
    }

    /// The calling thread for a diagnostic: `thread OffQueueWorker (pthread 0x…)`, `the main
    /// thread (…)`, or `an unnamed thread (…)`. Linux reports an unnamed thread under the
    /// process's name, which is left out as it names no thread.
    static func currentThreadDescription() -> String {
        #if canImport(Glibc)
        let id = "pthread 0x" + String(UInt(pthread_self()), radix: 16)
        #else
        let id = "pthread 0x" + String(UInt(bitPattern: pthread_self()), radix: 16)
        #endif
        if Thread.isMainThread { return "the main thread (\(id))" }
        let processName = String(ProcessInfo.processInfo.processName.prefix(15))
        for name in [Thread.current.name, systemThreadName()] {
            if let name, !name.isEmpty, name != processName { return "thread \(name) (\(id))" }
        }
        return "an unnamed thread (\(id))"
    }

    /// The calling thread's name as the system knows it (`pthread_setname_np`), or `nil`.
    /// Linux's `Glibc` module does not export `pthread_getname_np`; the kernel shows the name
    /// of the calling thread at `/proc/thread-self/comm`.
    private static func systemThreadName() -> String? {
        #if os(Linux)
        guard let data = FileManager.default.contents(atPath: "/proc/thread-self/comm") else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #else
        return nil
        #endif
    }

    // MARK: Registered objects

    /// Whether the context has unsaved inserts, updates or deletes.
    public var hasChanges: Bool { !pendingInserted.isEmpty || !pendingUpdated.isEmpty || !pendingDeleted.isEmpty }

    /// Objects inserted and not yet saved.
    public var insertedObjects: Set<NSManagedObject> { Set(pendingInserted.values) }
    /// Objects changed and not yet saved (not counting inserted or deleted ones).
    public var updatedObjects: Set<NSManagedObject> { Set(pendingUpdated.values.filter { $0.hasChanges }) }
    /// Objects deleted and not yet saved.
    public var deletedObjects: Set<NSManagedObject> { Set(pendingDeleted.values) }
    /// Every object the context holds.
    public var registeredObjects: Set<NSManagedObject> { Set(registered.values).union(pendingInserted.values) }

    /// Inserts a new object; it is saved with the next `save()`.
    open func insert(_ object: NSManagedObject) {
        assertOnQueue()
        let owner = object.managedObjectContext
        if let owner, owner !== self {
            preconditionFailure("CoreData: an NSManagedObject can be in only one context: \(object.objectID) is in another context")
        }
        // A pending insert is marked inserted, and normally names this context: a new object
        // (neither) skips the lookup. Both are checked, as a merge or a conflict's resolution
        // may clear the context of an object still among the inserts.
        if owner != nil || object.lifecycle.isInserted, pendingInserted[ObjectIdentifier(object)] != nil { return }
        recordUndoExistence(of: object)
        if object.isDeleted {
            // Re-inserting an object deleted in this context undoes the delete.
            object.lifecycle.isDeleted = false
            pendingDeleted[ObjectIdentifier(object)] = nil
            return
        }
        object.managedObjectContext = self
        object.lifecycle.isInserted = true
        object.lifecycle.isDiscarded = false
        // An object with no ID yet is registered when its ID is made (NSManagedObject.objectID):
        // until then no ID can look it up, and most inserted objects are saved without one,
        // so that they never make a temporary ID nor register twice.
        if object.storedID != nil || object.hasFetchedIdentity { registered[object.objectID] = object }
        pendingInserted[ObjectIdentifier(object)] = object
        // Noted before `awakeFromInsert`, so that values it sets are part of the insert, not
        // also reported as an update.
        noteInserted(object)
        object.awakeFromInsert()
    }

    /// Marks an object deleted; its delete rules run and the delete is saved with the next `save()`.
    open func delete(_ object: NSManagedObject) {
        assertOnQueue()
        guard object.managedObjectContext === self else {
            preconditionFailure("CoreData: can't delete \(object.objectID): it belongs to a different context")
        }
        guard !object.lifecycle.isDeletedOrDiscarded else { return }
        recordUndoExistence(of: object)
        if object.isInserted {
            // An object inserted and deleted before any save simply disappears. Marked first,
            // so that delete rules leading back to it (two objects that cascade to each other)
            // end here instead of deleting it again without end; until `isInserted` is cleared
            // below, `prepareForDeletion` sees it both inserted and discarded.
            object.lifecycle.isDiscarded = true
            object.prepareForDeletion()
            applyDeleteRules(object)
            discard(object)
            noteObjectsChanged(deleted: [object])
            return
        }
        object.fireFaultIfNeeded()
        object.lifecycle.isDeleted = true
        pendingDeleted[ObjectIdentifier(object)] = object
        pendingUpdated[ObjectIdentifier(object)] = nil
        object.prepareForDeletion()
        applyDeleteRules(object)
        noteObjectsChanged(deleted: [object])
    }

    /// Takes an inserted object out of the context before any save (a delete, or its insert
    /// undone): no longer inserted nor registered, and marked discarded
    /// (``NSManagedObject/Lifecycle/isDiscarded``).
    func discard(_ object: NSManagedObject) {
        object.lifecycle.isInserted = false
        object.lifecycle.isDiscarded = true
        pendingInserted[ObjectIdentifier(object)] = nil
        // Not inserted any more, so reading the ID does not register one made now.
        registered[object.objectID] = nil
        // An ID made permanent by obtainPermanentIDs(for:) was registered with its store.
        noteUnregistered([object.objectID])
    }

    /// Called by objects when a property changes.
    ///
    /// As Apple's, each event in which an object changes reports it updated (an object inserted
    /// in an earlier event too), so observers such as a fetched-results controller see every
    /// change, not only the first since the last save.
    func objectDidChange(_ object: NSManagedObject) {
        guard !object.lifecycle.isDeletedOrDiscarded else { return }
        if !object.isInserted { pendingUpdated[ObjectIdentifier(object)] = object }
        guard object.notedChangeGeneration != changeNoticeGeneration else { return }
        object.notedChangeGeneration = changeNoticeGeneration
        noteObjectsChanged(updated: [object])
    }

    /// The object with an ID: the registered one, or a fault for it. Never `nil`; a fault whose
    /// row does not exist traps (or reads empty with ``shouldDeleteInaccessibleFaults``) when used.
    open func object(with objectID: NSManagedObjectID) -> NSManagedObject {
        assertOnQueue()
        if let object = registered[objectID] { return object }
        let object = makeObject(for: objectID, row: nil)
        return object
    }

    /// The object with an ID, read from its store if needed.
    ///
    /// - Throws: `NSManagedObjectReferentialIntegrityError` (133000) when no such object exists.
    open func existingObject(with objectID: NSManagedObjectID) throws -> NSManagedObject {
        assertOnQueue()
        if let object = registered[objectID] {
            if object.isFault { fulfillFault(object) }
            return object
        }
        if parent != nil {
            guard let snapshot = snapshotFromParent(objectID) else {
                throw coreDataError(NSManagedObjectReferentialIntegrityError, "no object with ID \(objectID) exists in the parent context")
            }
            let object = makeObject(for: objectID, row: nil)
            object.fill(fromParent: snapshot)
            object.awakeFromFetch()
            return object
        }
        guard let storeID = objectID.storeObjectID, let store = objectID.persistentStore,
              let row = try mapStoreError({ () throws(StoreError) -> StoreRow? in try readEngine(for: store).row(for: storeID) })
        else {
            throw coreDataError(NSManagedObjectReferentialIntegrityError, "no object with ID \(objectID) exists in the store")
        }
        return makeObject(for: objectID, row: row)
    }

    /// The registered object with an ID, or `nil`; never reads a store.
    open func registeredObject(for objectID: NSManagedObjectID) -> NSManagedObject? {
        registered[objectID]
    }

    /// The object for a store row ID, registered as a fault if new.
    func object(forStoreID id: StoreObjectID) -> NSManagedObject? {
        guard let coordinator = persistentStoreCoordinator,
              let entity = coordinator.managedObjectModel.entitiesByName[id.entityName],
              let store = coordinator.store(for: entity)
        else { return nil }
        return registeredOrFault(entity: entity, store: store, id: id)
    }

    /// The registered object of a store row, or a new fault for it, found by its registry key:
    /// no `NSManagedObjectID` is made unless the store listens to registrations (it is told
    /// of IDs). ``register(_:store:entities:asFault:keepsRow:refresh:)`` does the same for a fetch's rows
    /// inline: as a call to a shared helper, the fetch loop cost some 300 instructions more per
    /// row in retains and releases (callgrind).
    func registeredOrFault(entity: NSEntityDescription, store: NSPersistentStore, id: StoreObjectID) -> NSManagedObject {
        if store.observesRegistrations {
            let objectID = NSManagedObjectID(entity: entity, store: store, storeID: id)
            return registered[objectID] ?? makeObject(for: objectID, row: nil)
        }
        let key = RegisteredObjects.IDKey(entity: id.entity, primaryKey: id.primaryKey, store: store.identifierNumber)
        if let existing = registered[key, nil] { return existing }
        return makeObject(fetched: entity, store: store, primaryKey: id.primaryKey, key: key, row: nil, objectClass: EntityClassRegistry.objectClass(for: entity))
    }

    /// Registers an object for an ID: filled from `row`, or a fault when `row` is `nil`.
    ///
    /// A caller making many objects at once passes `reportingReleases: false` and calls
    /// ``reportReleasesIfMany()`` once after them (each check takes the registry's lock), and
    /// passes the entity's class when it knows it (finding it takes a lock).
    func makeObject(for objectID: NSManagedObjectID, row: StoreRow?, reportingReleases: Bool = true, objectClass: NSManagedObject.Type? = nil) -> NSManagedObject {
        let type = objectClass ?? EntityClassRegistry.objectClass(for: objectID.entity)
        // The required initializer is the only one a metatype can call; with no context it
        // neither inserts nor calls awakeFromInsert, and the defaults it sets are replaced below.
        let object = type.init(entity: objectID.entity, insertInto: nil)
        object.objectID = objectID
        object.managedObjectContext = self
        let observed = objectID.storeObservesRegistrations && !isStoreSide
        // A released object's entry is reused: its store hears of the release first.
        if observed, registered.holdsReleased(objectID) { noteUnregistered([objectID]) }
        registered[objectID] = object
        if reportingReleases { reportReleasesIfMany() }
        fillNewObject(object, row: row)
        if observed, let store = objectID.persistentStore { store.contextDidRegister([objectID]) }
        return object
    }

    /// ``makeObject(for:row:reportingReleases:objectClass:)`` for a row of a store that does
    /// not listen to registrations, registered under `key` with no ID object made.
    func makeObject(fetched entity: NSEntityDescription, store: NSPersistentStore, primaryKey: Int64, key: RegisteredObjects.IDKey, row: StoreRow?, objectClass: NSManagedObject.Type) -> NSManagedObject {
        let object = objectClass.init(entity: entity, insertInto: nil)
        object.setFetchedIdentity(store: store, primaryKey: primaryKey)
        object.managedObjectContext = self
        registered.register(object, key: key)
        fillNewObject(object, row: row)
        return object
    }

    /// Fills a new object from its row, or makes it a fault when there is none.
    private func fillNewObject(_ object: NSManagedObject, row: StoreRow?) {
        if let row {
            // Filling replaces the defaults the initializer left pending.
            object.fill(from: row)
            if !isStoreSide { object.awakeFromFetch() }
        } else {
            object.attributeValues.removeAll()
            object.isFaultState = true
        }
    }

    /// Tells the stores that listen to registrations of the objects released since the last
    /// report, once enough have gathered (a report per release would cost a call into the store
    /// each; never reporting would grow the list the registry checks).
    func reportReleasesIfMany() {
        if registered.needsSweep { noteUnregistered(registered.removeReleased()) }
    }

    /// Tells the stores of `objectIDs` that this context now holds those objects (Apple's
    /// `NSIncrementalStore.managedObjectContextDidRegisterObjects(with:)`).
    func noteRegistered(_ objectIDs: [NSManagedObjectID]) {
        forEachObservingStore(objectIDs) { $0.contextDidRegister($1) }
    }

    /// Tells the stores of `objectIDs` that this context let go of those objects.
    func noteUnregistered(_ objectIDs: [NSManagedObjectID]) {
        forEachObservingStore(objectIDs) { $0.contextDidUnregister($1) }
    }

    private func forEachObservingStore(_ objectIDs: [NSManagedObjectID], _ body: (NSPersistentStore, [NSManagedObjectID]) -> Void) {
        guard !isStoreSide else { return }
        var groups: [ObjectIdentifier: (NSPersistentStore, [NSManagedObjectID])] = [:]
        for id in objectIDs {
            guard let store = id.persistentStore, store.observesRegistrations else { continue }
            groups[ObjectIdentifier(store), default: (store, [])].1.append(id)
        }
        for (store, ids) in groups.values { body(store, ids) }
    }

    /// Reads a fault's row from its store.
    func fulfillFault(_ object: NSManagedObject) {
        guard object.isFaultState else { return }
        if parent == nil, let batch = object.faultBatch {
            fulfillBatch(batch)
            if !object.isFaultState { return }
        }
        object.isFaultState = false
        if parent != nil {
            if let snapshot = snapshotFromParent(object.objectID) {
                object.fill(fromParent: snapshot)
                object.awakeFromFetch()
            } else {
                guard shouldDeleteInaccessibleFaults else {
                    preconditionFailure("CoreData could not fulfill a fault for '\(object.objectID)': the parent context does not have the object")
                }
                object.attributeValues.removeAll()
                object.materialisedRelationships = Set(object.entity.relationshipsByName.keys)
            }
            return
        }
        if fillFromFreshPrefetchedRow(object) {
            if !isStoreSide { object.awakeFromFetch() }
            return
        }
        guard let (store, storeID) = object.storeLocation,
              let row = try? readEngine(for: store).row(for: storeID)
        else {
            guard shouldDeleteInaccessibleFaults else {
                preconditionFailure("CoreData could not fulfill a fault for '\(object.objectID)': the object was deleted from the store")
            }
            // Apple's behaviour with shouldDeleteInaccessibleFaults: the object reads as empty.
            object.attributeValues.removeAll()
            object.materialisedRelationships = Set(object.entity.relationshipsByName.keys)
            return
        }
        object.fill(from: row)
        if !isStoreSide { object.awakeFromFetch() }
    }

    /// Forgets every object and unsaved change. Objects handed out before must not be used.
    ///
    /// Posts `NSManagedObjectContextObjectsDidChange` with the objects it forgot under
    /// ``NSInvalidatedAllObjectsKey`` (an array), as Apple's does, so observers such as a
    /// fetched-results controller drop them. The context's undo and redo operations are removed
    /// from its ``undoManager``: they would act on forgotten objects.
    open func reset() {
        assertOnQueue()
        removeUndoActions()
        advanceQueryGeneration()
        // Inserted objects whose ID nobody asked for are in no registry entry.
        let forgotten = registered.values + pendingInserted.values.filter { $0.storedID == nil }
        noteUnregistered(registered.listeningKeys)
        for object in forgotten { object.managedObjectContext = nil }
        registered.removeAll()
        oldestPrefetch = 0
        pendingInserted = [:]
        pendingUpdated = [:]
        pendingDeleted = [:]
        changeNotice = PendingChangeNotice()
        changeNoticeGeneration &+= 1
        guard !forgotten.isEmpty else { return }
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: [NSInvalidatedAllObjectsKey: forgotten])
    }

    /// Throws away unsaved changes: inserted objects leave, deleted ones come back, changed
    /// ones read their saved values again.
    ///
    /// As Apple's, empties the undo stack: the context's undo and redo operations are removed
    /// from its ``undoManager`` (other clients' operations on a shared manager stay).
    open func rollback() {
        assertOnQueue()
        removeUndoActions()
        for object in pendingInserted.values {
            object.lifecycle.isInserted = false
            if let id = object.storedID { registered[id] = nil }
            object.managedObjectContext = nil
        }
        // IDs made permanent by obtainPermanentIDs(for:) were registered with their stores.
        noteUnregistered(pendingInserted.values.compactMap(\.storedID))
        for object in Array(pendingUpdated.values) + Array(pendingDeleted.values) {
            object.lifecycle.isDeleted = false
            object.withObservedChanges { object.revertToCommitted() }
        }
        // Objects changed only as inverses of rolled-back inserts revert too.
        for object in registered.values where object.hasChangedKeys { object.withObservedChanges { object.revertToCommitted() } }
        pendingInserted = [:]
        pendingUpdated = [:]
        pendingDeleted = [:]
        // What was rolled back is not announced: the objects are gone or back as they were.
        changeNotice = PendingChangeNotice()
        changeNoticeGeneration &+= 1
    }

    /// Undoes the latest group of changes (the changes pending are registered first, and are what
    /// is undone when the manager groups by event), as Apple's does by sending `undo()` to the
    /// ``undoManager``. Does nothing without an undo manager.
    ///
    /// The undone state is an ordinary unsaved change: objects come back, leave or take their old
    /// values (relationships on both sides), and the next `save()` writes them.
    ///
    /// Threading: call it on the context's queue.
    open func undo() {
        assertOnQueue()
        guard let undoManager else { return }
        processPendingChanges()
        undoManager.undo()
    }

    /// Redoes the group undone last, through the ``undoManager``. Does nothing without one.
    ///
    /// Threading: call it on the context's queue.
    open func redo() {
        assertOnQueue()
        guard let undoManager else { return }
        processPendingChanges()
        undoManager.redo()
    }

    /// Turns an object back into a fault (dropping unsaved changes unless `flag`), or re-reads it.
    open func refresh(_ object: NSManagedObject, mergeChanges flag: Bool) {
        assertOnQueue()
        // Neither an inserted object nor a discarded one has a row to read again.
        guard !object.isInserted, !object.lifecycle.isDiscarded else { return }
        // Observers hear of every property they observe, changed or not, as Apple's do.
        object.withObservedChanges { refreshValues(object, mergeChanges: flag) }
    }

    private func refreshValues(_ object: NSManagedObject, mergeChanges flag: Bool) {
        // Re-reading saved values (and putting local changes back on them) is no edit to undo.
        undoSuspensions += 1
        defer { undoSuspensions -= 1 }
        if flag && object.hasChanges {
            // Keep local changes; re-read everything else.
            let changes = object.storedChangedValues()
            fulfillAgain(object)
            for (key, value) in changes { object.kvcSetPrimitiveValue(value is NSNull ? nil : value, forKey: key) }
            return
        }
        pendingUpdated[ObjectIdentifier(object)] = nil
        object.lifecycle.isTurningIntoFault = true
        defer { object.lifecycle.isTurningIntoFault = false }
        object.willTurnIntoFault()
        object.turnIntoFault()
        object.didTurnIntoFault()
    }

    /// Refreshes every registered object, keeping unsaved changes.
    open func refreshAllObjects() {
        for object in registered.values where !object.isInserted && !object.hasChanges {
            refresh(object, mergeChanges: false)
        }
    }

    private func fulfillAgain(_ object: NSManagedObject) {
        object.turnIntoFault()
        fulfillFault(object)
    }
}

extension NSManagedObject {
    /// Sets the object's committed state and current values from a stored row.
    func fill(from row: StoreRow, alreadyCommitted: Bool = false) {
        if !alreadyCommitted { committedRow = row }
        isFaultState = false
        hasPrefetchedRow = false
        if faultBatch != nil { faultBatch = nil }
        changedSlots = 0
        if !changedOtherKeys.isEmpty { changedOtherKeys = [] }
        // Values convert from the row slot by slot when first read (AttributeSlots).
        attributeValues.load(from: row)
        if hasRelationshipState {
            if !toOneValues.isEmpty { toOneValues = [:] }
            if !toManyValues.isEmpty { toManyValues = [:] }
            if !materialisedRelationships.isEmpty { materialisedRelationships = [] }
        }
    }

    /// Fills a fault from the row a fetch read for it (``prefetchedRow``), which is already its
    /// committed row, so it is not assigned again; `false` when the fetch left no row.
    func fillFromPrefetchedRow() -> Bool {
        guard hasPrefetchedRow, let row = committedRow else { return false }
        fill(from: row, alreadyCommitted: true)
        return true
    }

    func revertToCommitted() {
        changedKeys = []
        if let row = committedRow {
            fill(from: row)
        } else {
            attributeValues.removeAll()
            toOneValues = [:]
            toManyValues = [:]
        }
    }

    func turnIntoFault() {
        changedKeys = []
        prefetchedRow = nil
        faultBatch = nil
        fetchedPropertyValues = [:]
        attributeValues.removeAll()
        toOneValues = [:]
        toManyValues = [:]
        materialisedRelationships = []
        isFaultState = !hasTemporaryID || managedObjectContext?.parent != nil
        parentRelationships = nil
    }
}

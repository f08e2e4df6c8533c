import CoreDataModel
import CoreDataPredicate
import Foundation

/// Keeps the results of a fetch request up to date as its context changes, in sections, and
/// tells a delegate what changed, object by object.
///
/// Matches Apple's `NSFetchedResultsController`. After ``performFetch()``, every
/// `NSManagedObjectContextObjectsDidChange` of ``managedObjectContext`` (one per event, or per
/// `perform` block: inserts, updates, deletes, refreshes and merges) is applied incrementally:
/// each changed object is found by binary search on the sort values it had, and moves only when
/// its sort values moved it; nothing is re-sorted or fetched again.
///
/// Linux differences:
/// - The delegate receives the controller as `NSFetchedResultsController<NSFetchRequestResult>`
///   (Apple's signature). Swift generics do not convert a controller of another result type to
///   that one, so the delegate is handed a view of this controller (``erased``) that shares its
///   results; `controller === myController` is false in the delegate, compare
///   ``fetchedObjects`` or ``fetchRequest`` instead.
/// - Optional protocol methods need Objective-C: the delegate's methods all have default
///   implementations, and every callback is made (the per-object calls, then
///   `didChangeContentWith:` with the `CollectionDifference` of object IDs, then
///   `controllerDidChangeContent`). Apple calls only the difference callback when a delegate
///   implements it.
/// - `cacheName` is accepted and has no effect (no section cache is written).
/// - Only managed-object results are tracked; a controller over dictionaries or object IDs
///   keeps the results of its fetch. `fetchLimit` and `fetchOffset` apply to ``performFetch()``
///   only, as Apple's change tracking ignores them.
///
/// Threading: use it on its context's queue, as the context.
/// Complexity: a change of an object costs O(log n) comparisons to find it, plus moving the
/// references of the objects after it when it is inserted, deleted or moved.
open class NSFetchedResultsController<ResultType: NSFetchRequestResult>: NSObject {
    /// The request the results come from; its sort descriptors order them.
    public let fetchRequest: NSFetchRequest<ResultType>
    /// The context the request runs in and whose changes are tracked.
    public let managedObjectContext: NSManagedObjectContext
    /// The key path whose value names each object's section; `nil` for one section.
    public let sectionNameKeyPath: String?
    /// Apple's section cache name; accepted, not used.
    public let cacheName: String?
    /// Told of changes once ``performFetch()`` has run.
    open weak var delegate: NSFetchedResultsControllerDelegate? {
        get { state.delegate }
        set { state.delegate = newValue }
    }

    let state: FetchedResultsState

    /// Creates a controller. The request must have sort descriptors; when `sectionNameKeyPath`
    /// is given, the first sort descriptor must order the sections (Apple's rule).
    public init(fetchRequest: NSFetchRequest<ResultType>, managedObjectContext context: NSManagedObjectContext, sectionNameKeyPath: String?, cacheName name: String?) {
        self.fetchRequest = fetchRequest
        self.managedObjectContext = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = name
        self.state = FetchedResultsState(context: context, sectionNameKeyPath: sectionNameKeyPath)
        super.init()
        state.erasedFactory = { [unowned self] in self.makeErased() }
    }

    /// A view of `state` typed for the delegate.
    private init(sharing state: FetchedResultsState, request: NSFetchRequest<ResultType>, context: NSManagedObjectContext, sectionNameKeyPath: String?, cacheName: String?) {
        self.fetchRequest = request
        self.managedObjectContext = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
        self.state = state
        super.init()
    }

    private func makeErased() -> NSFetchedResultsController<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: fetchRequest.entityName ?? fetchRequest.entity?.name ?? "")
        request.entity = fetchRequest.entity
        request.predicate = fetchRequest.predicate
        request.sortDescriptors = fetchRequest.sortDescriptors
        request.includesSubentities = fetchRequest.includesSubentities
        request.resultType = fetchRequest.resultType
        return NSFetchedResultsController<NSFetchRequestResult>(
            sharing: state, request: request, context: managedObjectContext, sectionNameKeyPath: sectionNameKeyPath, cacheName: cacheName)
    }

    /// This controller as `NSFetchedResultsController<NSFetchRequestResult>`, the type Apple's
    /// delegate methods take: the same results, sections and delegate.
    public var erased: NSFetchedResultsController<NSFetchRequestResult> { state.erased() }

    /// Runs the fetch and starts tracking the context's changes.
    ///
    /// - Throws: the fetch's error. A request without sort descriptors is a programmer error
    ///   and traps, as Apple's raises.
    open func performFetch() throws {
        guard let sorts = fetchRequest.sortDescriptors, !sorts.isEmpty else {
            preconditionFailure("CoreData: an NSFetchedResultsController needs a fetch request with sort descriptors")
        }
        let request = fetchRequest
        let entity = request.entity ?? request.entityName.flatMap { managedObjectContext.persistentStoreCoordinator?.managedObjectModel.entitiesByName[$0] }
        try state.performFetch(
            fetch: { [managedObjectContext] in try managedObjectContext.fetch(request).map { $0 as AnyObject } },
            entity: entity, predicate: request.predicate, includesSubentities: request.includesSubentities, sortDescriptors: sorts,
            tracksChanges: request.resultType == .managedObjectResultType)
    }

    /// The fetched objects in order, section after section; `nil` before ``performFetch()``.
    open var fetchedObjects: [ResultType]? { state.fetched ? state.objects.map { unsafeDowncast($0, to: ResultType.self) } : nil }

    /// The sections; `nil` before ``performFetch()``.
    open var sections: [NSFetchedResultsSectionInfo]? { state.fetched ? state.sectionInfos() : nil }

    /// The object at `indexPath` (section, item). An index path outside the results is a
    /// programmer error and traps, as Apple's raises.
    open func object(at indexPath: IndexPath) -> ResultType {
        guard let index = state.flatIndex(of: indexPath) else {
            preconditionFailure("CoreData: NSFetchedResultsController has no object at \(indexPath) (\(state.sectionCount) sections, \(state.objects.count) objects)")
        }
        return unsafeDowncast(state.objects[index], to: ResultType.self)
    }

    /// Where `object` is in the results; `nil` when it is not one of them.
    /// Complexity: O(log n) for a managed object, O(n) otherwise.
    open func indexPath(forObject object: ResultType) -> IndexPath? {
        state.indexPath(of: object as AnyObject)
    }

    /// The titles of the section index: each section's ``sectionIndexTitle(forSectionName:)``,
    /// without repeats.
    open var sectionIndexTitles: [String] {
        var titles: [String] = []
        for name in state.sectionNames {
            if let title = sectionIndexTitle(forSectionName: name), titles.last != title { titles.append(title) }
        }
        return titles
    }

    /// A section's index title: the delegate's, else the name's first letter, capitalized.
    open func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        if let delegate = state.delegate, let title = delegate.controller(erased, sectionIndexTitleForSectionName: sectionName) { return title }
        return sectionName.first.map { String($0).uppercased() }
    }

    /// The section whose index title is `title`, at `sectionIndex` in ``sectionIndexTitles``.
    open func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        state.sectionNames.firstIndex { sectionIndexTitle(forSectionName: $0) == title } ?? min(sectionIndex, max(0, state.sectionCount - 1))
    }

    /// Deletes a section cache; there is none on Linux, so this does nothing.
    open class func deleteCache(withName name: String?) {}

    /// The fetched objects after each change the controller applies, starting with the current
    /// results: a Swift-native way to follow them in server code.
    ///
    /// The sequence ends when the controller is released. Each element is read on the context's
    /// queue and handed over as it is: read its objects on that queue too.
    public var results: AsyncStream<[ResultType]> {
        let (stream, continuation) = AsyncStream<[ResultType]>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // The objects belong to the context's queue; the stream hands them over as they are.
        if let current = fetchedObjects {
            nonisolated(unsafe) let snapshot = current
            continuation.yield(snapshot)
        }
        state.addListener { [weak self] in
            guard let self else { return false }
            nonisolated(unsafe) let objects = self.fetchedObjects ?? []
            continuation.yield(objects)
            return true
        }
        return stream
    }
}

/// What changed for an object or a section.
public enum NSFetchedResultsChangeType: UInt, Sendable {
    case insert = 1
    case delete = 2
    case move = 3
    case update = 4
}

/// One section of a fetched-results controller.
public protocol NSFetchedResultsSectionInfo: AnyObject {
    /// The section's name: the value of the section key path (`""` for nil or one section).
    var name: String { get }
    /// The section's index title.
    var indexTitle: String? { get }
    /// How many objects the section holds.
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    var objects: [Any]? { get }
}

/// Told by a fetched-results controller how its results change.
///
/// Apple's methods are optional; here each has a default that does nothing (see
/// ``NSFetchedResultsController`` for the order of the calls).
public protocol NSFetchedResultsControllerDelegate: AnyObject {
    /// Before the changes of one context notification.
    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)
    /// One object inserted (`newIndexPath`), deleted (`indexPath`), moved (both) or updated (both).
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?)
    /// A section inserted or deleted.
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange sectionInfo: NSFetchedResultsSectionInfo, atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType)
    /// After the changes of one context notification.
    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)
    /// The index title of a section; `nil` for the default.
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, sectionIndexTitleForSectionName sectionName: String) -> String?
    /// The changes as a difference of the object IDs in result order (Linux has no diffable
    /// data source snapshot to hand over).
    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChangeContentWith difference: CollectionDifference<NSManagedObjectID>)
}

extension NSFetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {}
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange sectionInfo: NSFetchedResultsSectionInfo, atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType) {}
    public func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, sectionIndexTitleForSectionName sectionName: String) -> String? { nil }
    public func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChangeContentWith difference: CollectionDifference<NSManagedObjectID>) {}
}

extension IndexPath {
    /// An index path of a section and an item in it (UIKit's and AppKit's spelling).
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
    /// An index path of a section and a row in it (UIKit's spelling).
    public init(row: Int, section: Int) { self.init(indexes: [section, row]) }
    /// The section: the first index.
    public var section: Int { self[0] }
    /// The item: the second index.
    public var item: Int { self[1] }
    /// The row: the second index.
    public var row: Int { self[1] }
}

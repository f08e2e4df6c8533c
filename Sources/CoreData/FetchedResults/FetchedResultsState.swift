import CoreDataModel
import CoreDataPredicate
import Foundation

/// The results of a fetched-results controller and their incremental upkeep, shared by the
/// controller and the view of it its delegate receives.
///
/// The results are one array in order (sections one after another, as the first sort descriptor
/// groups them), each managed object with the sort values it had when it was placed and a
/// sequence number that breaks ties, so an object is found by binary search even after its values
/// changed. Sections are runs of that array: their names and start offsets.
///
/// Threading: used on the context's queue only.
final class FetchedResultsState {
    weak var delegate: NSFetchedResultsControllerDelegate?
    let sectionNameKeyPath: String?
    private weak var context: NSManagedObjectContext?
    private var observer: NSObjectProtocol?
    var erasedFactory: (() -> NSFetchedResultsController<NSFetchRequestResult>)?
    private weak var erasedView: NSFetchedResultsController<NSFetchRequestResult>?
    /// Called after each applied change; a listener returning `false` is dropped.
    private var listeners: [() -> Bool] = []

    private(set) var fetched = false
    private(set) var objects: [AnyObject] = []
    /// Per object: its sort values as placed and its tie-breaking sequence number.
    private var placed: [ObjectIdentifier: (values: [Any?], sequence: Int)] = [:]
    private var nextSequence = 0
    private(set) var sectionNames: [String] = []
    /// The offset in ``objects`` where each section starts.
    private var sectionStarts: [Int] = []

    private var entity: NSEntityDescription?
    private var predicate: CoreDataPredicate.NSPredicate?
    private var includesSubentities = true
    private var sortDescriptors: [CoreDataPredicate.NSSortDescriptor] = []

    init(context: NSManagedObjectContext, sectionNameKeyPath: String?) {
        self.context = context
        self.sectionNameKeyPath = sectionNameKeyPath
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    func erased() -> NSFetchedResultsController<NSFetchRequestResult> {
        if let erasedView { return erasedView }
        guard let made = erasedFactory?() else { preconditionFailure("CoreData: a fetched-results controller view outlived its controller") }
        erasedView = made
        return made
    }

    func addListener(_ listener: @escaping () -> Bool) { listeners.append(listener) }

    // MARK: Fetching

    func performFetch(
        fetch: () throws -> [AnyObject], entity: NSEntityDescription?, predicate: CoreDataPredicate.NSPredicate?, includesSubentities: Bool,
        sortDescriptors: [CoreDataPredicate.NSSortDescriptor], tracksChanges: Bool
    ) throws {
        let results = try fetch()
        self.entity = entity
        self.predicate = predicate
        self.includesSubentities = includesSubentities
        self.sortDescriptors = sortDescriptors
        placed = [:]
        placed.reserveCapacity(results.count)
        positionsValid = false
        quietEvents = 0
        nextSequence = 0
        var ordered: [(object: AnyObject, values: [Any?], sequence: Int)] = []
        ordered.reserveCapacity(results.count)
        for object in results {
            let values = tracksChanges ? sortValues(of: object) : []
            ordered.append((object, values, nextSequence))
            nextSequence += 1
        }
        if tracksChanges {
            // The store's order, made total by the sequence, is the order binary search expects.
            ordered.sort { precedes($0.values, $0.sequence, $1.values, $1.sequence) }
            for entry in ordered { placed[ObjectIdentifier(entry.object)] = (entry.values, entry.sequence) }
        }
        objects = ordered.map(\.object)
        if tracksChanges { rebuildPositions() }
        rebuildSections()
        fetched = true
        if let observer { NotificationCenter.default.removeObserver(observer) }
        observer = nil
        if tracksChanges, let context {
            // Posted on the context's queue, where this state is used: no hop is needed.
            nonisolated(unsafe) weak let weakSelf = self
            observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { note in
                weakSelf?.apply(note.userInfo ?? [:])
            }
        }
    }

    // MARK: Reading

    var sectionCount: Int { sectionNames.count }

    func sectionRange(_ section: Int) -> Range<Int> {
        let end = section + 1 < sectionStarts.count ? sectionStarts[section + 1] : objects.count
        return sectionStarts[section]..<end
    }

    func flatIndex(of indexPath: IndexPath) -> Int? {
        guard indexPath.count == 2, indexPath[0] >= 0, indexPath[0] < sectionCount else { return nil }
        let range = sectionRange(indexPath[0])
        guard indexPath[1] >= 0, indexPath[1] < range.count else { return nil }
        return range.lowerBound + indexPath[1]
    }

    func indexPath(of object: AnyObject) -> IndexPath? {
        let index: Int?
        if let entry = placed[ObjectIdentifier(object)] {
            index = position(of: object, values: entry.values, sequence: entry.sequence)
        } else {
            index = objects.firstIndex { $0 === object }
        }
        return index.map(indexPath(ofFlat:))
    }

    func indexPath(ofFlat index: Int) -> IndexPath {
        var low = 0
        var high = sectionStarts.count
        while low < high {
            let middle = (low + high) / 2
            if sectionStarts[middle] <= index { low = middle + 1 } else { high = middle }
        }
        let section = max(0, low - 1)
        return IndexPath(item: index - (sectionStarts.isEmpty ? 0 : sectionStarts[section]), section: section)
    }

    func sectionInfos() -> [NSFetchedResultsSectionInfo] {
        sectionNames.indices.map { section in
            FetchedResultsSection(name: sectionNames[section], objects: Array(objects[sectionRange(section)]), indexTitle: indexTitle(of: sectionNames[section]))
        }
    }

    private func indexTitle(of name: String) -> String? {
        if let delegate, let title = delegate.controller(erased(), sectionIndexTitleForSectionName: name) { return title }
        return name.first.map { String($0).uppercased() }
    }

    // MARK: Ordering

    private func sortValues(of object: AnyObject) -> [Any?] {
        sortDescriptors.map { descriptor in
            guard let key = descriptor.key else { return object }
            if let managed = object as? NSManagedObject { return managed.value(forKeyPath: key) }
            return (object as? KeyValueReadable)?.value(forKeyPath: key)
        }
    }

    private func compare(_ a: [Any?], _ b: [Any?]) -> ComparisonResult {
        for (index, descriptor) in sortDescriptors.enumerated() where index < a.count && index < b.count {
            var result: ComparisonResult
            switch (a[index], b[index]) {
            case (nil, nil): result = .orderedSame
            case (nil, _): result = .orderedAscending
            case (_, nil): result = .orderedDescending
            case let (x?, y?): result = Self.fastOrder(x, y, descriptor) ?? descriptor.comparator(x, y)
            }
            if !descriptor.ascending {
                result = result == .orderedAscending ? .orderedDescending : (result == .orderedDescending ? .orderedAscending : .orderedSame)
            }
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }

    /// The order of two values of one common type, without the general comparison's casts:
    /// strings under the default `compare:` selector, integers, doubles and dates; `nil` for
    /// anything else (the descriptor's own comparison then decides).
    private static func fastOrder(_ x: Any, _ y: Any, _ descriptor: CoreDataPredicate.NSSortDescriptor) -> ComparisonResult? {
        func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult { a < b ? .orderedAscending : (b < a ? .orderedDescending : .orderedSame) }
        switch (x, y) {
        case let (a as String, b as String):
            guard descriptor.comparesStoredValuesBySelector, descriptor.selector == nil || descriptor.selector == .compare else { return nil }
            return order(a, b)
        case let (a as Int64, b as Int64): return order(a, b)
        case let (a as Int32, b as Int32): return order(a, b)
        case let (a as Int16, b as Int16): return order(a, b)
        case let (a as Int, b as Int): return order(a, b)
        case let (a as Double, b as Double): return order(a, b)
        case let (a as Date, b as Date): return order(a, b)
        default: return nil
        }
    }

    private func precedes(_ a: [Any?], _ sequenceA: Int, _ b: [Any?], _ sequenceB: Int) -> Bool {
        switch compare(a, b) {
        case .orderedAscending: return true
        case .orderedDescending: return false
        case .orderedSame: return sequenceA < sequenceB
        }
    }

    /// The first index whose object does not precede (`values`, `sequence`).
    private func insertionIndex(values: [Any?], sequence: Int) -> Int {
        var low = 0
        var high = objects.count
        while low < high {
            let middle = (low + high) / 2
            let entry = placed[ObjectIdentifier(objects[middle])] ?? ([], Int.max)
            if precedes(entry.values, entry.sequence, values, sequence) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func position(of object: AnyObject, values: [Any?], sequence: Int) -> Int? {
        if positionsValid {
            guard let index = positions[ObjectIdentifier(object)], index < objects.count, objects[index] === object else { return nil }
            return index
        }
        let index = insertionIndex(values: values, sequence: sequence)
        return index < objects.count && objects[index] === object ? index : nil
    }

    /// Where each object is, while no insert, delete or move has shifted them since it was made:
    /// a run of changes that only update objects finds each in O(1) instead of by binary search.
    private var positions: [ObjectIdentifier: Int] = [:]
    private var positionsValid = false
    /// Change events since the positions were last valid that shifted nothing.
    private var quietEvents = 0

    private func rebuildPositions() {
        positions.removeAll(keepingCapacity: true)
        positions.reserveCapacity(objects.count)
        for (index, object) in objects.enumerated() { positions[ObjectIdentifier(object)] = index }
        positionsValid = true
    }

    private func sectionName(of object: AnyObject) -> String {
        guard let sectionNameKeyPath else { return "" }
        let value = (object as? NSManagedObject)?.value(forKeyPath: sectionNameKeyPath)
        switch value {
        case nil, is NSNull: return ""
        case let string as String: return string
        case let value?: return "\(value)"
        }
    }

    private func rebuildSections() {
        sectionNames = []
        sectionStarts = []
        guard sectionNameKeyPath != nil else {
            // One section, none when there is nothing to show (Apple's).
            if !objects.isEmpty {
                sectionNames = [""]
                sectionStarts = [0]
            }
            return
        }
        for (index, object) in objects.enumerated() {
            let name = sectionName(of: object)
            if sectionNames.last != name || sectionNames.isEmpty {
                sectionNames.append(name)
                sectionStarts.append(index)
            }
        }
    }

    // MARK: Changes

    /// Whether `object` belongs in the results now.
    private func matches(_ object: NSManagedObject) -> Bool {
        guard !object.isDeleted, object.managedObjectContext === context else { return false }
        if let entity {
            guard object.entity === entity || (includesSubentities && object.entity.isKindOf(entity: entity)) else { return false }
        }
        return predicate?.evaluate(with: object) ?? true
    }

    /// Events that only update objects after which the position table is rebuilt (O(n)) so
    /// the next lookups cost O(1): a rebuild pays for itself after about this many binary searches.
    private static let quietEventsBeforeRebuild = 32

    /// Applies one `NSManagedObjectContextObjectsDidChange`.
    private func apply(_ info: [AnyHashable: Any]) {
        func objects(_ key: String) -> [NSManagedObject] {
            switch info[key] {
            case let set as Set<NSManagedObject>: return Array(set)
            case let array as [NSManagedObject]: return array
            case let set as NSSet: return set.allObjects.compactMap { $0 as? NSManagedObject }
            default: return []
            }
        }
        let deleted = objects(NSDeletedObjectsKey) + objects(NSInvalidatedObjectsKey)
        let changed = objects(NSInsertedObjectsKey) + objects(NSUpdatedObjectsKey) + objects(NSRefreshedObjectsKey)
        var removals: [(object: NSManagedObject, index: Int)] = []
        var additions: [(object: NSManagedObject, values: [Any?])] = []
        var updates: [(object: NSManagedObject, index: Int)] = []
        var seen = Set<ObjectIdentifier>()
        for object in deleted where seen.insert(ObjectIdentifier(object)).inserted {
            if let entry = placed[ObjectIdentifier(object)], let index = position(of: object, values: entry.values, sequence: entry.sequence) {
                removals.append((object, index))
            }
        }
        for object in changed where seen.insert(ObjectIdentifier(object)).inserted {
            let entry = placed[ObjectIdentifier(object)]
            let index = entry.flatMap { position(of: object, values: $0.values, sequence: $0.sequence) }
            guard matches(object) else {
                if let index { removals.append((object, index)) }
                continue
            }
            let values = sortValues(of: object)
            if let index, let entry {
                let sameSection = sectionNameKeyPath == nil || sectionName(of: object) == sectionName(ofFlat: index)
                if compare(values, entry.values) == .orderedSame, sameSection {
                    updates.append((object, index))
                } else {
                    // Moved, unless its new values still put it between its neighbours.
                    removals.append((object, index))
                    additions.append((object, values))
                }
            } else if index == nil {
                additions.append((object, values))
            }
        }
        guard !removals.isEmpty || !additions.isEmpty || !updates.isEmpty else { return }
        if removals.isEmpty && additions.isEmpty {
            // Nothing shifts: the positions stay valid; after a run of such events, rebuild them.
            quietEvents += 1
            if !positionsValid, quietEvents >= Self.quietEventsBeforeRebuild { rebuildPositions() }
        } else {
            positionsValid = false
            quietEvents = 0
        }
        deliver(removals: removals, additions: additions, updates: updates)
    }

    private func sectionName(ofFlat index: Int) -> String {
        sectionNames.isEmpty ? "" : sectionNames[indexPath(ofFlat: index).section]
    }

    private func deliver(removals: [(object: NSManagedObject, index: Int)], additions: [(object: NSManagedObject, values: [Any?])], updates: [(object: NSManagedObject, index: Int)]) {
        let oldPaths = Dictionary(uniqueKeysWithValues: (removals + updates).map { (ObjectIdentifier($0.object), indexPath(ofFlat: $0.index)) })
        let oldSections = sectionNames
        let moved = Set(additions.map { ObjectIdentifier($0.object) }).intersection(removals.map { ObjectIdentifier($0.object) })

        // Remove from the end so earlier offsets stay valid, then place the additions.
        let descending = removals.sorted { $0.index > $1.index }
        for removal in descending {
            objects.remove(at: removal.index)
            placed[ObjectIdentifier(removal.object)] = nil
        }
        for addition in additions {
            let sequence = nextSequence
            nextSequence += 1
            let index = insertionIndex(values: addition.values, sequence: sequence)
            objects.insert(addition.object, at: index)
            placed[ObjectIdentifier(addition.object)] = (addition.values, sequence)
        }
        if !removals.isEmpty || !additions.isEmpty { rebuildSections() }

        guard let delegate else { notifyListeners(); return }
        let controller = erased()
        delegate.controllerWillChangeContent(controller)
        // Sections first, as Apple reports them.
        let newSections = Set(sectionNames)
        let formerSections = Set(oldSections)
        for (index, name) in oldSections.enumerated() where !newSections.contains(name) {
            delegate.controller(controller, didChange: FetchedResultsSection(name: name, objects: [], indexTitle: indexTitle(of: name)), atSectionIndex: index, for: .delete)
        }
        for (index, name) in sectionNames.enumerated() where !formerSections.contains(name) {
            let section = FetchedResultsSection(name: name, objects: Array(objects[sectionRange(index)]), indexTitle: indexTitle(of: name))
            delegate.controller(controller, didChange: section, atSectionIndex: index, for: .insert)
        }
        for removal in removals where !moved.contains(ObjectIdentifier(removal.object)) {
            delegate.controller(controller, didChange: removal.object, at: oldPaths[ObjectIdentifier(removal.object)], for: .delete, newIndexPath: nil)
        }
        var insertionOffsets: [(offset: Int, object: NSManagedObject)] = []
        for addition in additions {
            let key = ObjectIdentifier(addition.object)
            guard let entry = placed[key], let offset = position(of: addition.object, values: entry.values, sequence: entry.sequence) else { continue }
            insertionOffsets.append((offset, addition.object))
            let newPath = indexPath(ofFlat: offset)
            if moved.contains(key) {
                delegate.controller(controller, didChange: addition.object, at: oldPaths[key], for: .move, newIndexPath: newPath)
            } else {
                delegate.controller(controller, didChange: addition.object, at: nil, for: .insert, newIndexPath: newPath)
            }
        }
        let shifted = !removals.isEmpty || !additions.isEmpty
        for update in updates {
            let key = ObjectIdentifier(update.object)
            let newPath = shifted ? indexPath(of: update.object) : oldPaths[key]
            delegate.controller(controller, didChange: update.object, at: oldPaths[key], for: .update, newIndexPath: newPath)
        }
        // The difference of the object IDs in result order, built from the offsets (removals in
        // the old order, insertions in the new): O(changes), not a diff of the whole results.
        var changes: [CollectionDifference<NSManagedObjectID>.Change] = []
        for removal in descending {
            changes.append(.remove(offset: removal.index, element: removal.object.objectID, associatedWith: nil))
        }
        for insertion in insertionOffsets {
            changes.append(.insert(offset: insertion.offset, element: insertion.object.objectID, associatedWith: nil))
        }
        if let difference = CollectionDifference(changes) {
            delegate.controller(controller, didChangeContentWith: difference)
        }
        delegate.controllerDidChangeContent(controller)
        notifyListeners()
    }

    private func notifyListeners() {
        listeners = listeners.filter { $0() }
    }
}

/// One section's snapshot, as ``NSFetchedResultsController/sections`` returns it.
final class FetchedResultsSection: NSFetchedResultsSectionInfo {
    let name: String
    let indexTitle: String?
    private let members: [AnyObject]

    init(name: String, objects: [AnyObject], indexTitle: String?) {
        self.name = name
        self.members = objects
        self.indexTitle = indexTitle
    }

    var numberOfObjects: Int { members.count }
    var objects: [Any]? { members }
}

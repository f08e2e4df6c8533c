import CoreDataModel
import Foundation

/// The `NSMutableOrderedSet` that `mutableOrderedSetValue(forKey:)` returns: a live view of one
/// ordered to-many relationship of one object.
///
/// Foundation's `NSOrderedSet` reads some members (`firstObject`, `lastObject`, `array`,
/// iteration) straight from its own storage, and subclasses cannot override them; so this class
/// keeps that storage a mirror of the relationship. The object refreshes the mirror whenever
/// the relationship changes (through this proxy, the setter or the inverse), and the reads it
/// can override make sure the relationship is loaded first. Every change is computed on the
/// relationship's current destinations and set through the object's setter, one call per
/// operation. Threading: the object's context queue.
final class RelationshipMutableOrderedSet: NSMutableOrderedSet {
    private let object: NSManagedObject
    private let relationship: NSRelationshipDescription
    /// Set while the mirror is rewritten: the overrides then act on Foundation's storage only.
    private var isMirroring = false

    init(object: NSManagedObject, relationship: NSRelationshipDescription) {
        self.object = object
        self.relationship = relationship
        super.init(capacity: 0)
        mirror(object.currentDestinations(relationship))
    }

    override init(objects: UnsafePointer<AnyObject>?, count cnt: Int) {
        preconditionFailure("CoreData: a relationship's mutable ordered set comes from mutableOrderedSetValue(forKey:)")
    }

    required convenience init(arrayLiteral elements: Any...) {
        preconditionFailure("CoreData: a relationship's mutable ordered set comes from mutableOrderedSetValue(forKey:)")
    }

    required convenience init?(coder aDecoder: NSCoder) {
        preconditionFailure("CoreData: a relationship's mutable ordered set comes from mutableOrderedSetValue(forKey:)")
    }

    // MARK: The mirror

    /// Called by the object after its to-many values changed.
    func mirrorRelationship() {
        guard object.materialisedRelationships.contains(relationship.name) else { return }
        mirror(object.toManyValues[relationship.name] ?? [])
    }

    private func mirror(_ objects: [NSManagedObject]) {
        isMirroring = true
        defer { isMirroring = false }
        super.removeAllObjects()
        super.addObjects(from: objects)
    }

    /// The destinations now; loads the relationship (which refreshes the mirror) if needed.
    var members: [NSManagedObject] { object.currentDestinations(relationship) }

    private func change(_ edit: (inout [NSManagedObject]) -> Void) {
        var list = members
        edit(&list)
        object.setDestinations(list, of: relationship)
    }

    private func destinations(_ values: [Any]) -> [NSManagedObject] {
        values.map { NSManagedObject.destination($0, of: relationship) }
    }

    // MARK: Reads

    override var count: Int {
        if isMirroring { return super.count }
        return members.count
    }

    override func object(at idx: Int) -> Any {
        if isMirroring { return super.object(at: idx) }
        let list = members
        precondition(idx >= 0 && idx < list.count, "CoreData: index \(idx) beyond bounds [0 .. \(list.count)) of relationship '\(relationship.name)'")
        return list[idx]
    }

    override func index(of value: Any) -> Int {
        if isMirroring { return super.index(of: value) }
        return members.firstIndex { $0 === (value as AnyObject) } ?? NSNotFound
    }

    override func contains(_ value: Any) -> Bool {
        if isMirroring { return super.contains(value) }
        return members.contains { $0 === (value as AnyObject) }
    }

    override var description: String {
        "Relationship '\(relationship.name)' on \(object.objectID): [" + members.map { "\($0.objectID)" }.joined(separator: ", ") + "]"
    }

    override func copy(with zone: NSZone? = nil) -> Any { NSOrderedSet(array: members) }

    override func mutableCopy(with zone: NSZone? = nil) -> Any { NSMutableOrderedSet(array: members) }

    // MARK: Changes

    override func insert(_ value: Any, at idx: Int) {
        if isMirroring { return super.insert(value, at: idx) }
        let added = NSManagedObject.destination(value, of: relationship)
        change { list in
            precondition(idx >= 0 && idx <= list.count, "CoreData: index \(idx) beyond bounds [0 .. \(list.count)] of relationship '\(relationship.name)'")
            if !list.contains(where: { $0 === added }) { list.insert(added, at: idx) }
        }
    }

    override func removeObject(at idx: Int) {
        if isMirroring { return super.removeObject(at: idx) }
        change { list in
            precondition(idx >= 0 && idx < list.count, "CoreData: index \(idx) beyond bounds [0 .. \(list.count)) of relationship '\(relationship.name)'")
            list.remove(at: idx)
        }
    }

    override func replaceObject(at idx: Int, with value: Any) {
        if isMirroring { return super.replaceObject(at: idx, with: value) }
        let replacement = NSManagedObject.destination(value, of: relationship)
        change { list in
            precondition(idx >= 0 && idx < list.count, "CoreData: index \(idx) beyond bounds [0 .. \(list.count)) of relationship '\(relationship.name)'")
            list[idx] = replacement
            // An object already elsewhere in the set moves here.
            var seen = Set<ObjectIdentifier>([ObjectIdentifier(replacement)])
            list = list.enumerated().filter { offset, item in offset == idx || seen.insert(ObjectIdentifier(item)).inserted }.map(\.element)
        }
    }

    override func add(_ value: Any) {
        if isMirroring { return super.add(value) }
        addObjects(from: [value])
    }

    override func addObjects(from array: [Any]) {
        if isMirroring { return super.addObjects(from: array) }
        let added = destinations(array)
        change { $0.append(contentsOf: added) }
    }

    override func exchangeObject(at idx1: Int, withObjectAt idx2: Int) {
        change { list in list.swapAt(idx1, idx2) }
    }

    override func moveObjects(at indexes: IndexSet, to idx: Int) {
        change { list in
            let moved = indexes.map { list[$0] }
            for index in indexes.reversed() { list.remove(at: index) }
            list.insert(contentsOf: moved, at: Swift.min(idx, list.count))
        }
    }

    override func removeAllObjects() {
        if isMirroring { return super.removeAllObjects() }
        change { $0.removeAll() }
    }

    override func remove(_ value: Any) {
        change { list in list.removeAll { $0 === (value as AnyObject) } }
    }

    override func removeObjects(in array: [Any]) {
        let removed = Set(array.compactMap { ($0 as? NSManagedObject).map(ObjectIdentifier.init) })
        change { list in list.removeAll { removed.contains(ObjectIdentifier($0)) } }
    }

    override func intersect(_ other: NSOrderedSet) { intersectSet(Set(other.array.compactMap { $0 as? AnyHashable })) }

    override func minus(_ other: NSOrderedSet) { removeObjects(in: other.array) }

    override func union(_ other: NSOrderedSet) { addObjects(from: other.array) }

    override func intersectSet(_ other: Set<AnyHashable>) {
        let kept = Set(other.compactMap { ($0.base as? NSManagedObject).map(ObjectIdentifier.init) })
        change { list in list.removeAll { !kept.contains(ObjectIdentifier($0)) } }
    }

    override func minusSet(_ other: Set<AnyHashable>) { removeObjects(in: Array(other)) }

    override func unionSet(_ other: Set<AnyHashable>) { addObjects(from: Array(other)) }

    override func sort(using sortDescriptors: [Foundation.NSSortDescriptor]) {
        let sorted = NSArray(array: members).sortedArray(using: sortDescriptors)
        change { $0 = destinations(sorted) }
    }

    override func sortRange(_ range: NSRange, options opts: NSSortOptions = [], usingComparator cmptr: (Any, Any) -> ComparisonResult) {
        change { list in
            guard let bounds = Range(range), bounds.lowerBound >= 0, bounds.upperBound <= list.count else {
                preconditionFailure("CoreData: range \(range) beyond bounds of relationship '\(relationship.name)'")
            }
            list[bounds].sort { cmptr($0, $1) == .orderedAscending }
        }
    }
}

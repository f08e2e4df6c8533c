import CoreDataModel
import Foundation

/// The `NSMutableSet` that `mutableSetValue(forKey:)` returns: a live view of one to-many
/// relationship of one object.
///
/// Foundation's `NSMutableSet` builds every operation on `count`, `member(_:)`,
/// `objectEnumerator()`, `add(_:)` and `remove(_:)` for subclasses; this class answers those
/// from the relationship and sends each change through the object's setter (one setter call per
/// operation, including the bulk ones it overrides). Threading: the object's context queue.
final class RelationshipMutableSet: NSMutableSet {
    private let object: NSManagedObject
    private let relationship: NSRelationshipDescription

    init(object: NSManagedObject, relationship: NSRelationshipDescription) {
        self.object = object
        self.relationship = relationship
        super.init(objects: nil, count: 0)
    }

    required init(capacity numItems: Int) {
        preconditionFailure("CoreData: a relationship's mutable set comes from mutableSetValue(forKey:)")
    }

    override init(objects: UnsafePointer<AnyObject>!, count cnt: Int) {
        preconditionFailure("CoreData: a relationship's mutable set comes from mutableSetValue(forKey:)")
    }

    /// The destinations now.
    var members: [NSManagedObject] { object.currentDestinations(relationship) }

    // MARK: NSSet primitives

    override var count: Int { members.count }

    override func member(_ candidate: Any) -> Any? {
        guard let candidate = candidate as? NSManagedObject else { return nil }
        return members.first { $0 === candidate }
    }

    override func objectEnumerator() -> NSEnumerator {
        NSArray(array: members).objectEnumerator()
    }

    override var allObjects: [Any] { members }

    // MARK: Changes, each one setter call

    override func add(_ value: Any) { addObjects(from: [value]) }

    override func remove(_ value: Any) { change { list in list.removeAll { $0 === (value as AnyObject) } } }

    override func addObjects(from array: [Any]) {
        let added = array.map { NSManagedObject.destination($0, of: relationship) }
        change { $0.append(contentsOf: added) }
    }

    override func removeAllObjects() { change { $0.removeAll() } }

    override func union(_ otherSet: Set<AnyHashable>) { addObjects(from: Array(otherSet)) }

    override func minus(_ otherSet: Set<AnyHashable>) {
        let removed = Set(otherSet.compactMap { ($0.base as? NSManagedObject).map(ObjectIdentifier.init) })
        change { list in list.removeAll { removed.contains(ObjectIdentifier($0)) } }
    }

    override func intersect(_ otherSet: Set<AnyHashable>) {
        let kept = Set(otherSet.compactMap { ($0.base as? NSManagedObject).map(ObjectIdentifier.init) })
        change { list in list.removeAll { !kept.contains(ObjectIdentifier($0)) } }
    }

    override func setSet(_ otherSet: Set<AnyHashable>) {
        let objects = otherSet.map { NSManagedObject.destination($0.base, of: relationship) }
        change { $0 = objects }
    }

    private func change(_ edit: (inout [NSManagedObject]) -> Void) {
        var list = members
        edit(&list)
        object.setDestinations(list, of: relationship)
    }

    // MARK: Reads Foundation implements on its own storage

    override func isEqual(_ other: Any?) -> Bool {
        let mine = Set(members.map(ObjectIdentifier.init))
        switch other {
        case let set as NSSet: return set.count == mine.count && set.allObjects.allSatisfy { ($0 as? NSManagedObject).map { mine.contains(ObjectIdentifier($0)) } ?? false }
        case let set as Set<NSManagedObject>: return Set(set.map(ObjectIdentifier.init)) == mine
        default: return false
        }
    }

    override var description: String {
        "Relationship '\(relationship.name)' on \(object.objectID): {(" + members.map { "\($0.objectID)" }.joined(separator: ", ") + ")}"
    }

    override func copy(with zone: NSZone? = nil) -> Any { NSSet(array: members) }

    override func mutableCopy(with zone: NSZone? = nil) -> Any { NSMutableSet(array: members) }
}

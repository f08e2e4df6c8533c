import CoreDataModel
import Foundation

/// Apple's mutable to-many accessors: live collections whose changes go through the
/// relationship's setter.
extension NSManagedObject {
    /// A live, mutable set of the destinations of the to-many relationship `key`.
    ///
    /// Matches Apple's `mutableSetValue(forKey:)`: the result is an `NSMutableSet` whose reads
    /// show the relationship as it is now and whose changes (`add`, `remove`, `addObjects(from:)`,
    /// `union`, `minus`, `intersect`, `setSet`, `removeAllObjects`) set the relationship through
    /// ``setValue(_:forKey:)``, so inverses, change tracking (`changedValues()`) and the context's
    /// notifications follow, as on Apple platforms. For an ordered relationship, added objects go
    /// at the end.
    ///
    /// Linux difference: `as? Set<…>` on the result gives an empty set, because
    /// swift-corelibs-foundation bridges only `NSSet` and `NSMutableSet` themselves, never a
    /// subclass. Read it with `allObjects`, `count`, `contains(_:)` or iteration, or read the
    /// relationship with `value(forKey:) as? Set<…>`.
    ///
    /// Threading: the set belongs to the object's context queue, like the object.
    /// Complexity: a read is O(1) to O(n) in the relationship's size; each change is O(n).
    /// Traps when `key` is not a to-many relationship, and when an added value is not a managed
    /// object of the relationship's destination entity in the same context (Apple raises).
    public func mutableSetValue(forKey key: String) -> NSMutableSet {
        RelationshipMutableSet(object: self, relationship: toManyRelationship(key, "mutableSetValue(forKey:)"))
    }

    /// A live, mutable ordered set of the destinations of the ordered to-many relationship `key`.
    ///
    /// Matches Apple's `mutableOrderedSetValue(forKey:)`: an `NSMutableOrderedSet` whose changes
    /// (`add`, `insert(_:at:)`, `remove`, `removeObject(at:)`, `replaceObject(at:with:)`,
    /// `moveObjects(at:to:)`, `exchangeObject(at:withObjectAt:)`, the set operations, sorting)
    /// set the relationship through ``setValue(_:forKey:)``. Reads show the relationship as it
    /// is now, including changes made through the inverse relationship.
    ///
    /// Threading: the ordered set belongs to the object's context queue, like the object.
    /// Complexity: reads are O(1) (O(n) after the relationship changed); each change is O(n).
    /// Traps when `key` is not an ordered to-many relationship, or for a value that cannot join it.
    public func mutableOrderedSetValue(forKey key: String) -> NSMutableOrderedSet {
        let relationship = toManyRelationship(key, "mutableOrderedSetValue(forKey:)")
        guard relationship.isOrdered else {
            preconditionFailure("CoreData: mutableOrderedSetValue(forKey:): '\(key)' of \(entity.name ?? "?") is not an ordered relationship; use mutableSetValue(forKey:)")
        }
        let proxy = RelationshipMutableOrderedSet(object: self, relationship: relationship)
        orderedSetProxies.removeAll { $0.proxy == nil }
        orderedSetProxies.append(WeakOrderedSetProxy(proxy: proxy))
        return proxy
    }

    /// ``mutableSetValue(forKey:)`` at the end of a dotted key path (`"author.books"`).
    public func mutableSetValue(forKeyPath keyPath: String) -> NSMutableSet {
        let (owner, key) = keyPathOwner(keyPath, "mutableSetValue(forKeyPath:)")
        return owner.mutableSetValue(forKey: key)
    }

    /// ``mutableOrderedSetValue(forKey:)`` at the end of a dotted key path (`"book.chapters"`).
    public func mutableOrderedSetValue(forKeyPath keyPath: String) -> NSMutableOrderedSet {
        let (owner, key) = keyPathOwner(keyPath, "mutableOrderedSetValue(forKeyPath:)")
        return owner.mutableOrderedSetValue(forKey: key)
    }

    private func toManyRelationship(_ key: String, _ method: String) -> NSRelationshipDescription {
        guard let relationship = entity.relationshipsByName[key], relationship.isToMany else {
            preconditionFailure("CoreData: \(method): '\(key)' is not a to-many relationship of \(entity.name ?? "?")")
        }
        return relationship
    }

    private func keyPathOwner(_ keyPath: String, _ method: String) -> (NSManagedObject, String) {
        var keys = keyPath.split(separator: ".").map(String.init)
        guard let last = keys.popLast() else {
            preconditionFailure("CoreData: \(method) needs a key path; got '\(keyPath)'")
        }
        guard let owner = keys.isEmpty ? self : value(forKeyPath: keys.joined(separator: ".")) as? NSManagedObject else {
            preconditionFailure("CoreData: \(method): '\(keys.joined(separator: "."))' of \(entity.name ?? "?") does not lead to one object")
        }
        return (owner, last)
    }

    /// The relationship's destinations now, faults fired and IDs turned into objects.
    func currentDestinations(_ relationship: NSRelationshipDescription) -> [NSManagedObject] {
        context_checkAccess()
        fireFaultIfNeeded()
        materialise(relationship)
        return toManyValues[relationship.name] ?? []
    }

    /// Sets a to-many relationship through the public setter, as Apple's proxies do.
    func setDestinations(_ objects: [NSManagedObject], of relationship: NSRelationshipDescription) {
        var seen = Set<ObjectIdentifier>()
        let unique = objects.filter { seen.insert(ObjectIdentifier($0)).inserted }
        if let observation {
            // Observers hear of a proxy's edit as the objects it adds or removes, as Apple's do.
            let current = toManyValues[relationship.name] ?? []
            let before = Set(current.map(ObjectIdentifier.init))
            let added = unique.filter { !before.contains(ObjectIdentifier($0)) }
            let removed = current.filter { !seen.contains(ObjectIdentifier($0)) }
            let keepsOrder = zip(current.filter { seen.contains(ObjectIdentifier($0)) }, unique.filter { before.contains(ObjectIdentifier($0)) }).allSatisfy { $0 === $1 }
            if keepsOrder, removed.isEmpty, !added.isEmpty {
                observation.nextMutation = (relationship.name, .insertion(added))
            } else if keepsOrder, added.isEmpty, !removed.isEmpty {
                observation.nextMutation = (relationship.name, .removal(removed))
            }
        }
        defer { observation?.nextMutation = nil }
        setValue(relationship.isOrdered ? NSOrderedSet(array: unique) as Any : Set(unique) as Any, forKey: relationship.name)
    }

    /// A value added to a to-many relationship as a managed object; traps otherwise.
    static func destination(_ value: Any, of relationship: NSRelationshipDescription) -> NSManagedObject {
        guard let object = value as? NSManagedObject else {
            preconditionFailure("CoreData: Unacceptable type of value for to-many relationship: property = \"\(relationship.name)\"; desired type = \(relationship.destinationEntity?.name ?? "NSManagedObject"); given type = \(type(of: value))")
        }
        return object
    }

    /// Refreshes the live ordered-set proxies after ``toManyValues`` changed.
    func updateOrderedSetProxies() {
        orderedSetProxies.removeAll { $0.proxy == nil }
        for entry in orderedSetProxies { entry.proxy?.mirrorRelationship() }
    }
}

/// A weak reference to a live ordered-set proxy, so that proxies die with their last user.
struct WeakOrderedSetProxy {
    weak var proxy: RelationshipMutableOrderedSet?
}

import Foundation
import Observation

/// Who observes one managed object, and what a change in progress must report: the object's
/// key-value observers, its block observations, and its Observation registrar.
///
/// An object has one only once something observes it (``NSManagedObject/observation`` is `nil`
/// until then), so that a change of an unobserved object costs one `nil` check.
///
/// Threading: part of its object; touched only on the object's context queue.
final class ObjectObservation {
    /// What a block observation's handler receives: the object, the kind, the old and new values
    /// (outer `nil`: not asked for), the indexes of an ordered relationship's mutation, and
    /// whether the notification comes before the change.
    typealias Handler = (NSManagedObject, NSKeyValueChange, Any??, Any??, IndexSet?, Bool) -> Void

    struct Registration {
        let id: Int
        let key: String
        let options: NSKeyValueObservingOptions
        let context: UnsafeMutableRawPointer?
        /// The observer of `addObserver(_:forKeyPath:options:context:)`; not retained, as
        /// Apple's key-value observing does not retain it (here it is weak, so that a released
        /// observer is skipped instead of messaged).
        weak var observer: (any NSKeyValueObserving)?
        let observerIdentity: ObjectIdentifier?
        /// The handler of `observe(_:options:changeHandler:)`.
        let handler: Handler?
    }

    /// Objects added to or removed from a to-many relationship, which Apple's key-value
    /// observing reports as ``NSKeyValueChange/insertion`` or ``NSKeyValueChange/removal`` of
    /// those objects rather than as a new value.
    enum Mutation {
        case insertion([NSManagedObject])
        case removal([NSManagedObject])
    }

    /// A change in progress: the value before it (outer `nil` where no observer asked for it),
    /// or the objects it adds or removes, and for an ordered relationship the removed objects'
    /// indexes.
    private struct Pending {
        var old: Any??
        var mutation: Mutation?
        var removedIndexes: IndexSet?
    }

    private(set) var registrations: [Registration] = []
    private var nextID = 0
    /// The changes in progress, by key, innermost last.
    private var pending: [String: [Pending]] = [:]
    /// Set just before a to-many change that adds or removes objects (by inverse maintenance or
    /// a mutable-set proxy), for the change of `key` that follows; cleared by it.
    var nextMutation: (key: String, mutation: Mutation)?
    /// Above zero while a refresh, merge or rollback changes many values at once: it reports
    /// each observed key once around the whole operation instead of each change inside it.
    var batchDepth = 0
    /// Made when the object is first read under Observation tracking
    /// (``NSManagedObjectContext/tracksObservationAccess``).
    var registrar: ObservationRegistrar?
    /// The keys read under Observation tracking: the only ones whose changes the registrar hears of.
    var accessedKeys: Set<String> = []

    /// The dotted key paths observers added with `addObserver(_:forKeyPath:options:context:)`,
    /// for `removeObserver` to find; their links are ordinary ``registrations``.
    private(set) var paths: [KeyPathObservation] = []

    var isEmpty: Bool { registrations.isEmpty && registrar == nil && paths.isEmpty }

    /// Every key someone observes: refreshes report these.
    var observedKeys: Set<String> { Set(registrations.map(\.key)).union(accessedKeys) }

    func add(key: String, options: NSKeyValueObservingOptions, context: UnsafeMutableRawPointer?,
             observer: (any NSKeyValueObserving)?, handler: Handler?) -> Int {
        nextID += 1
        registrations.append(Registration(
            id: nextID, key: key, options: options, context: context, observer: observer,
            observerIdentity: observer.map { ObjectIdentifier($0) }, handler: handler))
        return nextID
    }

    func remove(id: Int) {
        registrations.removeAll { $0.id == id }
    }

    /// Removes the latest registration of `observer` for `key` (with `context`, when given);
    /// `false` when there is none.
    func remove(observer: AnyObject, key: String, context: UnsafeMutableRawPointer??) -> Bool {
        let identity = ObjectIdentifier(observer)
        guard let index = registrations.lastIndex(where: { registration in
            registration.observerIdentity == identity && registration.key == key
                && (context.map { $0 == registration.context } ?? true)
        }) else { return false }
        registrations.remove(at: index)
        return true
    }

    func add(path: KeyPathObservation) {
        paths.append(path)
    }

    /// Takes out the latest observation of the dotted `keyPath` by `observer` (with `context`,
    /// when given); `nil` when there is none.
    func removePath(observer: AnyObject, keyPath: String, context: UnsafeMutableRawPointer??) -> KeyPathObservation? {
        let identity = ObjectIdentifier(observer)
        guard let index = paths.lastIndex(where: { path in
            path.observerIdentity == identity && path.keyPath == keyPath && (context.map { $0 == path.context } ?? true)
        }) else { return nil }
        return paths.remove(at: index)
    }

    /// Before `key` of `object` changes: the prior notifications, the old value kept for after,
    /// and the registrar's `willSet`.
    func willChange(_ key: String, of object: NSManagedObject) {
        var mutation: Mutation?
        if let next = nextMutation, next.key == key {
            mutation = next.mutation
            nextMutation = nil
        }
        guard batchDepth == 0 else { return }
        if let registrar, accessedKeys.contains(key) {
            registrar.willSet(object, keyPath: ObservationKeyPaths.keyPath(for: key))
        }
        let observing = registrations.filter { $0.key == key }
        guard !observing.isEmpty else {
            pending[key, default: []].append(Pending(old: nil, mutation: nil, removedIndexes: nil))
            return
        }
        var change = Pending(old: nil, mutation: mutation, removedIndexes: nil)
        let isOrdered = object.entity.relationshipsByName[key]?.isOrdered == true
        switch mutation {
        case .removal(let removed) where isOrdered:
            change.removedIndexes = Self.indexes(of: removed, in: object.toManyValues[key] ?? [])
        case .none:
            if observing.contains(where: { $0.options.contains(.old) }) { change.old = .some(object.observedValue(forKey: key)) }
        default:
            break
        }
        pending[key, default: []].append(change)
        for registration in observing where registration.options.contains(.prior) {
            deliver(registration, of: object, key: key, change, indexes: change.removedIndexes, new: nil, isPrior: true)
        }
    }

    /// After `key` of `object` changed: the notifications with the new value (or the objects
    /// added), and the registrar's `didSet`.
    func didChange(_ key: String, of object: NSManagedObject) {
        guard batchDepth == 0 else { return }
        let change = pending[key]?.popLast() ?? Pending(old: nil, mutation: nil, removedIndexes: nil)
        if pending[key]?.isEmpty == true { pending[key] = nil }
        if let registrar, accessedKeys.contains(key) {
            registrar.didSet(object, keyPath: ObservationKeyPaths.keyPath(for: key))
        }
        let observing = registrations.filter { $0.key == key }
        guard !observing.isEmpty else { return }
        var new: Any??
        var indexes = change.removedIndexes
        if case .insertion(let inserted) = change.mutation {
            if object.entity.relationshipsByName[key]?.isOrdered == true {
                indexes = Self.indexes(of: inserted, in: object.toManyValues[key] ?? [])
            }
        } else if change.mutation == nil, observing.contains(where: { $0.options.contains(.new) }) {
            new = .some(object.observedValue(forKey: key))
        }
        for registration in observing {
            deliver(registration, of: object, key: key, change, indexes: indexes, new: registration.options.contains(.new) ? new : nil, isPrior: false)
        }
    }

    /// Where `objects` are in `list`.
    private static func indexes(of objects: [NSManagedObject], in list: [NSManagedObject]) -> IndexSet {
        let wanted = Set(objects.map(ObjectIdentifier.init))
        return IndexSet(list.indices.filter { wanted.contains(ObjectIdentifier(list[$0])) })
    }

    /// The notification `addObserver` sends at once for ``NSKeyValueObservingOptions/initial``.
    func deliverInitial(id: Int, of object: NSManagedObject) {
        guard let registration = registrations.first(where: { $0.id == id }), registration.options.contains(.initial) else { return }
        let new: Any?? = registration.options.contains(.new) ? .some(object.observedValue(forKey: registration.key)) : nil
        deliver(registration, of: object, key: registration.key, Pending(old: nil, mutation: nil, removedIndexes: nil), indexes: nil, new: new, isPrior: false)
    }

    /// Sends one notification. A to-many mutation reports its objects: an `NSSet` of them for an
    /// unordered relationship, an array with their indexes for an ordered one, as Apple's do.
    private func deliver(_ registration: Registration, of object: NSManagedObject, key: String, _ change: Pending, indexes: IndexSet?, new: Any??, isPrior: Bool) {
        let wantsOld = registration.options.contains(.old), wantsNew = registration.options.contains(.new)
        var kind = NSKeyValueChange.setting
        var old: Any?? = wantsOld ? change.old : nil
        var newValue: Any?? = new
        if let mutation = change.mutation {
            let isOrdered = object.entity.relationshipsByName[key]?.isOrdered == true
            func collection(_ objects: [NSManagedObject]) -> Any { isOrdered ? objects as Any : NSSet(array: objects) as Any }
            switch mutation {
            case .insertion(let inserted):
                kind = .insertion
                old = nil
                newValue = wantsNew && !isPrior ? .some(collection(inserted)) : nil
            case .removal(let removed):
                kind = .removal
                old = wantsOld ? .some(collection(removed)) : nil
                newValue = nil
            }
        }
        if let handler = registration.handler {
            handler(object, kind, old, newValue, change.mutation == nil ? nil : indexes, isPrior)
            return
        }
        guard let observer = registration.observer else { return }
        var dictionary: [NSKeyValueChangeKey: Any] = [.kindKey: NSNumber(value: kind.rawValue)]
        if isPrior { dictionary[.notificationIsPriorKey] = NSNumber(value: true) }
        if let old { dictionary[.oldKey] = old ?? NSNull() }
        if let newValue { dictionary[.newKey] = newValue ?? NSNull() }
        if let indexes, change.mutation != nil { dictionary[.indexesKey] = indexes }
        observer.observeValue(forKeyPath: registration.key, of: object, change: dictionary, context: registration.context)
    }
}

/// The key paths an object's ``ObservationRegistrar`` tracks its keys by: one per key name,
/// made once (forming a key path with a subscript argument costs microseconds) and shared by
/// every object, each of which has its own registrar.
enum ObservationKeyPaths {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [String: KeyPath<NSManagedObject, Any?>] = [:]

    static func keyPath(for key: String) -> KeyPath<NSManagedObject, Any?> {
        lock.lock()
        defer { lock.unlock() }
        if let known = cache[key] { return known }
        let keyPath = \NSManagedObject.[observedKey: key]
        cache[key] = keyPath
        return keyPath
    }
}

extension NSManagedObject {
    /// The member the registrar's key paths name; the registrar never reads it.
    subscript(observedKey key: String) -> Any? { observedValue(forKey: key) }

    /// A modeled property's value (or a composite attribute element's, `address.city`) as
    /// `value(forKey:)` gives it, for a notification.
    func observedValue(forKey key: String) -> Any? {
        guard entity.propertiesByName[key] != nil || entity.slotAttributesByName[key] != nil else { return nil }
        return value(forKey: key)
    }

    /// Reports `body`'s changes to this object's observers once for each observed key, around
    /// the whole of `body`, instead of change by change: for refreshes, merges and rollbacks,
    /// which replace many values at once. Apple's Core Data reports a refreshed object's
    /// properties even when their values did not change; so does this.
    func withObservedChanges(_ body: () -> Void) {
        guard let observation else {
            body()
            return
        }
        let keys = observation.observedKeys.sorted()
        for key in keys { observation.willChange(key, of: self) }
        observation.batchDepth += 1
        body()
        observation.batchDepth -= 1
        for key in keys { observation.didChange(key, of: self) }
    }

    /// Tells the Observation framework that `key` was read, so that `withObservationTracking`
    /// hears of its next change. Called only when the context tracks observation access.
    func noteObservedAccess(_ key: String) {
        let observation = self.observation ?? {
            let made = ObjectObservation()
            self.observation = made
            return made
        }()
        if observation.registrar == nil { observation.registrar = ObservationRegistrar() }
        observation.accessedKeys.insert(key)
        observation.registrar?.access(self, keyPath: ObservationKeyPaths.keyPath(for: key))
    }
}

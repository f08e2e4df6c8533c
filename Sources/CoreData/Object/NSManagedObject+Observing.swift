import CoreDataModel
import Foundation
import Observation

// Key-value observing of managed objects without the Objective-C runtime: the object itself
// reports its changes (ObjectObservation), from the two places every change of a modeled
// property passes: the undo hook before it (willChangeForUndo) and the change record after it
// (noteChange). Setters, typed `@Managed` setters, inverse maintenance, mutable-collection
// proxies, undo and redo, a child context's save pushed into its parent all go through them;
// refreshes, merges and rollbacks, which replace values wholesale, report around the whole
// operation (withObservedChanges).

extension NSManagedObject: NSKeyValueObserving, _KeyValueCodingAndObserving {}

/// Managed objects take part in the Observation framework: a read of a property inside
/// `withObservationTracking` (or the `Observations` sequence) registers the property when the
/// object's context has ``NSManagedObjectContext/tracksObservationAccess`` set, and the next
/// change of it — from any of the sources key-value observers hear of — ends the tracking.
///
/// Apple's Core Data offers `ObservableObject` (Combine) instead, which Linux does not have.
extension NSManagedObject: Observable {}

extension NSManagedObject {
    /// Adds `observer` to hear of changes to the value at `keyPath` of this object: a property
    /// (`"title"`), a composite attribute's element (`"address.city"`) or a dotted key path
    /// through relationships (`"author.name"`, `"author.publisher.name"`, `"books.title"`).
    ///
    /// Matches Foundation's `addObserver(_:forKeyPath:options:context:)` for managed objects:
    /// `observer.observeValue(forKeyPath:of:change:context:)` is called after each change (every
    /// change Apple's key-value observing reports: setters, typed setters, inverse relationship
    /// maintenance, undo and redo, `refresh(_:mergeChanges:)`, merges of other contexts' saves,
    /// `rollback()`), with the options' values under ``NSKeyValueChangeKey``: `.new` and `.old`
    /// (`NSNull` for nil; to-many values as `NSSet`/`NSOrderedSet`-castable collections; objects
    /// added to or removed from a to-many relationship one by one, by a mutable-set proxy or by
    /// inverse maintenance, as an ``NSKeyValueChange/insertion`` or ``NSKeyValueChange/removal``
    /// of those objects, with their indexes for an ordered relationship), `.prior`
    /// for a notification before each change, `.initial` for one at once.
    ///
    /// A dotted key path is followed as Apple's key-value observing follows it: a change of any
    /// relationship along it, or of the last key on the object now at its end, is reported with
    /// the values at the whole path (`value(forKeyPath:)`; an `NSSet` of the members' values
    /// through a to-many step) as a ``NSKeyValueChange/setting``, with `keyPath` and this object
    /// as the notification's key path and object. When a relationship along the path changes,
    /// the objects that left it are no longer observed and the ones that joined it are.
    ///
    /// The observer is not retained, nor are the objects along a path. The observer must adopt
    /// ``NSKeyValueObserving`` (Linux's `NSObject` has no `observeValue` to override); a managed
    /// object already does.
    ///
    /// Threading: add, remove and receive on the object's context queue; notifications are
    /// delivered synchronously on it, inside the call that made the change.
    /// Complexity: a dotted path reads each relationship along it when added and when it changes
    /// (firing those objects' faults) and registers on every object it reaches.
    /// Traps when `keyPath` names no property of the entity (a key of a dotted path must be a
    /// relationship of the entity before it, or of one of its subentities), or when `observer`
    /// does not adopt ``NSKeyValueObserving``.
    public func addObserver(_ observer: NSObject, forKeyPath keyPath: String, options: NSKeyValueObservingOptions = [], context: UnsafeMutableRawPointer?) {
        guard let receiver = observer as? any NSKeyValueObserving else {
            preconditionFailure("CoreData: \(type(of: observer)) observes '\(keyPath)' but does not adopt NSKeyValueObserving; declare observeValue(forKeyPath:of:change:context:) and add the conformance")
        }
        context_checkAccess()
        guard let key = observedKey(keyPath) else {
            let path = KeyPathObservation(root: self, keyPath: keyPath, options: options, context: context, observer: receiver, handler: nil)
            makeObservation().add(path: path)
            path.start()
            return
        }
        let id = makeObservation().add(key: key, options: options, context: context, observer: receiver, handler: nil)
        observation?.deliverInitial(id: id, of: self)
    }

    /// Removes the latest registration of `observer` for `keyPath`; for a dotted key path, its
    /// registrations on every object along the path go with it.
    ///
    /// Traps when `observer` is not registered for `keyPath`, as Apple's raises.
    /// Threading: call on the object's context queue.
    public func removeObserver(_ observer: NSObject, forKeyPath keyPath: String) {
        removeRegistration(observer, keyPath, context: nil)
    }

    /// Removes the registration of `observer` for `keyPath` made with `context`.
    ///
    /// Traps when there is none, as Apple's raises.
    /// Threading: call on the object's context queue.
    public func removeObserver(_ observer: NSObject, forKeyPath keyPath: String, context: UnsafeMutableRawPointer?) {
        removeRegistration(observer, keyPath, context: .some(context))
    }

    private func removeRegistration(_ observer: NSObject, _ keyPath: String, context: UnsafeMutableRawPointer??) {
        context_checkAccess()
        if let observation {
            if observation.remove(observer: observer, key: keyPath, context: context) {
                if observation.isEmpty { self.observation = nil }
                return
            }
            if let path = observation.removePath(observer: observer, keyPath: keyPath, context: context) {
                path.stop()
                if observation.isEmpty, self.observation === observation { self.observation = nil }
                return
            }
        }
        preconditionFailure("CoreData: Cannot remove an observer \(type(of: observer)) for the key path \"\(keyPath)\" from \(objectID) because it is not registered as an observer")
    }

    func makeObservation() -> ObjectObservation {
        if let observation { return observation }
        let made = ObjectObservation()
        observation = made
        return made
    }

    /// `keyPath` when it names one value of the object: a modeled property, or a composite
    /// attribute's element (`address.city`), which has a slot of its own; `nil` for a dotted path
    /// through relationships (observed by a ``KeyPathObservation``). Traps for anything else.
    func observedKey(_ keyPath: String) -> String? {
        if entity.propertiesByName[keyPath] != nil || entity.slotAttributesByName[keyPath] != nil { return keyPath }
        guard keyPath.contains(".") else {
            preconditionFailure("CoreData: observing '\(keyPath)': the entity \(entity.name ?? "?") has no such property")
        }
        if let problem = KeyPathObservation.problem(with: keyPath, on: entity) {
            preconditionFailure("CoreData: observing the key path '\(keyPath)' of \(entity.name ?? "?"): \(problem)")
        }
        return nil
    }

    /// Takes the registration `id` off this object, and the object's observation record with
    /// it when nothing else observes the object.
    func removeObservationRegistration(id: Int) {
        guard let observation else { return }
        observation.remove(id: id)
        if observation.isEmpty { self.observation = nil }
    }

    /// Adds a block observation of `key` and returns its token.
    func addObservation(key: String, options: NSKeyValueObservingOptions, handler: @escaping ObjectObservation.Handler) -> NSKeyValueObservation {
        context_checkAccess()
        let id = makeObservation().add(key: key, options: options, context: nil, observer: nil, handler: handler)
        observation?.deliverInitial(id: id, of: self)
        return NSKeyValueObservation { [weak self] in self?.removeObservationRegistration(id: id) }
    }

    /// Adds a block observation of the dotted `keyPath` and returns its token.
    func addPathObservation(keyPath: String, options: NSKeyValueObservingOptions, handler: @escaping ObjectObservation.Handler) -> NSKeyValueObservation {
        context_checkAccess()
        let path = KeyPathObservation(root: self, keyPath: keyPath, options: options, context: nil, observer: nil, handler: handler)
        path.start()
        return NSKeyValueObservation { path.stop() }
    }
}

extension _KeyValueCodingAndObserving where Self: NSManagedObject {
    /// Calls `changeHandler` with each change of the value at `keyPath`, until the returned
    /// observation is invalidated or released.
    ///
    /// Matches Foundation's block-based `observe(_:options:changeHandler:)`. `keyPath` must name
    /// a Core Data property, or a chain of to-one relationships ending in one
    /// (`\.author?.name`, observed as `addObserver` observes `"author.name"`), read through
    /// `@Managed` properties (`\.name`, `\.books`) or accessors that call `value(forKey:)`; the
    /// keys are found by reading the key path on a stand-in object, as `#Predicate` translation
    /// does. The change's values are typed as the property
    /// is declared (`Set<Book>` for a to-many `@Managed` property).
    ///
    /// Threading: as `addObserver(_:forKeyPath:options:context:)`: on the object's context
    /// queue; keep the observation and release it there.
    /// Traps when the key path names no property, or reads several properties that are not a
    /// chain of to-one relationships (a to-many step has no typed key path; use `addObserver`
    /// with a string key path).
    public func observe<Value>(
        _ keyPath: KeyPath<Self, Value>, options: NSKeyValueObservingOptions = [],
        changeHandler: @escaping (Self, NSKeyValueObservedChange<Value>) -> Void
    ) -> NSKeyValueObservation {
        let path: String?
        do {
            path = try KeyPathProbe.propertyPath(of: keyPath, on: type(of: self), entity: entity)
        } catch {
            preconditionFailure("CoreData: observe(\(keyPath)): \(error)")
        }
        guard let path else {
            preconditionFailure("CoreData: observe(\(keyPath)): the key path names the object's ID, which never changes")
        }
        let handler: ObjectObservation.Handler = { object, kind, old, new, indexes, isPrior in
            guard let object = object as? Self else { return }
            changeHandler(object, NSKeyValueObservedChange(
                kind: kind,
                newValue: new.flatMap { ManagedValueConversion.convertIfPossible($0, to: Value.self) },
                oldValue: old.flatMap { ManagedValueConversion.convertIfPossible($0, to: Value.self) },
                indexes: indexes, isPrior: isPrior))
        }
        guard let key = observedKey(path) else {
            return addPathObservation(keyPath: path, options: options, handler: handler)
        }
        return addObservation(key: key, options: options, handler: handler)
    }
}

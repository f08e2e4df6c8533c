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
    /// Adds `observer` to hear of changes to the property `keyPath` of this object.
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
    /// The observer is not retained. It must adopt ``NSKeyValueObserving`` (Linux's `NSObject`
    /// has no `observeValue` to override); a managed object already does.
    ///
    /// Threading: add, remove and receive on the object's context queue; notifications are
    /// delivered synchronously on it, inside the call that made the change.
    /// Traps when `keyPath` is not a property of the entity, is a dotted path (only one key is
    /// supported), or when `observer` does not adopt ``NSKeyValueObserving``.
    public func addObserver(_ observer: NSObject, forKeyPath keyPath: String, options: NSKeyValueObservingOptions = [], context: UnsafeMutableRawPointer?) {
        guard let receiver = observer as? any NSKeyValueObserving else {
            preconditionFailure("CoreData: \(type(of: observer)) observes '\(keyPath)' but does not adopt NSKeyValueObserving; declare observeValue(forKeyPath:of:change:context:) and add the conformance")
        }
        let key = requireObservableKey(keyPath)
        context_checkAccess()
        let id = makeObservation().add(key: key, options: options, context: context, observer: receiver, handler: nil)
        observation?.deliverInitial(id: id, of: self)
    }

    /// Removes the latest registration of `observer` for `keyPath`.
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
        guard let observation, observation.remove(observer: observer, key: keyPath, context: context) else {
            preconditionFailure("CoreData: Cannot remove an observer \(type(of: observer)) for the key path \"\(keyPath)\" from \(objectID) because it is not registered as an observer")
        }
        if observation.isEmpty { self.observation = nil }
    }

    func makeObservation() -> ObjectObservation {
        if let observation { return observation }
        let made = ObjectObservation()
        observation = made
        return made
    }

    /// The modeled property `keyPath` names; traps for anything else.
    func requireObservableKey(_ keyPath: String) -> String {
        guard !keyPath.contains(".") else {
            preconditionFailure("CoreData: observing the key path '\(keyPath)' of \(entity.name ?? "?"): only a single key can be observed on Linux; observe '\(keyPath.split(separator: ".").first.map(String.init) ?? keyPath)' and its destination separately")
        }
        guard entity.propertiesByName[keyPath] != nil else {
            preconditionFailure("CoreData: observing '\(keyPath)': the entity \(entity.name ?? "?") has no such property")
        }
        return keyPath
    }

    /// Adds a block observation of `key` and returns its token.
    func addObservation(key: String, options: NSKeyValueObservingOptions, handler: @escaping ObjectObservation.Handler) -> NSKeyValueObservation {
        context_checkAccess()
        let id = makeObservation().add(key: key, options: options, context: nil, observer: nil, handler: handler)
        observation?.deliverInitial(id: id, of: self)
        return NSKeyValueObservation { [weak self] in
            guard let self, let observation = self.observation else { return }
            observation.remove(id: id)
            if observation.isEmpty { self.observation = nil }
        }
    }
}

extension _KeyValueCodingAndObserving where Self: NSManagedObject {
    /// Calls `changeHandler` with each change of the property `keyPath` names, until the returned
    /// observation is invalidated or released.
    ///
    /// Matches Foundation's block-based `observe(_:options:changeHandler:)`. `keyPath` must name
    /// one Core Data property: a `@Managed` property (`\.name`, `\.books`) or an accessor that
    /// reads through `value(forKey:)`; the key is found by reading the key path on a stand-in
    /// object, as `#Predicate` translation does. The change's values are typed as the property
    /// is declared (`Set<Book>` for a to-many `@Managed` property).
    ///
    /// Threading: as `addObserver(_:forKeyPath:options:context:)`: on the object's context
    /// queue; keep the observation and release it there.
    /// Traps when the key path names no property, or a path through a relationship (only a
    /// single key is supported).
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
        let key = requireObservableKey(path)
        return addObservation(key: key, options: options) { object, kind, old, new, indexes, isPrior in
            guard let object = object as? Self else { return }
            changeHandler(object, NSKeyValueObservedChange(
                kind: kind,
                newValue: new.flatMap { ManagedValueConversion.convertIfPossible($0, to: Value.self) },
                oldValue: old.flatMap { ManagedValueConversion.convertIfPossible($0, to: Value.self) },
                indexes: indexes, isPrior: isPrior))
        }
    }
}

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
    /// (outer `nil`: not asked for), and whether the notification comes before the change.
    typealias Handler = (NSManagedObject, NSKeyValueChange, Any??, Any??, Bool) -> Void

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

    private(set) var registrations: [Registration] = []
    private var nextID = 0
    /// The values before the changes in progress, by key, innermost last; `nil` where no
    /// observer asked for the old value.
    private var pendingOld: [String: [Any??]] = [:]
    /// Above zero while a refresh, merge or rollback changes many values at once: it reports
    /// each observed key once around the whole operation instead of each change inside it.
    var batchDepth = 0
    /// Made when the object is first read under Observation tracking
    /// (``NSManagedObjectContext/tracksObservationAccess``).
    var registrar: ObservationRegistrar?
    /// The keys read under Observation tracking: the only ones whose changes the registrar hears of.
    var accessedKeys: Set<String> = []

    var isEmpty: Bool { registrations.isEmpty && registrar == nil }

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

    /// Before `key` of `object` changes: the prior notifications, the old value kept for after,
    /// and the registrar's `willSet`.
    func willChange(_ key: String, of object: NSManagedObject) {
        guard batchDepth == 0 else { return }
        if let registrar, accessedKeys.contains(key) {
            registrar.willSet(object, keyPath: ObservationKeyPaths.keyPath(for: key))
        }
        let observing = registrations.filter { $0.key == key }
        guard !observing.isEmpty else {
            pendingOld[key, default: []].append(nil)
            return
        }
        let wantsOld = observing.contains { $0.options.contains(.old) }
        let old: Any?? = wantsOld ? .some(object.observedValue(forKey: key)) : nil
        pendingOld[key, default: []].append(old)
        for registration in observing where registration.options.contains(.prior) {
            deliver(registration, of: object, old: registration.options.contains(.old) ? old : nil, new: nil, isPrior: true)
        }
    }

    /// After `key` of `object` changed: the notifications with the new value, and the
    /// registrar's `didSet`.
    func didChange(_ key: String, of object: NSManagedObject) {
        guard batchDepth == 0 else { return }
        let old = pendingOld[key]?.popLast() ?? nil
        if pendingOld[key]?.isEmpty == true { pendingOld[key] = nil }
        if let registrar, accessedKeys.contains(key) {
            registrar.didSet(object, keyPath: ObservationKeyPaths.keyPath(for: key))
        }
        let observing = registrations.filter { $0.key == key }
        guard !observing.isEmpty else { return }
        let wantsNew = observing.contains { $0.options.contains(.new) }
        let new: Any?? = wantsNew ? .some(object.observedValue(forKey: key)) : nil
        for registration in observing {
            deliver(registration, of: object, old: registration.options.contains(.old) ? old : nil,
                    new: registration.options.contains(.new) ? new : nil, isPrior: false)
        }
    }

    /// The notification `addObserver` sends at once for ``NSKeyValueObservingOptions/initial``.
    func deliverInitial(id: Int, of object: NSManagedObject) {
        guard let registration = registrations.first(where: { $0.id == id }), registration.options.contains(.initial) else { return }
        let new: Any?? = registration.options.contains(.new) ? .some(object.observedValue(forKey: registration.key)) : nil
        deliver(registration, of: object, old: nil, new: new, isPrior: false)
    }

    private func deliver(_ registration: Registration, of object: NSManagedObject, old: Any??, new: Any??, isPrior: Bool) {
        if let handler = registration.handler {
            handler(object, .setting, old, new, isPrior)
            return
        }
        guard let observer = registration.observer else { return }
        var change: [NSKeyValueChangeKey: Any] = [.kindKey: NSNumber(value: NSKeyValueChange.setting.rawValue)]
        if isPrior { change[.notificationIsPriorKey] = NSNumber(value: true) }
        if let old { change[.oldKey] = old ?? NSNull() }
        if let new { change[.newKey] = new ?? NSNull() }
        observer.observeValue(forKeyPath: registration.key, of: object, change: change, context: registration.context)
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

    /// A modeled property's value as `value(forKey:)` gives it, for a notification.
    func observedValue(forKey key: String) -> Any? {
        guard entity.propertiesByName[key] != nil else { return nil }
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

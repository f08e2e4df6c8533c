import CoreDataModel
import Foundation

/// One observation of a dotted key path (`author.name`, `books.title`) of a managed object: it
/// follows the path through the objects along it, as Apple's key-value observing does, and
/// reports every change of the value at the whole path to its observer or handler.
///
/// The path is kept as a tree of links, one per (object, key) it passes through: the root
/// object's first key, the destination's next key, and so on (a to-many step fans out to every
/// member). Each link is an ordinary single-key registration on its object, so the changes it
/// hears come from the same places single-key observers hear them from (setters, inverse
/// maintenance, undo and redo, refreshes, merges, rollback), and an object nobody observes
/// still costs one `nil` check per change. When a relationship along the path changes, the
/// links below it are taken off the objects that left the path and put on the ones that joined.
///
/// A composite attribute's element (`address.city`) is one slot, hence one key, not a step.
///
/// Ownership: the links' registrations hold this object; it holds the objects weakly (Apple's
/// key-value observing retains neither the observed object nor the objects along the path), so
/// a released intermediate object simply drops its links.
///
/// Threading: part of its root object; touched only on the object's context queue.
final class KeyPathObservation {
    /// One (object, key) the path passes through, and the links of the next key on the key's
    /// destinations.
    private final class Link {
        weak var object: NSManagedObject?
        let key: String
        /// Where the keys after this link's key start in ``KeyPathObservation/keys``.
        let next: Int
        var registration = 0
        var children: [Link] = []
        var isAttached = true

        init(object: NSManagedObject, key: String, next: Int) {
            self.object = object
            self.key = key
            self.next = next
        }
    }

    let keyPath: String
    let options: NSKeyValueObservingOptions
    let context: UnsafeMutableRawPointer?
    /// The observer of `addObserver(_:forKeyPath:options:context:)`, not retained (see
    /// ``ObjectObservation/Registration/observer``).
    weak var observer: (any NSKeyValueObserving)?
    let observerIdentity: ObjectIdentifier?
    /// The handler of `observe(_:options:changeHandler:)`.
    let handler: ObjectObservation.Handler?

    private let keys: [String]
    private weak var root: NSManagedObject?
    private var top: Link?
    /// The value at the path before each change in progress (outer `nil` where `.old` was not
    /// asked for), by the link that heard the change, innermost last.
    private var pending: [ObjectIdentifier: [Any??]] = [:]

    init(root: NSManagedObject, keyPath: String, options: NSKeyValueObservingOptions, context: UnsafeMutableRawPointer?,
         observer: (any NSKeyValueObserving)?, handler: ObjectObservation.Handler?) {
        self.root = root
        self.keyPath = keyPath
        self.keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        self.options = options
        self.context = context
        self.observer = observer
        self.observerIdentity = observer.map { ObjectIdentifier($0) }
        self.handler = handler
    }

    /// Puts the links on the objects along the path and sends the ``NSKeyValueObservingOptions/initial``
    /// notification when asked for.
    ///
    /// Complexity: one read and one registration per object along the path (every member of a
    /// to-many step); reading a relationship fires its object's fault, as Apple's does.
    func start() {
        guard let root else { return }
        top = attach(on: root, from: 0)
        if options.contains(.initial) {
            deliver(old: nil, new: options.contains(.new) ? .some(root.value(forKeyPath: keyPath)) : nil, isPrior: false, root: root)
        }
    }

    /// Takes every link off its object; nothing is reported afterwards. Calling it twice does nothing.
    func stop() {
        if let top { detach(top) }
        top = nil
        pending = [:]
    }

    // MARK: Links

    /// The key at `index` of the path on an object of `entity`, and where the keys after it
    /// start: a composite attribute's element (`address.city`, `address.geo.lat`) is one key.
    private static func key(in keys: [String], at index: Int, of entity: NSEntityDescription) -> (key: String, next: Int) {
        if index + 1 < keys.count, entity.attributesByName[keys[index]] is NSCompositeAttributeDescription {
            let slots = entity.slotAttributesByName
            var end = keys.count
            while end > index + 1 {
                let joined = keys[index..<end].joined(separator: ".")
                if slots[joined] != nil { return (joined, end) }
                end -= 1
            }
        }
        return (keys[index], index + 1)
    }

    private func attach(on object: NSManagedObject, from index: Int) -> Link {
        let (key, next) = Self.key(in: keys, at: index, of: object.entity)
        let link = Link(object: object, key: key, next: next)
        link.registration = object.makeObservation().add(
            key: key, options: .prior, context: nil, observer: nil,
            handler: { [weak link] _, _, _, _, _, isPrior in
                guard let link else { return }
                self.linkChanged(link, isPrior: isPrior)
            })
        link.children = children(of: link)
        return link
    }

    /// The links of the keys after `link`'s on the objects its key leads to now.
    private func children(of link: Link) -> [Link] {
        guard link.next < keys.count, let object = link.object, object.entity.relationshipsByName[link.key] != nil else { return [] }
        let destinations: [NSManagedObject]
        switch object.value(forKey: link.key) {
        case let one as NSManagedObject: destinations = [one]
        case let many as Set<NSManagedObject>: destinations = Array(many)
        case let ordered as NSOrderedSet: destinations = ordered.array.compactMap { $0 as? NSManagedObject }
        default: destinations = []
        }
        return destinations.map { attach(on: $0, from: link.next) }
    }

    private func detach(_ link: Link) {
        link.isAttached = false
        pending[ObjectIdentifier(link)] = nil
        for child in link.children { detach(child) }
        link.children = []
        link.object?.removeObservationRegistration(id: link.registration)
    }

    /// A link's key changed (or is about to): the value at the whole path is reported, and after
    /// a relationship changed the links below it follow the new destinations.
    private func linkChanged(_ link: Link, isPrior: Bool) {
        guard link.isAttached else { return }
        guard let root else {
            // The observed object is gone (Apple's would have raised); release the rest of the path.
            stop()
            return
        }
        let id = ObjectIdentifier(link)
        if isPrior {
            let old: Any?? = options.contains(.old) ? .some(root.value(forKeyPath: keyPath)) : nil
            pending[id, default: []].append(old)
            if options.contains(.prior) { deliver(old: old, new: nil, isPrior: true, root: root) }
            return
        }
        let old = pending[id]?.popLast() ?? nil
        if pending[id]?.isEmpty == true { pending[id] = nil }
        if link.next < keys.count {
            for child in link.children { detach(child) }
            link.children = children(of: link)
        }
        deliver(old: old, new: options.contains(.new) ? .some(root.value(forKeyPath: keyPath)) : nil, isPrior: false, root: root)
    }

    /// Sends one notification: a ``NSKeyValueChange/setting`` of the value at the whole path,
    /// whatever the step that changed (Apple reports a path's changes so, a to-many step's
    /// value being the set of its members' values).
    private func deliver(old: Any??, new: Any??, isPrior: Bool, root: NSManagedObject) {
        if let handler {
            handler(root, .setting, old, new, nil, isPrior)
            return
        }
        guard let observer else { return }
        var change: [NSKeyValueChangeKey: Any] = [.kindKey: NSNumber(value: NSKeyValueChange.setting.rawValue)]
        if isPrior { change[.notificationIsPriorKey] = NSNumber(value: true) }
        if let old { change[.oldKey] = old ?? NSNull() }
        if let new { change[.newKey] = new ?? NSNull() }
        observer.observeValue(forKeyPath: keyPath, of: root, change: change, context: context)
    }

    // MARK: Validation

    /// Why `keyPath` cannot be observed on objects of `entity`, or `nil` when it can: every key
    /// but the last must be a relationship (of the destination entity or one of its subentities),
    /// a composite attribute's element path counting as one key, and the last a property.
    static func problem(with keyPath: String, on entity: NSEntityDescription) -> String? {
        let keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var entities = [entity]
        var index = 0
        while index < keys.count {
            let step = entities.lazy.map { key(in: keys, at: index, of: $0) }.first { $0.next > index + 1 } ?? (key: keys[index], next: index + 1)
            let known = entities.compactMap { candidate -> NSPropertyDescription? in
                candidate.propertiesByName[step.key] ?? candidate.slotAttributesByName[step.key]
            }
            guard let property = known.first else {
                return "the entity \(entities.first?.name ?? "?") has no property '\(step.key)'"
            }
            if step.next >= keys.count { return nil }
            guard let relationship = property as? NSRelationshipDescription, let destination = relationship.destinationEntity else {
                return "'\(step.key)' of \(entities.first?.name ?? "?") is not a relationship, so '\(keys[step.next...].joined(separator: "."))' cannot follow it"
            }
            entities = [destination] + allSubentities(of: destination)
            index = step.next
        }
        return nil
    }

    private static func allSubentities(of entity: NSEntityDescription) -> [NSEntityDescription] {
        entity.subentities.flatMap { [$0] + allSubentities(of: $0) }
    }
}

import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation
import Synchronization

/// An object of an entity, living in a context: its values, its relationships, and what changed
/// since it was last saved.
///
/// Matches Apple's `NSManagedObject`. Create one with `init(entity:insertInto:)`,
/// `init(context:)` (for a subclass whose entity the model names) or
/// `NSEntityDescription.insertNewObject(forEntityName:into:)`; a bare `init()` traps, as Apple's
/// "Failed to call designated initializer on NSManagedObject class" does.
///
/// Threading: an object belongs to its context's queue; use it only inside the context's
/// `perform`/`performAndWait` (or on the main thread for a main-queue context). Pass
/// `objectID`s between threads instead.
open class NSManagedObject: NSObject, KeyValueReadable {
    /// The object's entity.
    public let entity: NSEntityDescription

    /// The object's ID: temporary until the object is saved, permanent after.
    ///
    /// The temporary ID is made when first asked for: an object inserted and saved without
    /// anyone asking for its ID gets only the permanent one. An inserted object joins its
    /// context's registry when its temporary ID is made (only that ID can find it there).
    ///
    /// An object made for a fetched row keeps only its store and primary key until its ID is
    /// asked for: the context finds it by the same values, so most fetched objects never need
    /// the ID object. The ID made then is equal to any other ID of the object, and reading it
    /// is safe from any thread, as with an ID made at once.
    public internal(set) var objectID: NSManagedObjectID {
        get {
            switch identity {
            case .id(let id): return id
            case .fetched:
                return madeFetchedID()
            case .none:
                let made = NSManagedObjectID(temporaryFor: entity)
                identity = .id(made)
                if lifecycle.isInserted, let context = managedObjectContext { context.registered[made] = self }
                return made
            }
        }
        set { identity = .id(newValue) }
    }

    /// What names the object: its ID once made; for a fetched object whose ID nobody asked
    /// for, its store (and ``fetchedKey``); nothing for an inserted object whose temporary ID
    /// nobody asked for. One field for both, so that neither costs a fetched object a word.
    enum Identity {
        case none
        case id(NSManagedObjectID)
        case fetched(FetchedStoreHandle)
    }

    /// Makes a fetched object's ID from its store and key, once: code on other threads may ask
    /// for a fetched object's ID (Apple's objects allow it), and two of them making one each
    /// would give two IDs and release the store handle twice.
    private func madeFetchedID() -> NSManagedObjectID {
        Self.identityLock.withLock { _ in
            switch identity {
            case .id(let id): return id
            case .fetched(let handle):
                let made = NSManagedObjectID(entity: entity, handle: handle, storeID: fetchedStoreObjectID)
                identity = .id(made)
                return made
            case .none:
                preconditionFailure("CoreData: a fetched object lost its identity")
            }
        }
    }

    private static let identityLock = Mutex<Void>(())

    @exclusivity(unchecked) private var identity = Identity.none
    /// A fetched object's primary key in its store, while ``identity`` is `.fetched`.
    @exclusivity(unchecked) private var fetchedKey: Int64 = 0

    /// The ID once made (``objectID``); `nil` while none was asked for.
    var storedID: NSManagedObjectID? {
        if case .id(let id) = identity { return id }
        return nil
    }

    /// A fetched object's ID in its store (meaningful while ``identity`` is `.fetched`).
    private var fetchedStoreObjectID: StoreObjectID {
        StoreObjectID(entity: entity.entityNumber, primaryKey: fetchedKey)
    }

    /// Whether the object is a fetched one whose ID nobody asked for.
    var hasFetchedIdentity: Bool {
        if case .fetched = identity { return true }
        return false
    }

    /// Gives a fetched object its identity without an ID object (see ``objectID``).
    func setFetchedIdentity(store: NSPersistentStore, primaryKey: Int64) {
        identity = .fetched(store.fetchedHandle)
        fetchedKey = primaryKey
    }

    /// Whether the object has no permanent ID yet, without making a temporary one.
    var hasTemporaryID: Bool {
        switch identity {
        case .id(let id): return id.isTemporaryID
        case .fetched: return false
        case .none: return true
        }
    }

    /// The object's store and its ID there, without making an ``objectID``; `nil` while the
    /// object has no permanent ID.
    var storeLocation: (store: NSPersistentStore, id: StoreObjectID)? {
        switch identity {
        case .fetched(let handle):
            guard let store = handle.store else { return nil }
            return (store, fetchedStoreObjectID)
        case .id(let objectID):
            guard let id = objectID.storeObjectID, let store = objectID.persistentStore else { return nil }
            return (store, id)
        case .none: return nil
        }
    }

    /// The context the object lives in; `nil` once the context is gone or the object was
    /// removed from it.
    ///
    /// Unchecked for exclusivity, as the state below: every value read and set loads it.
    @exclusivity(unchecked) public internal(set) weak var managedObjectContext: NSManagedObjectContext?

    // MARK: State (touched only on the context's queue)
    //
    // `@exclusivity(unchecked)`: every value set or read touches several of these, and the
    // runtime's dynamic exclusivity check costs about 80 instructions an access (callgrind: some
    // 3,500 of an imported object's 48,000). The context's queue already serialises the
    // accesses; the whole test suite ran with the checks on before they were turned off here.

    /// Current attribute values by slot of the entity's layout, filled lazily from the row.
    @exclusivity(unchecked) var attributeValues: AttributeSlots
    // The flags come right after the slots: a class lays out its fields in the order written,
    // and here they fill the slots' tail padding instead of padding words of their own (16
    // bytes of every object).
    /// Whether the values still have to be read from the store.
    @exclusivity(unchecked) var isFaultState = false
    /// Whether ``committedRow`` is a row a fetch read for this fault (``prefetchedRow``).
    @exclusivity(unchecked) var hasPrefetchedRow = false
    /// Set while the context inserts, deletes or saves the object.
    @exclusivity(unchecked) var lifecycle = Lifecycle()
    /// Current to-one destinations by relationship name, once materialised.
    var toOneValues: [String: NSManagedObject] {
        get { relationships?.toOne ?? [:] }
        _modify { yield &relationshipState.toOne }
        set { if relationships != nil || !newValue.isEmpty { relationshipState.toOne = newValue } }
    }
    /// Current to-many destinations by relationship name, in order, without duplicates.
    var toManyValues: [String: [NSManagedObject]] {
        get { relationships?.toMany ?? [:] }
        _modify {
            yield &relationshipState.toMany
            if !orderedSetProxies.isEmpty { updateOrderedSetProxies() }
        }
        set {
            guard relationships != nil || !newValue.isEmpty else { return }
            relationshipState.toMany = newValue
            if !orderedSetProxies.isEmpty { updateOrderedSetProxies() }
        }
    }
    /// Relationships whose destinations have been turned from IDs into objects.
    var materialisedRelationships: Set<String> {
        get { relationships?.materialised ?? [] }
        _modify { yield &relationshipState.materialised }
        set { if relationships != nil || !newValue.isEmpty { relationshipState.materialised = newValue } }
    }
    /// The three above, in a box made when a relationship is first materialised or set: an
    /// object whose relationships are never touched (most fetched objects) carries one empty
    /// word instead of three.
    @exclusivity(unchecked) private var relationships: RelationshipState?

    /// Whether any relationship was ever materialised or set (``relationships``): when not,
    /// the three collections above are empty without being read.
    var hasRelationshipState: Bool { relationships != nil }

    private var relationshipState: RelationshipState {
        if let relationships { return relationships }
        let made = RelationshipState()
        relationships = made
        return made
    }

    /// See ``relationships``.
    final class RelationshipState {
        // Unchecked, as the object's own state: touched only on the context's queue.
        @exclusivity(unchecked) var toOne: [String: NSManagedObject] = [:]
        @exclusivity(unchecked) var toMany: [String: [NSManagedObject]] = [:]
        @exclusivity(unchecked) var materialised: Set<String> = []
    }
    /// The row as last read from or saved to the store; `nil` for an unsaved object.
    @exclusivity(unchecked) var committedRow: StoreRow?
    /// Attribute slots (below 64) changed since the last save or fetch, one bit each: setting an
    /// attribute marks a bit instead of hashing its name into a set.
    @exclusivity(unchecked) var changedSlots: UInt64 = 0
    /// The context's change-notice generation in which this object was last noted in a change
    /// notice (updated, or inserted: ``startInsertEvent(in:)``), so a run of `setValue` calls in
    /// one event notes it once.
    @exclusivity(unchecked) var notedChangeGeneration = -1
    /// Other keys changed since the last save or fetch (relationships, slots from 64 on).
    @exclusivity(unchecked) var changedOtherKeys: Set<String> = []
    /// What changed in the event in which the object last changed (`notedChangeGeneration`),
    /// for ``changedValuesForCurrentEvent()``: attribute slots below 64, then other keys.
    @exclusivity(unchecked) var eventSlots: UInt64 = 0
    @exclusivity(unchecked) var eventOtherKeys: Set<String> = []

    /// Keys changed since the last save or fetch, by name (built from the slot bits; for the
    /// name-based API and the slower paths). Setting it replaces both parts.
    var changedKeys: Set<String> {
        get { keys(ofSlots: changedSlots, plus: changedOtherKeys) }
        set {
            changedSlots = 0
            changedOtherKeys = newValue
        }
    }

    /// Whether any key changed since the last save or fetch, without building the set.
    var hasChangedKeys: Bool { changedSlots != 0 || !changedOtherKeys.isEmpty }
    /// The row a fetch already read for this fault, so that firing it needs no store read.
    ///
    /// Kept as the committed row, not beside it: a fetch's row is the store's state of the
    /// object as this context last read it, which is what the committed row stands for; a
    /// second copy cost every fetched object 56 bytes and a release.
    var prefetchedRow: StoreRow? {
        get { hasPrefetchedRow ? committedRow : nil }
        set {
            if let newValue {
                committedRow = newValue
                hasPrefetchedRow = true
            } else {
                hasPrefetchedRow = false
            }
        }
    }
    /// The batch of a `fetchBatchSize` fetch this fault belongs to: firing it reads the rows of
    /// the whole batch at once.
    @exclusivity(unchecked) var faultBatch: FaultBatch?
    /// The object's observers (key-value observing, block observations, the Observation
    /// registrar); `nil` until something observes it, so that a change costs one check.
    @exclusivity(unchecked) var observation: ObjectObservation?
    /// The context registry entry that names this object, which `deinit` removes (the registry
    /// holds objects unretained: ``RegisteredObjects``).
    @exclusivity(unchecked) var registration: RegisteredObjects.Membership?
    /// State few objects ever have, in a box made when first needed (``RareState``), so that a
    /// fetched object does not carry and free four empty fields.
    @exclusivity(unchecked) var rare: RareState?

    /// The live `mutableOrderedSetValue(forKey:)` proxies of this object; they mirror
    /// ``toManyValues`` for reads Foundation does not let them override.
    var orderedSetProxies: [WeakOrderedSetProxy] {
        get { rare?.orderedSetProxies ?? [] }
        set { if rare != nil || !newValue.isEmpty { rareState.orderedSetProxies = newValue } }
    }
    /// Fetched property results by property name, computed when first read and kept until the
    /// object is refreshed (as Apple's are).
    var fetchedPropertyValues: [String: [Any]] {
        get { rare?.fetchedPropertyValues ?? [:] }
        set { if rare != nil || !newValue.isEmpty { rareState.fetchedPropertyValues = newValue } }
    }
    /// Set on the stand-in objects that name key paths (see ``KeyPathProbe``); `nil` otherwise.
    var keyPathProbe: KeyPathProbe? {
        get { rare?.keyPathProbe }
        set { if rare != nil || newValue != nil { rareState.keyPathProbe = newValue } }
    }
    /// In a child context: the destinations the parent context had, by relationship name.
    var parentRelationships: [String: [NSManagedObjectID]]? {
        get { rare?.parentRelationships }
        set { if rare != nil || newValue != nil { rareState.parentRelationships = newValue } }
    }

    /// The box of rare state, made on first write.
    private var rareState: RareState {
        if let rare { return rare }
        let made = RareState()
        rare = made
        return made
    }

    /// See ``rare``.
    final class RareState {
        var orderedSetProxies: [WeakOrderedSetProxy] = []
        var fetchedPropertyValues: [String: [Any]] = [:]
        var keyPathProbe: KeyPathProbe?
        var parentRelationships: [String: [NSManagedObjectID]]?
    }

    struct Lifecycle {
        var isInserted = false
        var isDeleted = false
        /// Set from `willTurnIntoFault()` to the end of `didTurnIntoFault()` (``faultingState``).
        var isTurningIntoFault = false
        /// Inserted, then deleted (or its insert undone) before any save: out of the context's
        /// changes until inserted again or brought back by undo. A change to it is not an
        /// update (there is no row to update), a delete rule that leads back to it does not
        /// delete it twice, and a saved relationship leaves it out (it has no row to point at).
        var isDiscarded = false
        /// Deleted or discarded: leaving the context's changes, with no row for others to point at.
        var isDeletedOrDiscarded: Bool { isDeleted || isDiscarded }
    }

    /// Creates an object of `entity` and inserts it into `context` (if given).
    ///
    /// The entity's default values are set, then `awakeFromInsert()` runs.
    public required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        self.entity = entity
        // Default values are filled on first read (AttributeSlots), so an object made for a
        // fetched row does not set defaults it throws away.
        self.attributeValues = AttributeSlots(entity: entity)
        super.init()
        if let context {
            context.insert(self)
        }
    }

    deinit {
        // The registry's entry points at this object without retaining it: gone with it.
        if let registration {
            let listeningID = storedID.flatMap { $0.storeObservesRegistrations ? $0 : nil }
            registration.table.objectDidDeinit(Unmanaged.passUnretained(self).toOpaque(), key: registration.key, listeningID: listeningID)
        }
    }

    /// Creates an object of the subclass's entity in `context`.
    ///
    /// The entity is the one whose class name (`representedClassName`) names this class in the
    /// context's model; a class the model does not name traps with a message saying so.
    public convenience init(context: NSManagedObjectContext) {
        guard let model = context.persistentStoreCoordinator?.managedObjectModel ?? context.parentModel else {
            preconditionFailure("CoreData: \(Self.self)(context:) needs a context connected to a coordinator")
        }
        guard let entity = EntityClassRegistry.entity(for: Self.self, in: model) else {
            preconditionFailure("CoreData: the model has no entity whose class is \(Self.self); set the entity's class name (representedClassName) to '\(Self.self)'")
        }
        self.init(entity: entity, insertInto: context)
    }

    /// Apple's objects cannot be made without an entity; neither can these.
    public override init() {
        preconditionFailure("CoreData: Failed to call designated initializer on NSManagedObject class '\(type(of: self))': use init(entity:insertInto:) or init(context:)")
    }

    /// The entity of this class in the model of the most recently created coordinator that names it.
    open class func entity() -> NSEntityDescription {
        guard let entity = EntityClassRegistry.entityInAnyModel(for: self) else {
            preconditionFailure("CoreData: no loaded model has an entity whose class is \(self); create a container or coordinator for the model first")
        }
        return entity
    }

    /// A fetch request for this class's entity.
    open class func fetchRequest() -> NSFetchRequest<NSFetchRequestResult> {
        NSFetchRequest<NSFetchRequestResult>(entityName: entity().name ?? "")
    }

    // MARK: Lifecycle hooks (override points, as Apple's)

    /// Called once, after the object is first inserted into a context.
    open func awakeFromInsert() {}
    /// Called after the object's values are read from a store.
    open func awakeFromFetch() {}
    /// Called before the object is saved; changes made here are saved too.
    open func willSave() {}
    /// Called after the object was saved.
    open func didSave() {}
    /// Called before the object is deleted (before delete rules run).
    open func prepareForDeletion() {}
    /// Called before the object turns into a fault.
    open func willTurnIntoFault() {}
    /// Called after the object turned into a fault.
    open func didTurnIntoFault() {}

    // MARK: Key-value access (declared here so that subclasses can override them)

    /// The value of a property: an attribute's value as Apple's key-value coding returns it (a
    /// number or boolean as `NSNumber`, a decimal as `NSDecimalNumber`, so that `as? Int`,
    /// `as? Double` and `as? Bool` work whatever the attribute's width; other types as their Swift
    /// value), a to-one relationship's object, a to-many relationship's objects as
    /// `Set<NSManagedObject>` (an `NSOrderedSet` when ordered).
    ///
    /// Reading fires the fault if the object is one. A key that is neither a property of the
    /// entity nor `objectID`/`entity`/`self` traps, as Apple's `valueForUndefinedKey:` raises.
    /// ``Managed`` properties read the Swift value directly and are the cheaper path.
    open func value(forKey key: String) -> Any? { kvcValue(forKey: key, bridged: true) }

    /// Sets a property, keeping the inverse relationship in step and recording the change.
    ///
    /// A to-many relationship takes any collection of objects (`Set`, `Array`, `NSSet`,
    /// `NSOrderedSet`). Types are checked when the context saves (validation), as on Apple.
    open func setValue(_ value: Any?, forKey key: String) { kvcSetValue(value, forKey: key) }

    /// The value at a dotted key path (`"author.name"`); through a to-many relationship, the values
    /// of all destinations as an `NSSet` (an `NSOrderedSet` when every to-many step is ordered).
    ///
    /// Apple's collection operators apply to the collection on their left: `"books.@count"`,
    /// `"books.@sum.pages"`, `@avg`, `@min`, `@max` give an `NSNumber` (so `as? Int` and
    /// `as? Double` work), `@unionOfObjects` and `@distinctUnionOfObjects` an array. An unknown
    /// operator traps, as Apple's raises.
    open func value(forKeyPath keyPath: String) -> Any? { kvcValue(forKeyPath: keyPath) }

    /// Sets the value at a dotted key path; the last key is set on the object the rest leads to.
    open func setValue(_ value: Any?, forKeyPath keyPath: String) {
        var parts = keyPath.split(separator: ".").map(String.init)
        guard let last = parts.popLast() else { return }
        let target = parts.isEmpty ? self : kvcValue(forKeyPath: parts.joined(separator: ".")) as? NSManagedObject
        target?.setValue(value, forKey: last)
    }

    /// The stored value of a property, without change notifications; numbers, booleans and
    /// decimals bridged as ``value(forKey:)`` bridges them.
    open func primitiveValue(forKey key: String) -> Any? { kvcPrimitiveValue(forKey: key) }

    /// Sets the stored value of a property: no change is recorded (no `hasChanges`, no undo, no notification) and the inverse relationship is not maintained; bracket it with `willChangeValue(forKey:)`/`didChangeValue(forKey:)` to make it a change, as Apple's custom accessors do.
    open func setPrimitiveValue(_ value: Any?, forKey key: String) { kvcStorePrimitiveValue(value, forKey: key) }

    /// Before a custom accessor reads a property through `primitiveValue(forKey:)`: fires the
    /// fault when the object is one (pass `nil` just to fire it), and registers the read with
    /// the Observation framework when the context tracks observation access
    /// (``NSManagedObjectContext/tracksObservationAccess``), as `value(forKey:)` does.
    open func willAccessValue(forKey key: String?) {
        let context = managedObjectContext
        context?.assertOnQueue(touching: self)
        fireFaultIfNeeded()
        if let key, context?.tracksObservationAccess == true, keyPathProbe == nil { noteObservedAccess(key) }
    }
    /// After a custom accessor read a property; nothing is left to do (kept for source compatibility).
    open func didAccessValue(forKey key: String?) {}
    /// Before a modeled property changes through `setPrimitiveValue(_:forKey:)`: records the value undo puts back.
    open func willChangeValue(forKey key: String) { kvcWillChangeValue(forKey: key) }
    /// After a modeled property changed through `setPrimitiveValue(_:forKey:)`: records the change, as `setValue(_:forKey:)` does.
    open func didChangeValue(forKey key: String) { kvcDidChangeValue(forKey: key) }

    /// Receives changes of objects this object observes (as an observer added with
    /// `addObserver(_:forKeyPath:options:context:)`). Override it, as on Apple platforms; the
    /// default traps, as Apple's `NSObject` implementation raises for an unhandled notification.
    open func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
        preconditionFailure("CoreData: \(type(of: self)) received a change of '\(keyPath ?? "")' but does not override observeValue(forKeyPath:of:change:context:)")
    }

    // MARK: Validation (override points)

    /// Checks the object before its insert is saved: required values, the model's rules,
    /// relationship counts. Throws an `NSError` with Apple's validation code, or
    /// `NSValidationMultipleErrorsError` (1560) with the individual errors under `NSDetailedErrorsKey`.
    /// Overrides should call `super`.
    open func validateForInsert() throws { try modelValidationForInsertOrUpdate() }

    /// Checks the object before its changes are saved (the same rules as an insert).
    open func validateForUpdate() throws { try modelValidationForInsertOrUpdate() }

    /// Checks that the object may be deleted: a deny rule refuses while its relationship still
    /// holds objects (`NSValidationRelationshipDeniedDeleteError`, 1600).
    open func validateForDelete() throws { try modelValidationForDelete() }

    /// Checks one value for one key against the model's rules (Apple's per-key validation; the
    /// value is passed in and out through the pointer). Linux has no
    /// `AutoreleasingUnsafeMutablePointer`; callers' `&value` converts to this pointer unchanged.
    open func validateValue(_ value: UnsafeMutablePointer<AnyObject?>, forKey key: String) throws {
        try modelValidation(value: value.pointee, forKey: key)
    }

    // MARK: State queries

    /// Whether the object was inserted and not yet saved.
    public var isInserted: Bool { lifecycle.isInserted }
    /// Whether the object was deleted and the delete not yet saved.
    public var isDeleted: Bool { lifecycle.isDeleted }
    /// Whether the object has unsaved changes to stored properties.
    public var isUpdated: Bool { !lifecycle.isInserted && !lifecycle.isDeleted && hasChangedKeys }
    /// Whether the object was inserted, updated or deleted and not yet saved.
    public var hasChanges: Bool { lifecycle.isInserted || lifecycle.isDeleted || hasChangedKeys }
    /// Whether the object has unsaved changes to non-transient properties.
    public var hasPersistentChangedValues: Bool {
        changedKeys.contains { entity.propertiesByName[$0]?.isTransient == false }
    }
    /// Whether the object's values have not been read from the store yet.
    public var isFault: Bool { isFaultState }

    /// Identity, as `NSObject`'s, mixed by one multiply instead of a `Hasher`: every set of
    /// objects (the change notifications' inserted, updated and deleted sets, a save's) hashes
    /// each object, and `Set` runs its own seeded `Hasher` over this value anyway. Apple asks
    /// subclasses not to override `hash` and `isEqual(_:)`; equality stays identity.
    open override var hash: Int {
        // The address's low bits are zero (alignment); the multiply moves its entropy up.
        Int(bitPattern: UInt(bitPattern: ObjectIdentifier(self)) &* 0x9E37_79B9_7F4A_7C15)
    }

    /// Identity, as `NSObject`'s, without its cast of `object` from `Any` (see `classReference(_:)`).
    open override func isEqual(_ object: Any?) -> Bool {
        guard let object else { return false }
        return classReference(object) === self
    }

    open override var description: String {
        let values = isFaultState ? "<fault>" : "{" + entity.attributesByName.keys.sorted().map { "\($0) = \(attributeValues[$0].map { "\($0)" } ?? "nil")" }.joined(separator: "; ") + "}"
        return "<\(type(of: self)): entity \(entity.name ?? "?"); id \(objectID); data \(values)>"
    }
}

extension NSManagedObject: PredicateIdentifiable {
    /// Objects compare in predicates by their ID, so that a managed object given as an argument
    /// matches the same object's row in a store.
    public var predicateIdentity: AnyHashable {
        if hasFetchedIdentity { return AnyHashable(fetchedStoreObjectID) }
        return objectID.predicateIdentity
    }
}

extension NSManagedObjectID: PredicateIdentifiable {
    /// A permanent ID compares equal to its store row; a temporary ID only to itself.
    public var predicateIdentity: AnyHashable {
        switch key {
        case .permanent(_, let id): return AnyHashable(id)
        case .temporary(let number): return AnyHashable(TemporaryObjectIdentity(number: number))
        }
    }
}

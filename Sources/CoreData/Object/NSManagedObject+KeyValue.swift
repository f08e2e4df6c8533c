import CoreDataModel
import CoreDataPredicate
import CoreDataStorage
import Foundation

extension NSManagedObject {
    // Implements the overridable `value` declared on the class.
    func kvcValue(forKey key: String) -> Any? { kvcValue(forKey: key, bridged: false) }

    /// A property's value; with `bridged`, an attribute's number, boolean or decimal comes back
    /// as the Foundation object Apple's `value(forKey:)` returns (``FoundationBridge``), so that
    /// `as? Int` works on an Integer 16 attribute as it does on Apple platforms. Typed accessors
    /// and the framework's own reads take the Swift value (`bridged: false`): the cast from an
    /// `NSNumber` costs about ten times the cast from the Swift value.
    func kvcValue(forKey key: String, bridged: Bool) -> Any? {
        if let keyPathProbe { return keyPathProbe.read(key, on: self) }
        switch key {
        case "objectID": return objectID
        case "entity": return entity
        case "self": return self
        default: break
        }
        // Attributes, the common case: one hash (name → slot), no dynamic cast.
        let table = attributeValues.table
        if let slot = table.layout.slot(of: key), table.attributes[slot] != nil {
            let context = managedObjectContext
            context?.assertOnQueue(touching: self)
            fireFaultIfNeeded(in: context)
            if context?.tracksObservationAccess == true { noteObservedAccess(key) }
            // The type is checked first so that strings and the like pass with no copy of the value.
            if bridged, let type = table.traits[slot].attributeType, Self.bridgesToFoundation(type) {
                return Self.bridged(attributeValues[slot: slot], of: type)
            }
            return attributeValues[slot: slot]
        }
        guard let property = entity.propertiesByName[key] else {
            preconditionFailure("CoreData: [<\(type(of: self)) \(objectID)> valueForUndefinedKey:]: the entity \(entity.name ?? "?") is not key value coding-compliant for the key \"\(key)\"")
        }
        let context = managedObjectContext
        context?.assertOnQueue(touching: self)
        fireFaultIfNeeded()
        if context?.tracksObservationAccess == true { noteObservedAccess(key) }
        let value = currentValue(of: property)
        return bridged ? Self.bridged(value, of: property) : value
    }

    /// Whether `bridged(_:of:)` changes values of `type`: numbers, booleans and decimals.
    @inline(__always)
    static func bridgesToFoundation(_ type: NSAttributeType) -> Bool {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
             .floatAttributeType, .booleanAttributeType, .decimalAttributeType:
            return true
        default:
            return false
        }
    }

    /// An attribute's value as Apple's key-value coding returns it: numbers and booleans as
    /// `NSNumber`, decimals as `NSDecimalNumber`; every other value unchanged.
    static func bridged(_ value: Any?, of type: NSAttributeType?) -> Any? {
        guard let value, let type else { return value }
        switch type {
        case .integer16AttributeType:
            if let number = value as? Int16 { return NSNumber(value: number) }
        case .integer32AttributeType:
            if let number = value as? Int32 { return NSNumber(value: number) }
        case .integer64AttributeType:
            if let number = value as? Int64 { return NSNumber(value: number) }
        case .doubleAttributeType:
            if let number = value as? Double { return NSNumber(value: number) }
        case .floatAttributeType:
            if let number = value as? Float { return NSNumber(value: number) }
        case .booleanAttributeType:
            if let flag = value as? Bool { return NSNumber(value: flag) }
        case .decimalAttributeType:
            if let decimal = value as? Decimal { return NSDecimalNumber(decimal: decimal) }
        default:
            return value
        }
        // A value of another Swift type set with `setValue(_:forKey:)` (an `Int` for an Integer
        // 16 attribute): bridged as it is.
        return FoundationBridge.scalar(value)
    }

    /// The bridged value of any property: a composite attribute's elements each bridged.
    static func bridged(_ value: Any?, of property: NSPropertyDescription) -> Any? {
        switch property {
        case is NSCompositeAttributeDescription: return FoundationBridge.object(value)
        case let attribute as NSAttributeDescription: return bridged(value, of: attribute.attributeType)
        default: return value
        }
    }

    // Implements the overridable `setValue` declared on the class.
    func kvcSetValue(_ value: Any?, forKey key: String) {
        // The table the slots were made with (the entity's, once its model froze), without
        // asking the entity.
        let table = attributeValues.table
        if let slot = table.layout.slot(of: key), table.attributes[slot] != nil {
            if table.traits[slot].isDerived { Self.derivedAttributeSet(key, of: entity) }
            // The context is loaded once for the whole set: every load of the weak reference
            // and its release cost some 130 instructions, four of them a set before. It is loaded
            // again only after code that may move the object (awakeFromFetch, observers).
            var context = managedObjectContext
            context?.assertOnQueue(touching: self)
            if isFaultState, let faulting = context {
                faulting.fulfillFault(self)
                context = managedObjectContext
            }
            if let observation {
                observation.willChange(key, of: self)
                context = managedObjectContext
            }
            recordForUndo(key, in: context)
            attributeValues.set(value, atSlot: slot)
            if slot < 64 { noteChange(slot: slot, context: context) } else { noteChange(key) }
            return
        }
        guard let property = entity.propertiesByName[key] else {
            preconditionFailure("CoreData: [<\(type(of: self)) \(objectID)> setValue:forUndefinedKey:]: the entity \(entity.name ?? "?") is not key value coding-compliant for the key \"\(key)\"")
        }
        context_checkAccess()
        fireFaultIfNeeded()
        switch property {
        case let relationship as NSRelationshipDescription:
            if relationship.isToMany {
                setToMany(relationship, to: Self.objects(in: value, key: key))
            } else {
                guard value == nil || value is NSManagedObject else {
                    preconditionFailure("CoreData: '\(key)' of \(entity.name ?? "?") is a to-one relationship; it takes an NSManagedObject or nil, not \(type(of: value as Any))")
                }
                setToOne(relationship, to: value as? NSManagedObject)
            }
        case let composite as NSCompositeAttributeDescription:
            willChangeForUndo(key)
            setComposite(composite, to: value, noting: true)
            // The elements noted their own changes; observers of the whole composite hear theirs.
            if let observation { observation.didChange(key, of: self) }
        default:
            willChangeForUndo(key)
            attributeValues[key] = value
            noteChange(key)
        }
    }

    /// A derived attribute set by the app: programmer misuse, as on Apple's platforms, where the
    /// value is the store's to compute. Traps with the entity and attribute named.
    static func derivedAttributeSet(_ key: String, of entity: NSEntityDescription) -> Never {
        preconditionFailure(derivedAttributeMessage(key, of: entity))
    }

    static func derivedAttributeMessage(_ key: String, of entity: NSEntityDescription) -> String {
        "CoreData: '\(key)' of \(entity.name ?? "?") is a derived attribute; its value is computed when the context saves and cannot be set"
    }

    /// A composite attribute's value: the dictionary of its elements that have a value (nested
    /// composites as nested dictionaries), `nil` when none has.
    func compositeValue(_ composite: NSCompositeAttributeDescription, read: (String) -> Any?) -> [String: Any]? {
        var result: [String: Any] = [:]
        for element in composite.elements {
            let path = "\(composite.name).\(element.name)"
            if let nested = element as? NSCompositeAttributeDescription {
                let inner = NSCompositeAttributeDescription()
                inner.name = path
                inner.elements = nested.elements
                if let value = compositeValue(inner, read: read) { result[element.name] = value }
            } else if let value = read(path), !(value is NSNull) {
                result[element.name] = value
            }
        }
        return result.isEmpty ? nil : result
    }

    /// Sets each element of a composite attribute from a dictionary (`nil` clears them all).
    /// A value that is no dictionary, or a key that names no element, is programmer misuse.
    func setComposite(_ composite: NSCompositeAttributeDescription, to value: Any?, noting: Bool) {
        let dictionary: [String: Any]
        switch value {
        case nil, is NSNull: dictionary = [:]
        case let values as [String: Any]: dictionary = values
        case let values as NSDictionary:
            dictionary = Dictionary(uniqueKeysWithValues: values.compactMap { key, value in (key as? String).map { ($0, value) } })
        default:
            preconditionFailure("CoreData: '\(composite.name)' of \(entity.name ?? "?") is a composite attribute; it takes a [String: Any] dictionary or nil, not \(type(of: value as Any))")
        }
        for key in dictionary.keys where !composite.elements.contains(where: { $0.name == key }) {
            preconditionFailure("CoreData: composite attribute '\(composite.name)' of \(entity.name ?? "?") has no element '\(key)'")
        }
        let layout = entity.slotTable.layout
        for element in composite.elements {
            let path = "\(composite.name).\(element.name)"
            let elementValue = dictionary[element.name].flatMap { $0 is NSNull ? nil : $0 }
            if let nested = element as? NSCompositeAttributeDescription {
                let inner = NSCompositeAttributeDescription()
                inner.name = path
                inner.elements = nested.elements
                setComposite(inner, to: elementValue, noting: noting)
                continue
            }
            guard let slot = layout.slot(of: path) else { continue }
            // An element has a slot, and observers, of its own (`address.city`).
            if noting, let observation { observation.willChange(path, of: self) }
            attributeValues[slot: slot] = elementValue
            if noting { if slot < 64 { noteChange(slot: slot) } else { noteChange(path) } }
        }
    }

    // Implements the overridable `value` declared on the class. As Apple's key-value coding:
    // one key is `value(forKey:)`; a path through a to-many relationship collects the values
    // of every destination into an `NSSet` (an `NSOrderedSet` when every to-many step is
    // ordered); a collection operator (`@count`, `@sum`, `@avg`, `@min`, `@max`,
    // `@distinctUnionOfObjects`, `@unionOfObjects`) applies to the collection on its left and
    // the key path on its right, and gives an `NSNumber` (or an array for the unions).
    func kvcValue(forKeyPath keyPath: String) -> Any? {
        // A composite attribute's element (`address.city`) has a slot of its own.
        if keyPathProbe == nil, keyPath.contains("."), let slot = entity.slotTable.layout.slot(of: keyPath), entity.slotTable.attributes[slot] != nil {
            return value(forKey: keyPath)
        }
        let keys = keyPath.split(separator: ".").map(String.init)
        if keys.count == 1, !keyPath.hasPrefix("@") { return value(forKey: keyPath) }
        if let operatorIndex = keys.firstIndex(where: { $0.hasPrefix("@") }) {
            let left = keys[..<operatorIndex].joined(separator: ".")
            let right = keys[(operatorIndex + 1)...].joined(separator: ".")
            let collection: [Any]
            if left.isEmpty {
                collection = [self]
            } else {
                collection = Self.elements(of: kvcValue(forKeyPath: left))
            }
            return Self.apply(collectionOperator: keys[operatorIndex], to: collection, keyPath: right)
        }
        var current: [Any] = [self]
        var collection = false
        var ordered = true
        for key in keys {
            var next: [Any] = []
            for item in current {
                if let dictionary = item as? [String: Any] {
                    if let value = dictionary[key] { next.append(value) }
                    continue
                }
                guard let object = item as? NSManagedObject, let value = object.value(forKey: key) else { continue }
                if let many = value as? Set<NSManagedObject> {
                    next.append(contentsOf: Array(many))
                    collection = true
                    ordered = false
                } else if let ordered = value as? NSOrderedSet {
                    next.append(contentsOf: ordered.array)
                    collection = true
                } else {
                    next.append(value)
                }
            }
            current = next
        }
        guard collection else { return current.first }
        return ordered ? NSOrderedSet(array: current) as Any : NSSet(array: current) as Any
    }

    /// The elements of what a key path gave: a collection's members, or the one value.
    private static func elements(of value: Any?) -> [Any] {
        switch value {
        case nil: return []
        case let set as NSSet: return set.allObjects
        case let ordered as NSOrderedSet: return ordered.array
        case let set as Set<NSManagedObject>: return Array(set)
        case let array as [Any]: return array
        case let .some(single): return [single]
        }
    }

    /// A key-value coding collection operator over `collection`, reading `keyPath` of each
    /// element (the element itself when empty); unknown operators trap, as Apple's raise.
    private static func apply(collectionOperator name: String, to collection: [Any], keyPath: String) -> Any? {
        func values() -> [Any] {
            collection.compactMap { element -> Any? in
                guard !keyPath.isEmpty, keyPath != "self" else { return element }
                guard let object = element as? NSManagedObject else { return nil }
                let value = object.value(forKeyPath: keyPath)
                return value is NSNull ? nil : value
            }
        }
        switch name {
        case "@count":
            return NSNumber(value: collection.count)
        case "@sum", "@avg":
            let numbers = values().compactMap { ($0 as? NSNumber) }
            // An integer sum stays exact; a sum involving a fraction is a Double.
            let isIntegral = numbers.allSatisfy { !"fd".contains(String(cString: $0.objCType)) }
            if name == "@sum" {
                return isIntegral ? NSNumber(value: numbers.reduce(Int64(0)) { $0 &+ $1.int64Value }) : NSNumber(value: numbers.reduce(0.0) { $0 + $1.doubleValue })
            }
            guard !numbers.isEmpty else { return NSNumber(value: 0) }
            return NSNumber(value: numbers.reduce(0.0) { $0 + $1.doubleValue } / Double(numbers.count))
        case "@min", "@max":
            var best: Any?
            for value in values() {
                guard let current = best else {
                    best = value
                    continue
                }
                let order = CoreDataPredicate.NSSortDescriptor.compareValues(value, current, selector: "compare:")
                if (name == "@min" && order == .orderedAscending) || (name == "@max" && order == .orderedDescending) { best = value }
            }
            return FoundationBridge.object(best)
        case "@unionOfObjects":
            return values()
        case "@distinctUnionOfObjects":
            return NSSet(array: values()).allObjects
        default:
            preconditionFailure("CoreData: [<\(collection.first.map { String(describing: type(of: $0)) } ?? "?")> valueForKeyPath:]: this class does not implement the \(name) operation")
        }
    }

    // Implements the overridable `primitiveValue` declared on the class.
    func kvcPrimitiveValue(forKey key: String) -> Any? {
        guard let property = entity.propertiesByName[key] else { return nil }
        fireFaultIfNeeded()
        return Self.bridged(currentValue(of: property), of: property)
    }

    // Implements `setPrimitiveValue` declared on the class: as Apple's, the value is stored
    // and nothing else happens. It is no change: the object's `hasChanges`, `changedValues()`
    // and the context's updated objects stay as they were, no undo is recorded and no
    // change notification is posted; the inverse relationship is not maintained. The value is
    // saved with the object's other values when the object is saved because of a change
    // (or an insert), and lost when it is refreshed. Apple's custom accessors bracket it with
    // `willChangeValue(forKey:)` and `didChangeValue(forKey:)`, which make it a change.
    func kvcStorePrimitiveValue(_ value: Any?, forKey key: String) {
        guard let property = entity.propertiesByName[key] else { return }
        fireFaultIfNeeded()
        storePrimitive(value, for: property)
    }

    /// Sets a value as a change the context itself makes (a child context's save pushed into
    /// its parent, unsaved changes put back over re-read values): recorded for undo and noted
    /// like `setValue(_:forKey:)`, without maintaining the inverse relationship.
    func kvcSetPrimitiveValue(_ value: Any?, forKey key: String) {
        guard let property = entity.propertiesByName[key] else { return }
        fireFaultIfNeeded()
        willChangeForUndo(key)
        storePrimitive(value, for: property)
        noteChange(key)
    }

    private func storePrimitive(_ value: Any?, for property: NSPropertyDescription) {
        let key = property.name
        if let relationship = property as? NSRelationshipDescription {
            materialise(relationship)
            if relationship.isToMany {
                toManyValues[key] = Self.objects(in: value, key: key)
            } else {
                toOneValues[key] = value as? NSManagedObject
            }
        } else if let composite = property as? NSCompositeAttributeDescription {
            setComposite(composite, to: value, noting: false)
        } else {
            attributeValues[key] = value
        }
    }

    // Implements `willChangeValue(forKey:)` declared on the class: before a custom accessor
    // changes a modeled property through `setPrimitiveValue`, the value undo puts back is
    // recorded (the fault fired first, so that it is the stored value). Unmodeled keys are
    // ignored, as Apple's `contextShouldIgnoreUnmodeledPropertyChanges` does by default.
    func kvcWillChangeValue(forKey key: String) {
        guard entity.propertiesByName[key] != nil, keyPathProbe == nil else { return }
        fireFaultIfNeeded()
        willChangeForUndo(key)
    }

    // Implements `didChangeValue(forKey:)` declared on the class: the modeled property is
    // changed, as after `setValue(_:forKey:)` (the object is updated, the key is in
    // `changedValues()`, the context posts its change notification).
    func kvcDidChangeValue(forKey key: String) {
        guard keyPathProbe == nil else { return }
        let table = entity.slotTable
        if let slot = table.layout.slot(of: key), slot < 64, table.attributes[slot] != nil {
            noteChange(slot: slot)
        } else if entity.propertiesByName[key] != nil {
            noteChange(key)
        }
    }

    /// The changed properties and their new values since the last save or fetch.
    ///
    /// As Apple's: nil values are `NSNull`, numbers `NSNumber`s (so `as? Int` works on any
    /// integer width), decimals `NSDecimalNumber`s, to-many values sets of objects.
    public func changedValues() -> [String: Any] {
        storedChangedValues().mapValues { FoundationBridge.object($0) }
    }

    /// ``changedValues()`` with values as the object holds them (for putting them back).
    func storedChangedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        for key in changedKeys {
            // A composite's element reports the composite's whole value, as Apple's does.
            let name = entity.propertiesByName[key] == nil ? Self.compositeName(of: key) : key
            guard let property = entity.propertiesByName[name] else { continue }
            result[name] = currentValue(of: property) ?? NSNull()
        }
        return result
    }

    /// The composite attribute an element's slot name (`address.city`) belongs to.
    static func compositeName(of key: String) -> String {
        key.split(separator: ".", maxSplits: 1).first.map(String.init) ?? key
    }

    /// The last saved values of `keys` (all properties for `nil`); `NSNull` for nil values,
    /// numbers as `NSNumber`, as Apple's.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        guard let row = committedRow else { return [:] }
        var result: [String: Any] = [:]
        for key in keys ?? entity.propertiesByName.keys.sorted() {
            guard let property = entity.propertiesByName[key], !property.isTransient else { continue }
            if let composite = property as? NSCompositeAttributeDescription {
                let slots = entity.slotAttributesByName
                result[key] = compositeValue(composite) { path in
                    slots[path].flatMap { FoundationBridge.object(row[path].attributeValue(as: $0.attributeType)) }
                } ?? NSNull()
                continue
            }
            result[key] = FoundationBridge.object(storedValue(row[key], of: property)) ?? NSNull()
        }
        return result
    }

    /// The persistent properties changed in the current event (since the context last posted
    /// `NSManagedObjectContextObjectsDidChange`, and still unsaved) with their new values; inside
    /// an observer of that notification, the changes it reports.
    public func changedValuesForCurrentEvent() -> [String: Any] {
        let still = changedKeys
        var result: [String: Any] = [:]
        for key in eventChangedKeys where still.contains(key) {
            guard let property = entity.propertiesByName[key], !property.isTransient else { continue }
            result[key] = FoundationBridge.object(currentValue(of: property)) ?? NSNull()
        }
        return result
    }

    /// Keys changed in the event in which this object last changed, by name.
    var eventChangedKeys: Set<String> { keys(ofSlots: eventSlots, plus: eventOtherKeys) }

    /// The names of the attribute slots set in `bits` (one bit per slot below 64), with `others`.
    func keys(ofSlots bits: UInt64, plus others: Set<String>) -> Set<String> {
        guard bits != 0 else { return others }
        var keys = others
        let names = entity.propertyLayout.names
        var remaining = bits
        while remaining != 0 {
            keys.insert(names[remaining.trailingZeroBitCount])
            remaining &= remaining - 1
        }
        return keys
    }

    /// The first change of a new event in `context` (the object's) starts the event's keys over.
    private func startEventIfNeeded(in context: NSManagedObjectContext?) {
        guard let context, notedChangeGeneration != context.changeNoticeGeneration else { return }
        eventSlots = 0
        if !eventOtherKeys.isEmpty { eventOtherKeys = [] }
    }

    /// Starts the event of the object's insert into `context` and marks the object noted in it:
    /// the change notice reports it inserted, so its sets in the same event have nothing to add
    /// (an inserted object is never also reported updated) and skip the notice.
    func startInsertEvent(in context: NSManagedObjectContext) {
        startEventIfNeeded(in: context)
        notedChangeGeneration = context.changeNoticeGeneration
    }

    // MARK: Internals

    func currentValue(of property: NSPropertyDescription) -> Any? {
        switch property {
        case let relationship as NSRelationshipDescription:
            materialise(relationship)
            if relationship.isToMany {
                let objects = toManyValues[relationship.name] ?? []
                return relationship.isOrdered ? NSOrderedSet(array: objects) as Any : Set(objects) as Any
            }
            return toOneValues[relationship.name]
        case let fetched as NSFetchedPropertyDescription:
            return fetchedPropertyValue(fetched)
        case let composite as NSCompositeAttributeDescription:
            return compositeValue(composite) { attributeValues[$0] }
        default:
            return attributeValues[property.name]
        }
    }

    /// A stored value as the object graph shows it.
    func storedValue(_ value: StoreValue, of property: NSPropertyDescription) -> Any? {
        switch property {
        case let attribute as NSAttributeDescription:
            return value.attributeValue(as: attribute.attributeType)
        case let relationship as NSRelationshipDescription:
            guard let context = managedObjectContext else { return nil }
            switch value {
            case .reference(let id): return context.object(forStoreID: id)
            case .references(let ids):
                let objects = ids.compactMap { context.object(forStoreID: $0) }
                return relationship.isOrdered ? NSOrderedSet(array: objects) as Any : Set(objects) as Any
            default: return relationship.isToMany ? (relationship.isOrdered ? NSOrderedSet() as Any : Set<NSManagedObject>() as Any) : nil
            }
        default:
            return nil
        }
    }

    /// Turns a relationship's stored destination IDs into objects the first time it is used.
    func materialise(_ relationship: NSRelationshipDescription) {
        guard !materialisedRelationships.contains(relationship.name) else { return }
        materialisedRelationships.insert(relationship.name)
        if let fromParent = parentRelationships?[relationship.name], let context = managedObjectContext {
            let objects = fromParent.map { context.object(with: $0) }
            if relationship.isToMany { toManyValues[relationship.name] = objects } else { toOneValues[relationship.name] = objects.first }
            return
        }
        guard var row = committedRow, let context = managedObjectContext else { return }
        if !row.contains(relationship.name), let id = objectID.storeObjectID, let store = objectID.persistentStore {
            // The store left the relationship out of the row: it loads relationships lazily.
            // A store that fails here reads as no destinations, as an inaccessible fault does.
            let value = (try? context.readEngine(for: store).destinations(of: id, relationship: relationship.name)) ?? .null
            row[relationship.name] = value
            committedRow = row
        }
        switch row[relationship.name] {
        case .reference(let id):
            if let object = context.object(forStoreID: id) { toOneValues[relationship.name] = object }
        case .references(let ids):
            toManyValues[relationship.name] = ids.compactMap { context.object(forStoreID: $0) }
        default:
            break
        }
    }

    func noteChange(_ key: String) {
        changedOtherKeys.insert(key)
        let context = managedObjectContext
        startEventIfNeeded(in: context)
        eventOtherKeys.insert(key)
        context?.objectDidChange(self)
        if let observation { observation.didChange(key, of: self) }
    }

    /// Notes a change of the attribute at `slot` (below 64).
    func noteChange(slot: Int) { noteChange(slot: slot, context: managedObjectContext) }

    /// ``noteChange(slot:)`` with the object's context already loaded.
    func noteChange(slot: Int, context: NSManagedObjectContext?) {
        changedSlots |= 1 << UInt64(slot)
        startEventIfNeeded(in: context)
        eventSlots |= 1 << UInt64(slot)
        context?.objectDidChange(self)
        if let observation { observation.didChange(entity.propertyLayout.names[slot], of: self) }
    }

    func fireFaultIfNeeded() {
        guard isFaultState else { return }
        fireFaultIfNeeded(in: managedObjectContext)
    }

    /// ``fireFaultIfNeeded()`` with the object's context already loaded (each weak load of it
    /// and its release cost about 100 instructions).
    func fireFaultIfNeeded(in context: NSManagedObjectContext?) {
        guard isFaultState, let context else { return }
        context.fulfillFault(self)
    }

    func context_checkAccess() {
        managedObjectContext?.assertOnQueue(touching: self)
    }

    static func objects(in value: Any?, key: String) -> [NSManagedObject] {
        guard let value else { return [] }
        var objects: [NSManagedObject] = []
        switch value {
        // The live proxies first: Foundation's bridging of NSSet subclasses reads its own storage.
        case let proxy as RelationshipMutableSet: objects = proxy.members
        case let proxy as RelationshipMutableOrderedSet: objects = proxy.members
        case let set as Set<NSManagedObject>: objects = Array(set)
        case let array as [NSManagedObject]: objects = array
        case let ordered as NSOrderedSet: objects = ordered.array.compactMap { $0 as? NSManagedObject }
        case let set as NSSet: objects = set.allObjects.compactMap { $0 as? NSManagedObject }
        case let array as [Any]: objects = array.compactMap { $0 as? NSManagedObject }
        default:
            preconditionFailure("CoreData: '\(key)' is a to-many relationship; it takes a set or array of NSManagedObject, not \(type(of: value))")
        }
        var seen = Set<ObjectIdentifier>()
        return objects.filter { seen.insert(ObjectIdentifier($0)).inserted }
    }
}

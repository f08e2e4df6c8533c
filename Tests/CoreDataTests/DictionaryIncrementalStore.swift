import CoreData
import Foundation

/// A user-written `NSIncrementalStore`, as an app would write one: its records live in a
/// dictionary keyed by reference strings, relationships are reference strings, and it answers
/// fetches by evaluating the predicate over the context's objects. Versions go up with each
/// save, so optimistic locking works through `newValuesForObject(with:with:)`.
///
/// Records outlive the store in `DictionaryIncrementalStore.disk`, keyed by URL, so a store
/// added again at the same URL sees them (as a store over a real backend would).
final class DictionaryIncrementalStore: NSIncrementalStore, @unchecked Sendable {
    static let storeType = "DictionaryIncrementalStore"

    struct Record {
        var entityName: String
        /// Attribute values, and relationships as a reference or an array of references.
        var values: [String: Any]
        var version: UInt64
    }

    struct Backend {
        var uuid = UUID().uuidString
        var records: [String: Record] = [:]
    }

    private static let diskLock = NSLock()
    nonisolated(unsafe) private static var disk: [URL: Backend] = [:]

    // The framework calls the store from one thread at a time; tests read these afterwards.
    private(set) var newValuesCalls = 0
    private(set) var relationshipCalls: [String] = []
    /// How many contexts hold each object, from `managedObjectContextDidRegisterObjects(with:)`
    /// and `…DidUnregisterObjects(with:)`: every context that registers an object says so, so a
    /// store counts the calls rather than keeping a set (one context letting go of an object
    /// does not mean no context holds it).
    private(set) var registrations: [NSManagedObjectID: Int] = [:]
    /// Unregistrations of objects no context had registered: the framework's accounting is off.
    private(set) var unbalancedUnregistrations = 0
    /// The objects some context holds.
    var registered: Set<NSManagedObjectID> { Set(registrations.keys) }
    private(set) var saveRequests = 0
    /// When set, fetches fail with this error.
    var failFetchesWith: NSError?

    private var backend: Backend {
        get {
            Self.diskLock.lock()
            defer { Self.diskLock.unlock() }
            return Self.disk[url ?? URL(fileURLWithPath: "/dev/null"), default: Backend()]
        }
        set {
            Self.diskLock.lock()
            defer { Self.diskLock.unlock() }
            Self.disk[url ?? URL(fileURLWithPath: "/dev/null")] = newValue
        }
    }

    private var model: NSManagedObjectModel? { persistentStoreCoordinator?.managedObjectModel }

    override func loadMetadata() throws {
        let current = backend
        backend = current
        metadata = [NSStoreTypeKey: Self.storeType, NSStoreUUIDKey: current.uuid]
    }

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        switch request {
        case let fetch as NSFetchRequest<NSFetchRequestResult>:
            if let failFetchesWith { throw failFetchesWith }
            return try runFetch(fetch, context: context)
        case let save as NSSaveChangesRequest:
            saveRequests += 1
            var state = backend
            for object in save.insertedObjects ?? [] {
                state.records[reference(object)] = Record(entityName: object.entity.name ?? "", values: encode(object), version: 1)
            }
            for object in save.updatedObjects ?? [] {
                let key = reference(object)
                let version = (state.records[key]?.version ?? 0) + 1
                state.records[key] = Record(entityName: object.entity.name ?? "", values: encode(object), version: version)
            }
            for object in save.deletedObjects ?? [] {
                state.records[reference(object)] = nil
            }
            backend = state
            return [Any]()
        default:
            throw NSError(domain: "DictionaryIncrementalStore", code: 1, userInfo: [NSLocalizedDescriptionKey: "unsupported request \(request)"])
        }
    }

    private func runFetch(_ fetch: NSFetchRequest<NSFetchRequestResult>, context: NSManagedObjectContext?) throws -> Any {
        guard let context, let model, let entity = fetch.entity ?? fetch.entityName.flatMap({ model.entitiesByName[$0] }) else { return [Any]() }
        let records = backend.records.filter { _, record in
            guard let recordEntity = model.entitiesByName[record.entityName] else { return false }
            return fetch.includesSubentities ? recordEntity.isKindOf(entity: entity) : recordEntity === entity
        }
        if fetch.resultType == .countResultType, fetch.predicate == nil {
            return [NSNumber(value: records.count)]
        }
        var objects = records.keys.sorted().compactMap { key -> NSManagedObject? in
            guard let recordEntity = records[key].flatMap({ model.entitiesByName[$0.entityName] }) else { return nil }
            return context.object(with: newObjectID(for: recordEntity, referenceObject: key))
        }
        if let predicate = fetch.predicate { objects = objects.filter { predicate.evaluate(with: $0) } }
        if let descriptors = fetch.sortDescriptors, !descriptors.isEmpty {
            objects.sort { lhs, rhs in
                for descriptor in descriptors {
                    switch descriptor.compare(lhs, to: rhs) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return false
            }
        }
        let start = min(fetch.fetchOffset, objects.count)
        let end = fetch.fetchLimit > 0 ? min(objects.count, start + fetch.fetchLimit) : objects.count
        let page = Array(objects[start..<end])
        switch fetch.resultType {
        case .countResultType: return [NSNumber(value: page.count)]
        case .managedObjectIDResultType: return page.map(\.objectID)
        default: return page
        }
    }

    override func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
        newValuesCalls += 1
        guard let key = referenceObject(for: objectID) as? String, let record = backend.records[key] else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectReferentialIntegrityError, userInfo: [NSLocalizedDescriptionKey: "no record for \(objectID)"])
        }
        var values: [String: Any] = [:]
        for (name, property) in objectID.entity.propertiesByName {
            switch property {
            case let relationship as NSRelationshipDescription where !relationship.isToMany:
                // To-one relationships come with the node; to-many ones load lazily.
                values[name] = (record.values[name] as? String).flatMap { self.objectID(forReference: $0) } ?? NSNull()
            case is NSAttributeDescription:
                if let value = record.values[name] { values[name] = value }
            default:
                continue
            }
        }
        return NSIncrementalStoreNode(objectID: objectID, withValues: values, version: record.version)
    }

    override func newValue(forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID, with context: NSManagedObjectContext?) throws -> Any {
        relationshipCalls.append(relationship.name)
        guard let key = referenceObject(for: objectID) as? String, let record = backend.records[key] else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectReferentialIntegrityError, userInfo: nil)
        }
        if relationship.isToMany {
            return ((record.values[relationship.name] as? [String]) ?? []).compactMap { self.objectID(forReference: $0) }
        }
        return (record.values[relationship.name] as? String).flatMap { self.objectID(forReference: $0) } ?? NSNull()
    }

    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        array.map { newObjectID(for: $0.entity, referenceObject: UUID().uuidString) }
    }

    override func managedObjectContextDidRegisterObjects(with objectIDs: [NSManagedObjectID]) {
        for id in objectIDs { registrations[id, default: 0] += 1 }
    }

    override func managedObjectContextDidUnregisterObjects(with objectIDs: [NSManagedObjectID]) {
        for id in objectIDs {
            switch registrations[id] {
            case nil: unbalancedUnregistrations += 1
            case 1: registrations[id] = nil
            case let count?: registrations[id] = count - 1
            }
        }
    }

    /// The number of records of an entity (exactly, not counting subentities).
    func recordCount(_ entityName: String) -> Int {
        backend.records.values.filter { $0.entityName == entityName }.count
    }

    // MARK: Encoding

    private func reference(_ object: NSManagedObject) -> String {
        (referenceObject(for: object.objectID) as? String) ?? ""
    }

    private func objectID(forReference key: String) -> NSManagedObjectID? {
        guard let record = backend.records[key], let entity = model?.entitiesByName[record.entityName] else { return nil }
        return newObjectID(for: entity, referenceObject: key)
    }

    private func encode(_ object: NSManagedObject) -> [String: Any] {
        var values: [String: Any] = [:]
        for (name, property) in object.entity.propertiesByName where !property.isTransient {
            let value = object.value(forKey: name)
            switch value {
            case let destination as NSManagedObject:
                values[name] = reference(destination)
            case let set as Set<NSManagedObject>:
                values[name] = set.map(reference).sorted()
            case let ordered as NSOrderedSet:
                values[name] = ordered.array.compactMap { ($0 as? NSManagedObject).map(reference) }
            default:
                if let value { values[name] = value }
            }
        }
        return values
    }
}

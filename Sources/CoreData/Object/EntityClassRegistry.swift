import CoreDataModel
import Foundation

/// Finds the Swift class for an entity's objects, and the entity for a class.
///
/// Apple's Core Data finds a class by its Objective-C name. Swift on Linux cannot look up a class
/// by an unqualified name, so a subclass is found when (a) it has been used once
/// (`init(context:)`, `entity()`, `fetchRequest()`), (b) it was registered with
/// ``NSManagedObject/registerSubclasses(_:)``, or (c) the entity's class name is
/// module-qualified (`MyApp.Car`). Otherwise objects are plain `NSManagedObject`s.
enum EntityClassRegistry {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var classesByName: [String: NSManagedObject.Type] = [:]
    nonisolated(unsafe) private static var models: [WeakModel] = []

    private struct WeakModel { weak var model: NSManagedObjectModel? }

    static func register(_ type: NSManagedObject.Type) {
        lock.lock()
        defer { lock.unlock() }
        classesByName[String(reflecting: type)] = type
        classesByName[String(describing: type)] = type
    }

    /// Remembers a model a coordinator uses, for `NSManagedObject.entity()`.
    static func noteModel(_ model: NSManagedObjectModel) {
        lock.lock()
        defer { lock.unlock() }
        models.removeAll { $0.model == nil || $0.model === model }
        models.append(WeakModel(model: model))
    }

    static func objectClass(for entity: NSEntityDescription) -> NSManagedObject.Type {
        guard let raw = entity.managedObjectClassName, raw != "NSManagedObject" else { return NSManagedObject.self }
        let name = raw.hasPrefix(".") ? String(raw.dropFirst()) : raw
        lock.lock()
        let known = classesByName[name]
        lock.unlock()
        if let known { return known }
        if let found = _typeByName(name) as? NSManagedObject.Type {
            register(found)
            return found
        }
        return NSManagedObject.self
    }

    static func entity(for type: NSManagedObject.Type, in model: NSManagedObjectModel) -> NSEntityDescription? {
        register(type)
        let names = [String(reflecting: type), String(describing: type)]
        return model.entities.first { entity in
            guard let raw = entity.managedObjectClassName else { return false }
            let name = raw.hasPrefix(".") ? String(raw.dropFirst()) : raw
            return names.contains(name)
        }
    }

    static func entityInAnyModel(for type: NSManagedObject.Type) -> NSEntityDescription? {
        lock.lock()
        let candidates = models.compactMap(\.model).reversed()
        lock.unlock()
        for model in candidates {
            if let entity = entity(for: type, in: model) { return entity }
        }
        return nil
    }
}

extension NSManagedObject {
    /// Makes subclasses known before their first use, so that fetched objects of their entities
    /// are created with the right class (Linux has no Objective-C runtime to find them by name).
    public static func registerSubclasses(_ types: NSManagedObject.Type...) {
        for type in types { EntityClassRegistry.register(type) }
    }
}

import CoreDataModel
import Foundation

/// Names the Core Data properties a Swift key path reads on a managed object subclass.
///
/// Swift on Linux cannot print a key path to a computed property (`\Book.title` of a `@Managed`
/// property prints as `<computed 0x…>`) and has no `_kvcKeyPathString`. So the key path is
/// applied to a stand-in object of the class, made with the entity but in no context, that
/// records every key read through `value(forKey:)` — which `@Managed` properties and hand-written
/// accessors both use — and answers with a placeholder of the right type: a sample value for an
/// attribute, another stand-in for a to-one relationship (so that `\Book.author.name` goes on
/// recording), an empty collection for a to-many relationship.
///
/// Threading: a probe and its stand-ins live for one naming, on one thread.
final class KeyPathProbe {
    /// One key read, with the entity it was read from.
    struct Read {
        var entity: NSEntityDescription
        var key: String
    }

    private(set) var reads: [Read] = []

    /// The keys `keyPath` reads, in order, from a stand-in of `type` with `entity`, and whether
    /// the key path reads the stand-in's `objectID`.
    ///
    /// Complexity: one object creation per to-one step, plus what the key path's getters do.
    static func reads(of keyPath: AnyKeyPath, on type: NSManagedObject.Type, entity: NSEntityDescription) -> (reads: [Read], isObjectID: Bool) {
        let probe = KeyPathProbe()
        let standIn = type.init(entity: entity, insertInto: nil)
        standIn.keyPathProbe = probe
        let value = standIn[keyPath: keyPath]
        let isObjectID = probe.reads.isEmpty && (value as? NSManagedObjectID).map { $0 === standIn.objectID } == true
        return (probe.reads, isObjectID)
    }

    /// The dotted Core Data key path `keyPath` stands for on `type`, following to-one
    /// relationships (`author.name`); `nil` for `\.objectID`, which stands for the object itself
    /// (objects and their IDs compare equal in predicates).
    ///
    /// - Throws: ``PredicateTranslationError`` when the key path reads no property (a stored
    ///   Swift property that is not `@Managed`), reads a key the entity does not have, or reads
    ///   several properties that are not a chain of to-one relationships (a computed property
    ///   combining two attributes).
    static func propertyPath(of keyPath: AnyKeyPath, on type: NSManagedObject.Type, entity: NSEntityDescription) throws -> String? {
        let (reads, isObjectID) = reads(of: keyPath, on: type, entity: entity)
        if isObjectID { return nil }
        guard !reads.isEmpty else {
            throw PredicateTranslationError.unnamedKeyPath(
                "\(keyPath) reads no property of the entity \(entity.name ?? "?"); only @Managed properties and accessors "
                    + "that call value(forKey:) can be used in #Predicate and sort descriptors")
        }
        for (index, read) in reads.enumerated() {
            guard let property = read.entity.propertiesByName[read.key] else {
                throw PredicateTranslationError.unnamedKeyPath(
                    "\(keyPath) reads '\(read.key)', which is not a property of the entity \(read.entity.name ?? "?")")
            }
            if index < reads.count - 1 {
                let next = reads[index + 1]
                guard let relationship = property as? NSRelationshipDescription, !relationship.isToMany,
                      let destination = relationship.destinationEntity, next.entity.isKindOf(entity: destination)
                else {
                    throw PredicateTranslationError.unnamedKeyPath(
                        "\(keyPath) reads several properties (\(reads.map(\.key).joined(separator: ", "))) that are not a path "
                            + "through to-one relationships; a computed property that combines values has no Core Data key path")
                }
            }
        }
        return reads.map(\.key).joined(separator: ".")
    }

    /// What the stand-in `object` answers for `key`, recording the read.
    func read(_ key: String, on object: NSManagedObject) -> Any? {
        reads.append(Read(entity: object.entity, key: key))
        switch object.entity.propertiesByName[key] {
        case let attribute as NSAttributeDescription:
            return Self.sample(of: attribute.attributeType)
        case let relationship as NSRelationshipDescription:
            if relationship.isToMany { return relationship.isOrdered ? NSOrderedSet() as Any : Set<NSManagedObject>() as Any }
            guard let destination = relationship.destinationEntity else { return nil }
            return standIn(of: EntityClassRegistry.objectClass(for: destination), entity: destination)
        case is NSFetchedPropertyDescription:
            return [Any]()
        default:
            return nil
        }
    }

    /// What a `@Managed` property of type `Value` answers on a stand-in: the placeholder of
    /// ``read(_:on:)`` as `Value`, with a to-one stand-in of the property's declared class.
    func placeholder<Value>(for object: NSManagedObject, key: String, as type: Value.Type) -> Value {
        let raw = read(key, on: object)
        if let standIn = raw as? NSManagedObject {
            let declared = (Value.self as? NSManagedObject.Type) ?? ((Value.self as? any OptionalConvertible.Type)?.wrappedType as? NSManagedObject.Type)
            if let declared, !(standIn.isKind(of: declared)) {
                let typed = self.standIn(of: declared, entity: standIn.entity)
                if let value = ManagedValueConversion.convertIfPossible(typed, to: Value.self) { return value }
            }
        }
        if let value = ManagedValueConversion.convertIfPossible(raw, to: Value.self) { return value }
        preconditionFailure(
            "CoreData: cannot name the key path to '\(key)' of \(object.entity.name ?? "?"): a @Managed property of type \(Value.self) "
                + "over this attribute must be optional to be used in #Predicate or a sort descriptor")
    }

    private func standIn(of type: NSManagedObject.Type, entity: NSEntityDescription) -> NSManagedObject {
        let object = type.init(entity: entity, insertInto: nil)
        object.keyPathProbe = self
        return object
    }

    /// A non-nil value of the Swift type an attribute type reads as; `nil` for transformable and
    /// other types without a fixed Swift type.
    private static func sample(of type: NSAttributeType) -> Any? {
        switch type {
        case .integer16AttributeType: return Int16(0)
        case .integer32AttributeType: return Int32(0)
        case .integer64AttributeType: return Int64(0)
        case .decimalAttributeType: return Decimal(0)
        case .doubleAttributeType: return Double(0)
        case .floatAttributeType: return Float(0)
        case .stringAttributeType: return ""
        case .booleanAttributeType: return false
        case .dateAttributeType: return Date(timeIntervalSinceReferenceDate: 0)
        case .binaryDataAttributeType: return Data()
        case .UUIDAttributeType: return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        case .URIAttributeType: return URL(fileURLWithPath: "/")
        case .transformableAttributeType, .undefinedAttributeType, .objectIDAttributeType, .compositeAttributeType: return nil
        }
    }
}

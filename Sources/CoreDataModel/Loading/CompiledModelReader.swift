import CoreDataArchive
import CoreDataPredicate
import Foundation

/// Builds a model from Xcode's compiled form, a `.mom` file: an `NSKeyedArchiver` archive whose
/// root is an `NSManagedObjectModel` (Formats/compiled-model.md).
///
/// Does no I/O: the caller reads the file. The bytes come from outside, so every problem throws a
/// ``ModelError`` naming the archive object and key; the archive's own bounds (size, objects,
/// nesting, object budget) apply, and entity and property counts are bounded (§3).
struct CompiledModelReader {
    /// §3: the most entities of one model, and properties of one entity.
    static let maximumEntities = 10_000
    static let maximumProperties = 10_000
    /// §2: the bit of `NSFlagsKey` that is `preservesValueInHistoryOnDeletion`.
    static let preservesValueOnDeletionFlag = 16
    /// §2.3: the bits of an archived fetch request's `NSFetchRequestFlags`.
    static let distinctResultsFlag = 1
    static let subentitiesFlag = 2
    static let objectsAsFaultsFlag = 8
    static let pendingChangesFlag = 16
    /// §2.3: the most fetch request templates and configurations of one model.
    static let maximumTemplates = 10_000
    static let maximumConfigurations = 10_000
    /// §2: the most validation predicates of one property.
    static let maximumValidationPredicates = 1_000
    /// §2.2: the deepest nesting of composite attributes, and the most composite elements of
    /// one model (elements may be shared, so depth alone would not bound the work).
    static let maximumCompositeDepth = 16
    static let maximumCompositeElements = 10_000
    /// §2.3: the most entity memberships of all configurations together (sets may be shared).
    static let maximumConfigurationMembers = 100_000
    /// §3: object visits the unarchiver may make per archived object (at least
    /// `KeyedUnarchiver.defaultObjectBudget`): predicates and expressions decode through it, and
    /// a large model has many.
    static let objectVisitsPerObject = 16

    /// What the reader has read so far, against the model-wide limits above.
    private final class Tally {
        var compositeElements = 0
        var configurationMembers = 0
    }

    /// Whether `data` is a binary property list (a compiled model), not Xcode's XML source.
    static func isCompiled(_ data: Data) -> Bool { data.starts(with: Array("bplist".utf8)) }

    private let archive: KeyedArchive
    private let unarchiver: KeyedUnarchiver
    /// Archived predicates and expressions, through ``unarchiver`` (so within its budget).
    private let expressions: ArchivedExpressionDecoder
    private let tally = Tally()
    private let file: URL?

    private init(archive: KeyedArchive, file: URL?) {
        self.archive = archive
        self.unarchiver = KeyedUnarchiver(
            archive: archive, objectBudget: max(KeyedUnarchiver.defaultObjectBudget, archive.objectCount.multipliedReportingOverflow(by: Self.objectVisitsPerObject).partialValue))
        self.expressions = ArchivedExpressionDecoder(unarchiver: unarchiver)
        self.file = file
    }

    /// Decodes `data` into `model` (which must be new and editable).
    static func read(_ data: Data, file: URL?, into model: NSManagedObjectModel) throws(ModelError) {
        let archive: KeyedArchive
        do { archive = try KeyedArchive(data: data) } catch { throw ModelError(.malformedFile, "not a compiled model: \(error)", file: file) }
        let reader = CompiledModelReader(archive: archive, file: file)
        do {
            try reader.readModel(into: model)
        } catch let error as ModelError {
            throw error
        } catch {
            throw ModelError(.malformedFile, "\(error)", file: file)
        }
    }

    // MARK: The model

    private func readModel(into model: NSManagedObjectModel) throws {
        let root = try archive.object(at: archive.rootReference())
        try expect(root, "NSManagedObjectModel")
        if case .set(let identifiers)? = try unarchiver.decode(forKey: "NSVersionIdentifiers", in: root) {
            for identifier in identifiers { if let value = identifier.foundationValue as? AnyHashable { model.versionIdentifiers.insert(value) } }
        }
        let entries = try objects(forKey: "NSEntities", in: root, limit: Self.maximumEntities)
        guard !entries.isEmpty || root.value(forKey: "NSEntities") != nil else { throw fail("NSEntities is missing", root) }
        var entities: [NSEntityDescription] = []
        var byReference: [ArchiveReference: NSEntityDescription] = [:]
        var archived: [(entity: NSEntityDescription, object: ArchivedObject, properties: [(String, ArchivedObject)])] = []
        for (name, object) in entries {
            let (entity, properties) = try readEntity(object, key: name)
            entities.append(entity)
            byReference[object.reference] = entity
            archived.append((entity, object, properties))
        }
        let byName = Dictionary(entities.map { ($0.name ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        // Inheritance first: a relationship may point at an inherited inverse.
        for (entity, object, _) in archived {
            guard let parentReference = try object.reference(forKey: "NSSuperentity") else { continue }
            guard let parent = byReference[parentReference] else { throw fail("NSSuperentity is not an entity of the model", object) }
            parent.subentities += [entity]
        }
        for (entity, _, properties) in archived {
            try linkRelationships(of: entity, properties, byReference: byReference, byName: byName)
        }
        for entity in entities where model.entitiesByName[entity.name ?? ""] != nil {
            throw ModelError(.duplicateEntity, "entity '\(entity.name ?? "")' is declared by another model file too", file: file, entityName: entity.name)
        }
        // Fetched properties name their request's entity, which may come later in the archive.
        for (entity, _, properties) in archived {
            for (name, property) in properties where property.isKind(of: "NSFetchedPropertyDescription") {
                guard let fetched = entity.propertiesByName[name] as? NSFetchedPropertyDescription else { continue }
                fetched.fetchRequestDescription = try fetchedPropertyRequest(property, byReference: byReference)
            }
        }
        // The caller checks the whole model once every file is read.
        model.entities += entities
        for (name, members) in try configurations(root, byReference: byReference) {
            model.setEntities(members, forConfigurationName: name)
        }
        var templates = model.fetchRequestDescriptionsByName
        for (name, object) in try objects(forKey: "NSFetchRequestTemplates", in: root, limit: Self.maximumTemplates) {
            guard let request = try fetchRequest(object, byReference: byReference, entityName: nil) else {
                throw fail("fetch request template '\(name)' names no entity", object)
            }
            templates[name] = request
        }
        model.fetchRequestDescriptionsByName = templates
    }

    // MARK: Configurations and fetch requests

    /// `NSConfigurations` (§2.3): each name's set of entity objects, in archive order. `momc`
    /// leaves out the default configuration, which needs no entry.
    private func configurations(_ root: ArchivedObject, byReference: [ArchiveReference: NSEntityDescription]) throws -> [(String, [NSEntityDescription])] {
        var result: [(String, [NSEntityDescription])] = []
        for (name, set) in try objects(forKey: "NSConfigurations", in: root, limit: Self.maximumConfigurations) {
            var members: [NSEntityDescription] = []
            let references = try elements(of: set, key: "NSConfigurations")
            tally.configurationMembers += references.count
            guard tally.configurationMembers <= Self.maximumConfigurationMembers else {
                throw fail("NSConfigurations holds more than \(Self.maximumConfigurationMembers) entity memberships", root)
            }
            for reference in references {
                guard let entity = byReference[reference] else { throw fail("configuration '\(name)' holds something other than an entity of the model", set) }
                members.append(entity)
            }
            result.append((name, members))
        }
        return result
    }

    /// A fetched property's request (§2.3): `NSFetchRequest`, whose entity may be left to
    /// `_NSFetchRequestEntityName`.
    private func fetchedPropertyRequest(_ property: ArchivedObject, byReference: [ArchiveReference: NSEntityDescription]) throws -> FetchRequestDescription {
        let entityName = try property.string(forKey: "_NSFetchRequestEntityName")
        guard let reference = try property.reference(forKey: "NSFetchRequest") else {
            guard let entityName, !entityName.isEmpty else { throw fail("the fetched property has neither NSFetchRequest nor _NSFetchRequestEntityName", property) }
            return FetchRequestDescription(entityName: entityName)
        }
        guard let request = try fetchRequest(try archive.object(at: reference), byReference: byReference, entityName: entityName) else {
            throw fail("the fetch request names no entity", property)
        }
        return request
    }

    /// An archived `NSFetchRequest` (§2.3) as the model keeps a request; nil when it names no
    /// entity (neither an entity object nor a name under `NSEntity`, nor `entityName`).
    private func fetchRequest(_ object: ArchivedObject, byReference: [ArchiveReference: NSEntityDescription], entityName: String?) throws -> FetchRequestDescription? {
        try expect(object, "NSFetchRequest")
        var name = entityName
        if let reference = try object.reference(forKey: "NSEntity") {
            if let entity = byReference[reference] {
                name = entity.name
            } else if case .string(let string) = try named("NSEntity", object, { () throws(KeyedArchiveError) in try unarchiver.decode(reference) }) {
                // A request made by entity name archives the name (a string, or an NSString object).
                name = string
            } else {
                throw fail("NSEntity is neither an entity of the model nor an entity name", object)
            }
        }
        guard let name, !name.isEmpty else { return nil }
        var request = FetchRequestDescription(entityName: name)
        request.predicateFormat = try named("NSPredicate", object) { () throws(KeyedArchiveError) in
            try expressions.predicate(forKey: "NSPredicate", in: object)
        }?.predicateFormat
        // The model keeps the format, so it must parse back: found here, not as a nil template later.
        if let format = request.predicateFormat {
            do { _ = try CoreDataPredicate.NSPredicate(validatingFormat: format) } catch {
                throw fail("NSPredicate prints as '\(format)', which does not parse back: \(error)", object)
            }
        }
        let limit = try object.integer(forKey: "NSFetchLimit") ?? 0
        let batch = try object.integer(forKey: "NSBatchSize") ?? 0
        guard limit >= 0, batch >= 0 else { throw fail("NSFetchLimit \(limit) or NSBatchSize \(batch) is negative", object) }
        request.fetchLimit = limit
        request.fetchBatchSize = batch
        // Without the flags Foundation keeps a new request's defaults, as the description's are.
        if try object.bool(forKey: "NSHasFetchRequestFlags") == true {
            let flags = try object.integer(forKey: "NSFetchRequestFlags") ?? 0
            request.returnsDistinctResults = flags & Self.distinctResultsFlag != 0
            request.includesSubentities = flags & Self.subentitiesFlag != 0
            request.returnsObjectsAsFaults = flags & Self.objectsAsFaultsFlag != 0
            request.includesPendingChanges = flags & Self.pendingChangesFlag != 0
        }
        if let paths = try unarchiver.decode(forKey: "NSRelationshipKeyPathsForPrefetching", in: object), paths != .null {
            request.relationshipKeyPathsForPrefetching = try stringList(paths, "NSRelationshipKeyPathsForPrefetching", object)
        }
        return request
    }

    // MARK: Entities

    /// The entity, and its archived properties by name (linked once every entity exists).
    private func readEntity(_ object: ArchivedObject, key: String) throws -> (NSEntityDescription, [(String, ArchivedObject)]) {
        try expect(object, "NSEntityDescription")
        let entity = NSEntityDescription()
        guard let name = try object.string(forKey: "NSEntityName"), !name.isEmpty else { throw fail("NSEntityName is missing", object) }
        guard name == key else { throw fail("NSEntityName '\(name)' differs from its key '\(key)' in NSEntities", object) }
        entity.name = name
        entity.managedObjectClassName = try object.string(forKey: "NSClassNameForEntity") ?? "NSManagedObject"
        entity.isAbstract = try object.bool(forKey: "NSIsAbstract") ?? false
        entity.renamingIdentifier = try renamingIdentifier(object, name: name)
        entity.versionHashModifier = try object.string(forKey: "NSVersionHashModifier")
        entity.userInfo = try userInfo(object)
        var properties: [NSPropertyDescription] = []
        let archivedProperties = try objects(forKey: "NSProperties", in: object, limit: Self.maximumProperties)
        for (propertyName, property) in archivedProperties {
            properties.append(try readProperty(property, key: propertyName))
        }
        entity.properties = properties
        if let tuples = try unarchiver.decode(forKey: "NSUniqueTuples", in: object) {
            entity.uniquenessConstraints = try stringLists(tuples, "NSUniqueTuples", object)
        }
        var indexes: [NSFetchIndexDescription] = []
        if let descriptions = try object.reference(forKey: "NSFetchIndexDescriptions") {
            for reference in try unarchiver.elements(of: try archive.object(at: descriptions)) {
                indexes.append(try readIndex(try archive.object(at: reference)))
            }
        } else if let compound = try unarchiver.decode(forKey: "NSCompoundIndexes", in: object) {
            // The older form of the same indexes, named as Xcode names them.
            for (number, names) in try stringLists(compound, "NSCompoundIndexes", object).enumerated() {
                indexes.append(NSFetchIndexDescription(
                    name: "\(name)_compound_index_\(number)",
                    elements: names.map { NSFetchIndexElementDescription(propertyName: $0, collationType: .binary) }))
            }
        }
        entity.indexes = indexes
        return (entity, archivedProperties)
    }

    private func readIndex(_ object: ArchivedObject) throws -> NSFetchIndexDescription {
        try expect(object, "NSFetchIndexDescription")
        guard let name = try object.string(forKey: "NSIndexName") else { throw fail("NSIndexName is missing", object) }
        var elements: [NSFetchIndexElementDescription] = []
        if let list = try object.reference(forKey: "NSIndexElements") {
            for reference in try unarchiver.elements(of: try archive.object(at: list)) {
                let element = try archive.object(at: reference)
                try expect(element, "NSFetchIndexElementDescription")
                guard let property = try element.string(forKey: "NSPropertyName") else { throw fail("NSPropertyName is missing", element) }
                let rawType = try element.integer(forKey: "NSFetchIndexElementType") ?? 0
                guard let collation = NSFetchIndexElementDescription.CollationType(rawValue: UInt(clamping: max(0, rawType))), rawType >= 0 else {
                    throw fail("NSFetchIndexElementType \(rawType) is neither 0 (binary) nor 1 (R-tree)", element)
                }
                elements.append(NSFetchIndexElementDescription(propertyName: property, collationType: collation, isAscending: try element.bool(forKey: "NSAscending") ?? true))
            }
        }
        let index = NSFetchIndexDescription(name: name, elements: elements)
        index.partialIndexPredicate = try named("NSPartialIndexPredicate", object) { () throws(KeyedArchiveError) in
            try expressions.predicate(forKey: "NSPartialIndexPredicate", in: object)
        }
        return index
    }

    // MARK: Properties

    /// The property: an attribute (derived and composite ones too), a relationship or a fetched
    /// property.
    private func readProperty(_ object: ArchivedObject, key: String) throws -> NSPropertyDescription {
        let property = try readPropertyFields(object)
        guard property.name == key else { throw fail("NSPropertyName '\(property.name)' differs from its key '\(key)' in NSProperties", object) }
        return property
    }

    /// A property with the fields every kind has; a composite's elements are read the same way,
    /// `depth` levels down.
    private func readPropertyFields(_ object: ArchivedObject, depth: Int = 0) throws -> NSPropertyDescription {
        let property: NSPropertyDescription
        if object.isKind(of: "NSAttributeDescription") {
            property = try readAttribute(object, depth: depth)
        } else if object.isKind(of: "NSRelationshipDescription") {
            property = try readRelationship(object)
        } else if object.isKind(of: "NSFetchedPropertyDescription") {
            // Its request is read once every entity exists (`fetchedPropertyRequest`).
            property = NSFetchedPropertyDescription()
        } else {
            throw fail("a property of class \(object.className), not an attribute or a relationship", object)
        }
        guard let name = try object.string(forKey: "NSPropertyName"), !name.isEmpty else { throw fail("NSPropertyName is missing", object) }
        property.name = name
        property.isOptional = try object.bool(forKey: "NSIsOptional") ?? false
        property.isTransient = try object.bool(forKey: "NSIsTransient") ?? false
        property.renamingIdentifier = try renamingIdentifier(object, name: name)
        property.versionHashModifier = try object.string(forKey: "NSVersionHashModifier")
        property.userInfo = try userInfo(object)
        property.customValidation = try validation(object)
        return property
    }

    /// `NSValidationPredicates` and `NSValidationWarnings` (§2, properties): what `momc` makes of the
    /// editor's rules, and predicates set in code. A warning is a message or an error code.
    private func validation(_ object: ArchivedObject) throws -> CustomValidation {
        guard let list = try object.reference(forKey: "NSValidationPredicates") else { return CustomValidation() }
        let references = try elements(of: try archive.object(at: list), key: "NSValidationPredicates")
        guard references.count <= Self.maximumValidationPredicates else {
            throw fail("NSValidationPredicates has \(references.count) predicates, more than \(Self.maximumValidationPredicates)", object)
        }
        let predicates = try named("NSValidationPredicates", object) { () throws(KeyedArchiveError) in
            try references.map { (reference) throws(KeyedArchiveError) in try expressions.predicate(at: reference) }
        }
        var warnings: [Any] = []
        if let value = try named("NSValidationWarnings", object, { () throws(KeyedArchiveError) in try unarchiver.decode(forKey: "NSValidationWarnings", in: object) }), value != .null {
            guard case .array(let items) = value else { throw fail("NSValidationWarnings is not an array", object) }
            warnings = try items.map { item -> Any in
                switch item {
                case .string(let message): return message
                case .integer(let code):
                    guard let code = Int(exactly: code) else { throw fail("NSValidationWarnings holds the error code \(code), out of range", object) }
                    return code
                default: throw fail("NSValidationWarnings holds something other than messages and error codes", object)
                }
            }
        }
        return CustomValidation(predicates: predicates, warnings: warnings)
    }

    private func readAttribute(_ object: ArchivedObject, depth: Int) throws -> NSAttributeDescription {
        let attribute: NSAttributeDescription
        if object.isKind(of: "NSCompositeAttributeDescription") {
            attribute = try readComposite(object, depth: depth)
        } else if object.isKind(of: "NSDerivedAttributeDescription") {
            let derived = NSDerivedAttributeDescription()
            derived.derivationExpression = try named("NSDerivationExpression", object) { () throws(KeyedArchiveError) in
                try expressions.expression(forKey: "NSDerivationExpression", in: object)
            }
            attribute = derived
        } else {
            attribute = NSAttributeDescription()
        }
        guard let rawType = try object.integer(forKey: "NSAttributeType") else { throw fail("NSAttributeType is missing", object) }
        guard rawType >= 0, let type = NSAttributeType(rawValue: UInt(rawType)) else {
            throw ModelError(.unknownAttributeType, "\(object.label): NSAttributeType \(rawType) is not an attribute type", file: file)
        }
        attribute.attributeType = type
        attribute.valueTransformerName = try object.string(forKey: "NSValueTransformerName")
        if let className = try object.string(forKey: "NSAttributeValueClassName"), !className.isEmpty, className != attribute.attributeValueClassName {
            attribute.attributeValueClassName = className
        }
        attribute.preservesValueInHistoryOnDeletion = (try object.integer(forKey: "NSFlagsKey") ?? 0) & Self.preservesValueOnDeletionFlag != 0
        if let value = try unarchiver.decode(forKey: "NSDefaultValue", in: object) {
            attribute.defaultValue = try defaultValue(value, type: type, object)
        }
        return attribute
    }

    /// A composite attribute's elements (§2.2), `NSCompositeElements`: attributes, composites
    /// among them, at most ``maximumCompositeDepth`` deep and ``maximumCompositeElements`` in all
    /// (an element may not hold its composite, and shared element lists count each time).
    private func readComposite(_ object: ArchivedObject, depth: Int) throws -> NSCompositeAttributeDescription {
        guard depth < Self.maximumCompositeDepth else { throw fail("composites nested deeper than \(Self.maximumCompositeDepth) levels", object) }
        let composite = NSCompositeAttributeDescription()
        guard let list = try object.reference(forKey: "NSCompositeElements") else { return composite }
        let references = try elements(of: try archive.object(at: list), key: "NSCompositeElements")
        tally.compositeElements += references.count
        guard tally.compositeElements <= Self.maximumCompositeElements else {
            throw fail("the model's composites have more than \(Self.maximumCompositeElements) elements together", object)
        }
        var names = Set<String>()
        var elements: [NSAttributeDescription] = []
        for reference in references {
            let element = try archive.object(at: reference)
            guard element.isKind(of: "NSAttributeDescription"), let attribute = try readPropertyFields(element, depth: depth + 1) as? NSAttributeDescription else {
                throw fail("NSCompositeElements holds \(element.className), not an attribute", object)
            }
            guard names.insert(attribute.name).inserted else { throw fail("NSCompositeElements has two elements named '\(attribute.name)'", object) }
            elements.append(attribute)
        }
        composite.elements = elements
        return composite
    }

    /// The archived default as the source loader types it (Int16 for Integer 16, and so on).
    private func defaultValue(_ value: UnarchivedValue, type: NSAttributeType, _ object: ArchivedObject) throws -> Any? {
        func bad() -> ModelError { fail("NSDefaultValue \(value) does not suit a \(type) attribute", object) }
        switch (type, value) {
        case (_, .null): return nil
        case (.integer16AttributeType, .integer(let v)):
            guard let result = Int16(exactly: v) else { throw bad() }
            return result
        case (.integer32AttributeType, .integer(let v)):
            guard let result = Int32(exactly: v) else { throw bad() }
            return result
        case (.integer64AttributeType, .integer(let v)): return v
        case (.doubleAttributeType, .real(let v)): return v
        case (.doubleAttributeType, .integer(let v)): return Double(v)
        case (.floatAttributeType, .real(let v)): return Float(v)
        case (.floatAttributeType, .integer(let v)): return Float(v)
        case (.decimalAttributeType, .real(let v)): return Decimal(v)
        case (.decimalAttributeType, .integer(let v)): return Decimal(v)
        case (.decimalAttributeType, .string(let v)):
            guard let result = Decimal(string: v, locale: Locale(identifier: "en_US_POSIX")) else { throw bad() }
            return result
        case (.booleanAttributeType, .bool(let v)): return v
        case (.booleanAttributeType, .integer(let v)): return v != 0
        case (.stringAttributeType, .string(let v)): return v
        case (.dateAttributeType, .date(let v)): return v
        case (.UUIDAttributeType, .uuid(let v)): return v
        case (.URIAttributeType, .url(let v)): return v
        case (.binaryDataAttributeType, .data(let v)): return v
        default:
            // Types Xcode offers no default for keep what was archived, as the source loader does.
            guard [.undefinedAttributeType, .transformableAttributeType, .objectIDAttributeType, .compositeAttributeType].contains(type) else { throw bad() }
            return value.foundationValue
        }
    }

    private func readRelationship(_ object: ArchivedObject) throws -> NSRelationshipDescription {
        let relationship = NSRelationshipDescription()
        let minimum = try object.integer(forKey: "NSMinCount") ?? 0
        let maximum = try object.integer(forKey: "NSMaxCount") ?? 0
        guard minimum >= 0, maximum >= 0 else { throw ModelError(.invalidCount, "\(object.label): NSMinCount \(minimum) or NSMaxCount \(maximum) is negative", file: file) }
        relationship.minCount = minimum
        relationship.maxCount = maximum
        let rule = try object.integer(forKey: "NSDeleteRule") ?? Int(NSDeleteRule.nullifyDeleteRule.rawValue)
        guard rule >= 0, let deleteRule = NSDeleteRule(rawValue: UInt(rule)) else {
            throw ModelError(.unknownDeleteRule, "\(object.label): NSDeleteRule \(rule) is not a delete rule", file: file)
        }
        relationship.deleteRule = deleteRule
        relationship.isOrdered = try object.bool(forKey: "NSIsOrdered") ?? false
        return relationship
    }

    private func linkRelationships(
        of entity: NSEntityDescription, _ properties: [(String, ArchivedObject)],
        byReference: [ArchiveReference: NSEntityDescription], byName: [String: NSEntityDescription]
    ) throws {
        for (name, property) in properties where property.isKind(of: "NSRelationshipDescription") {
            guard let relationship = entity.propertiesByName[name] as? NSRelationshipDescription else { continue }
            let destination: NSEntityDescription
            if let reference = try property.reference(forKey: "NSDestinationEntity") {
                guard let found = byReference[reference] else { throw fail("NSDestinationEntity is not an entity of the model", property) }
                destination = found
            } else if let destinationName = try property.string(forKey: "_NSDestinationEntityName"), let found = byName[destinationName] {
                destination = found
            } else {
                throw ModelError(.missingEntity, "\(property.label): relationship '\(entity.name ?? "").\(name)' has no destination entity", file: file, entityName: entity.name, propertyName: name)
            }
            relationship.destinationEntity = destination
            var inverseName: String?
            if let reference = try property.reference(forKey: "NSInverseRelationship") {
                inverseName = try archive.object(at: reference).string(forKey: "NSPropertyName")
            } else {
                inverseName = try property.string(forKey: "_NSInverseRelationshipName")
            }
            if let inverseName {
                guard let inverse = destination.relationshipsByName[inverseName] else {
                    throw ModelError(.invalidInverse, "\(property.label): the inverse '\(inverseName)' is not a relationship of '\(destination.name ?? "")'", file: file, entityName: entity.name, propertyName: name)
                }
                relationship.inverseRelationship = inverse
            }
        }
    }

    // MARK: Values

    /// `momc` writes an element's own name where the source has no `elementID`.
    private func renamingIdentifier(_ object: ArchivedObject, name: String) throws -> String? {
        guard let identifier = try object.string(forKey: "NSRenamingIdentifier"), identifier != name else { return nil }
        return identifier
    }

    private func userInfo(_ object: ArchivedObject) throws -> [AnyHashable: Any]? {
        guard case .dictionary(let keys, let values)? = try unarchiver.decode(forKey: "NSUserInfo", in: object) else { return nil }
        guard !keys.isEmpty else { return [:] }
        var info: [AnyHashable: Any] = [:]
        for (key, value) in zip(keys, values) {
            guard let hashable = key.foundationValue as? AnyHashable else { throw fail("NSUserInfo has a key that is not a string", object) }
            info[hashable] = value.foundationValue
        }
        return info
    }

    /// An array of strings.
    private func stringList(_ value: UnarchivedValue, _ key: String, _ object: ArchivedObject) throws -> [String] {
        guard case .array(let names) = value else { throw fail("\(key) is not an array", object) }
        return try names.map { name in
            guard case .string(let string) = name else { throw fail("\(key) holds something other than names", object) }
            return string
        }
    }

    /// An array of arrays of strings (uniqueness constraints, compound indexes).
    private func stringLists(_ value: UnarchivedValue, _ key: String, _ object: ArchivedObject) throws -> [[String]] {
        guard case .array(let lists) = value else { throw fail("\(key) is not an array", object) }
        return try lists.map { list in
            guard case .array = list else { throw fail("\(key) holds something other than arrays", object) }
            return try stringList(list, key, object)
        }
    }

    /// The keys and archived objects of the dictionary in field `key`, in archive order.
    private func objects(forKey key: String, in object: ArchivedObject, limit: Int) throws -> [(String, ArchivedObject)] {
        guard let reference = try object.reference(forKey: key) else { return [] }
        let dictionary = try archive.object(at: reference)
        guard dictionary.isKind(of: "NSDictionary") else { throw fail("\(key) is \(dictionary.className), not a dictionary", object) }
        let keys = try dictionary.references(forKey: "NS.keys")
        let values = try dictionary.references(forKey: "NS.objects")
        guard keys.count == values.count else { throw fail("\(key) has \(keys.count) keys and \(values.count) values", dictionary) }
        guard keys.count <= limit else { throw fail("\(key) has \(keys.count) entries, more than \(limit)", dictionary) }
        var entries: [(String, ArchivedObject)] = []
        var seen = Set<String>()
        for (keyReference, valueReference) in zip(keys, values) {
            guard case .value(.string(let name)) = try archive.entry(at: keyReference) else { throw fail("\(key) has a key that is not a string", dictionary) }
            guard seen.insert(name).inserted else { throw fail("\(key) has the key '\(name)' twice", dictionary) }
            entries.append((name, try archive.object(at: valueReference)))
        }
        return entries
    }

    /// The references of the collection `collection`, read for field `key`: an error names the key.
    private func elements(of collection: ArchivedObject, key: String) throws -> [ArchiveReference] {
        try named(key, collection) { () throws(KeyedArchiveError) in try unarchiver.elements(of: collection) }
    }

    /// `body`'s result; its archive error becomes a `ModelError` naming `object` and `key`.
    private func named<T>(_ key: String, _ object: ArchivedObject, _ body: () throws(KeyedArchiveError) -> T) throws -> T {
        do { return try body() } catch { throw fail("\(key): \(error)", object) }
    }

    private func expect(_ object: ArchivedObject, _ className: String) throws {
        guard object.isKind(of: className) else { throw fail("expected \(className), found \(object.className)", object) }
    }

    private func fail(_ message: String, _ object: ArchivedObject) -> ModelError {
        ModelError(.malformedFile, "\(object.label): \(message)", file: file)
    }
}

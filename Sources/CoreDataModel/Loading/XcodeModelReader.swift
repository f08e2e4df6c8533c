import Foundation
import CoreDataPredicate

/// Turns the XML of an Xcode model (`Name.xcdatamodel/contents`) into model objects.
///
/// The file format is summarised in `../shared/conformance/README.md`: `<model>` holds
/// `<entity>`, `<configuration>`, `<fetchRequest>` and `<elements>` (editor layout, ignored).
/// Absent boolean attributes mean `NO`; an absent `deletionRule` means Nullify. Elements this
/// reader does not know are skipped, so newer Xcode files still load.
struct XcodeModelReader {
    let file: URL?
    /// Where each entity and property was declared, so that consistency errors found after
    /// loading can still name a line.
    private(set) var locations: [String: ModelXMLElement] = [:]
    /// The model's composite type definitions by name (`<composite name="Address">`), which a
    /// composite attribute names in its `composite` attribute.
    private var compositeDefinitions: [String: ModelXMLElement] = [:]

    init(file: URL?) { self.file = file }

    // MARK: Entry

    /// Reads one model document and adds its entities, configurations and fetch requests to `model`.
    mutating func read(_ root: ModelXMLElement, into model: NSManagedObjectModel) throws(ModelError) {
        guard root.name == "model" else {
            throw error(.notAModel, "the root element is <\(root.name)>, not <model>: this is not an Xcode data model", root)
        }
        if let identifier = root["userDefinedModelVersionIdentifier"], !identifier.isEmpty {
            model.versionIdentifiers.insert(identifier)
        }

        // Xcode 15 writes composite types beside the entities; `compositeAttribute` is accepted
        // as another spelling of the element.
        for element in root.children(named: "composite") + root.children(named: "compositeAttribute") {
            let name = try required("name", element)
            compositeDefinitions[name] = element
        }

        var entities: [NSEntityDescription] = model.entities
        var entityElements: [(NSEntityDescription, ModelXMLElement)] = []
        var byName = model.entitiesByName
        for element in root.children(named: "entity") {
            let entity = try readEntity(element)
            let name = entity.name ?? ""
            if byName[name] != nil {
                throw error(.duplicateEntity, "the model already has an entity named '\(name)'", element)
            }
            byName[name] = entity
            entities.append(entity)
            entityElements.append((entity, element))
            locations[name] = element
        }
        model.entities = entities

        try linkInheritance(entityElements, byName: byName)
        for (entity, element) in entityElements {
            try linkRelationships(of: entity, element, byName: byName)
        }
        for (entity, element) in entityElements {
            try checkPropertyReferences(of: entity, element, byName: byName)
        }
        for element in root.children(named: "configuration") {
            let name = try required("name", element)
            var members: [NSEntityDescription] = []
            for member in element.children(named: "memberEntity") {
                let memberName = try required("name", member)
                guard let entity = byName[memberName] else {
                    throw error(.missingEntity, "configuration '\(name)' names entity '\(memberName)', which the model does not have", member)
                }
                members.append(entity)
            }
            model.setEntities(members, forConfigurationName: name)
        }
        for element in root.children(named: "fetchRequest") {
            let name = try required("name", element)
            let request = try readFetchRequest(element)
            guard byName[request.entityName] != nil else {
                throw error(.missingEntity, "fetch request '\(name)' fetches entity '\(request.entityName)', which the model does not have", element)
            }
            model.fetchRequestDescriptionsByName[name] = request
        }
    }

    /// Adds the file, line and element to an error the consistency check found, using where the
    /// entity or property it names was declared.
    func locate(_ problem: ModelError) -> ModelError {
        var located = problem
        located.file = file
        let key = [problem.entityName, problem.propertyName].compactMap { $0 }.joined(separator: ".")
        if let element = locations[key] ?? problem.entityName.flatMap({ locations[$0] }) {
            located.line = element.line
            located.element = element.label
        }
        return located
    }

    // MARK: Entities

    private mutating func readEntity(_ element: ModelXMLElement) throws(ModelError) -> NSEntityDescription {
        let entity = NSEntityDescription()
        let name = try required("name", element)
        entity.name = name
        entity.managedObjectClassName = element["representedClassName"].flatMap { $0.isEmpty ? nil : $0 } ?? "NSManagedObject"
        entity.isAbstract = try flag("isAbstract", element)
        entity.renamingIdentifier = element["elementID"]
        entity.versionHashModifier = element["versionHashModifier"]

        var properties: [NSPropertyDescription] = []
        var names = Set<String>()
        var legacyIndexes: [NSFetchIndexDescription] = []
        for child in element.children {
            let property: NSPropertyDescription
            switch child.name {
            case "attribute":
                let attribute = try readAttribute(child)
                if try flag("indexed", child) {
                    // Xcode's deprecated per-attribute `indexed` flag is a one-property fetch index.
                    legacyIndexes.append(NSFetchIndexDescription(
                        name: "\(name)_\(attribute.name)_index",
                        elements: [NSFetchIndexElementDescription(propertyName: attribute.name, collationType: .binary)]))
                }
                property = attribute
            case "relationship":
                property = try readRelationship(child)
            case "fetchedProperty":
                property = try readFetchedProperty(child)
            default:
                continue
            }
            guard names.insert(property.name).inserted else {
                throw error(.duplicateProperty, "entity '\(name)' already has a property named '\(property.name)'", child)
            }
            locations["\(name).\(property.name)"] = child
            properties.append(property)
        }
        entity.properties = properties
        entity.userInfo = try readUserInfo(element)
        entity.uniquenessConstraints = try readUniquenessConstraints(element)
        entity.indexes = try readFetchIndexes(element, entityName: name) + legacyIndexes
        return entity
    }

    private func linkInheritance(_ entities: [(NSEntityDescription, ModelXMLElement)], byName: [String: NSEntityDescription]) throws(ModelError) {
        var parentOf: [String: String] = [:]
        for (entity, element) in entities {
            guard let parentName = element["parentEntity"], !parentName.isEmpty else { continue }
            guard byName[parentName] != nil else {
                throw error(.missingEntity, "parent entity '\(parentName)' does not exist in the model", element)
            }
            parentOf[entity.name ?? ""] = parentName
        }
        // Find cycles on names before linking objects: walks over a cyclic chain would not end.
        for (entity, element) in entities {
            let start = entity.name ?? ""
            var path = [start]
            var current = parentOf[start]
            while let next = current {
                path.append(next)
                if next == start {
                    throw error(.inheritanceCycle, "entity inheritance forms a cycle: \(path.joined(separator: " → "))", element)
                }
                if path.count > entities.count + 1 { break }  // a cycle further up; its own entity reports it
                current = parentOf[next]
            }
        }
        var children: [String: [NSEntityDescription]] = [:]
        for (entity, _) in entities {
            if let parent = parentOf[entity.name ?? ""] { children[parent, default: []].append(entity) }
        }
        for (parentName, subentities) in children {
            byName[parentName]?.subentities += subentities
        }
    }

    private func linkRelationships(of entity: NSEntityDescription, _ element: ModelXMLElement, byName: [String: NSEntityDescription]) throws(ModelError) {
        let relationshipElements = Dictionary(
            element.children(named: "relationship").compactMap { child in child["name"].map { ($0, child) } },
            uniquingKeysWith: { first, _ in first })
        for property in entity.declaredProperties {
            guard let relationship = property as? NSRelationshipDescription,
                  let child = relationshipElements[relationship.name] else { continue }
            let destinationName = try required("destinationEntity", child)
            guard let destination = byName[destinationName] else {
                throw error(.missingEntity, "destination entity '\(destinationName)' does not exist in the model", child)
            }
            relationship.destinationEntity = destination
            guard let inverseName = child["inverseName"], !inverseName.isEmpty else { continue }
            let ownerName = child["inverseEntity"].flatMap { $0.isEmpty ? nil : $0 } ?? destinationName
            guard let owner = byName[ownerName] else {
                throw error(.missingEntity, "inverse entity '\(ownerName)' does not exist in the model", child)
            }
            guard let inverse = owner.propertiesByName[inverseName] as? NSRelationshipDescription else {
                throw error(.invalidInverse, "inverse '\(inverseName)' is not a relationship of entity '\(ownerName)'", child)
            }
            relationship.inverseRelationship = inverse
        }
    }

    /// Constraints, indexes and fetched properties name properties and entities; checking them
    /// here, with their elements at hand, lets the error point at the exact line. Inherited
    /// properties count, so this runs after inheritance is linked.
    private func checkPropertyReferences(of entity: NSEntityDescription, _ element: ModelXMLElement, byName: [String: NSEntityDescription]) throws(ModelError) {
        let properties = entity.propertiesByName
        let entityName = entity.name ?? ""
        func requireProperty(_ name: String, _ what: String, _ item: ModelXMLElement) throws(ModelError) {
            guard properties[name] != nil else {
                var problem = error(.missingProperty, "\(what) names '\(name)', which entity '\(entityName)' does not have", item)
                problem.entityName = entityName
                problem.propertyName = name
                throw problem
            }
        }
        for container in element.children(named: "uniquenessConstraints") {
            for constraint in container.children(named: "uniquenessConstraint") {
                for member in constraint.children(named: "constraint") {
                    try requireProperty(member["value"] ?? "", "uniqueness constraint", member)
                }
            }
        }
        for index in element.children(named: "fetchIndex") {
            for item in index.children(named: "fetchIndexElement") {
                try requireProperty(item["property"] ?? "", "fetch index '\(index["name"] ?? "")'", item)
            }
        }
        for container in element.children(named: "compoundIndexes") {
            for compound in container.children(named: "compoundIndex") {
                for item in compound.children(named: "index") {
                    try requireProperty(item["value"] ?? "", "compound index", item)
                }
            }
        }
        for fetched in element.children(named: "fetchedProperty") {
            for request in fetched.children(named: "fetchRequest") {
                let target = request["entity"] ?? ""
                guard byName[target] != nil else {
                    throw error(.missingEntity, "fetched property '\(fetched["name"] ?? "")' fetches entity '\(target)', which the model does not have", fetched)
                }
            }
        }
    }

    // MARK: Properties

    private func readCommon(_ property: NSPropertyDescription, _ element: ModelXMLElement) throws(ModelError) {
        property.name = try required("name", element)
        property.isOptional = try flag("optional", element)
        property.isTransient = try flag("transient", element)
        property.renamingIdentifier = element["elementID"]
        property.versionHashModifier = element["versionHashModifier"]
        property.isIndexedBySpotlight = try flag("spotlightIndexingEnabled", element)
        property.isStoredInExternalRecord = try flag("storedInTruthFile", element)
        property.userInfo = try readUserInfo(element)
    }

    private func readAttribute(_ element: ModelXMLElement, composites: Set<String> = []) throws(ModelError) -> NSAttributeDescription {
        let typeName = try required("attributeType", element)
        guard let type = NSAttributeType(xcodeName: typeName) else {
            let known = NSAttributeType.allCases.map { "'\($0.xcodeName)'" }.joined(separator: ", ")
            throw error(.unknownAttributeType, "unknown attributeType '\(typeName)'; expected one of \(known)", element)
        }
        let attribute: NSAttributeDescription
        if type == .compositeAttributeType {
            attribute = try readComposite(element, composites: composites)
        } else if try flag("derived", element) {
            let derived = NSDerivedAttributeDescription()
            if let format = element["derivationExpression"], !format.isEmpty {
                do {
                    derived.derivationExpression = try CoreDataPredicate.NSExpression(validatingFormat: format)
                } catch {
                    throw self.error(.invalidValue, "derivationExpression '\(format)' does not parse: \(error)", element)
                }
            }
            attribute = derived
        } else {
            attribute = NSAttributeDescription()
        }
        try readCommon(attribute, element)
        attribute.attributeType = type
        attribute.valueTransformerName = element["valueTransformerName"]
        if let className = element["customClassName"], !className.isEmpty {
            attribute.attributeValueClassName = className
        }
        attribute.allowsExternalBinaryDataStorage = try flag("allowsExternalBinaryDataStorage", element)
        attribute.preservesValueInHistoryOnDeletion = try flag("preserveAfterDeletion", element)
        attribute.allowsCloudEncryption = try flag("allowsCloudEncryption", element)
        attribute.defaultValue = try readDefaultValue(type, element)
        attribute.validationRules = try readValidationRules(type, element)
        return attribute
    }

    private func readDefaultValue(_ type: NSAttributeType, _ element: ModelXMLElement) throws(ModelError) -> Any? {
        if type == .dateAttributeType {
            guard let seconds = element["defaultDateTimeInterval"] else { return nil }
            return Date(timeIntervalSinceReferenceDate: try number(seconds, "defaultDateTimeInterval", element))
        }
        guard let text = element["defaultValueString"] else { return nil }
        func bad(_ expected: String) -> ModelError {
            error(.invalidValue, "defaultValueString '\(text)' is not \(expected)", element)
        }
        switch type {
        case .integer16AttributeType: guard let v = Int16(text) else { throw bad("an Integer 16") }; return v
        case .integer32AttributeType: guard let v = Int32(text) else { throw bad("an Integer 32") }; return v
        case .integer64AttributeType: guard let v = Int64(text) else { throw bad("an Integer 64") }; return v
        case .decimalAttributeType: guard let v = decimal(text) else { throw bad("a decimal number") }; return v
        case .doubleAttributeType: guard let v = Double(text) else { throw bad("a Double") }; return v
        case .floatAttributeType: guard let v = Float(text) else { throw bad("a Float") }; return v
        case .booleanAttributeType: guard let v = boolean(text) else { throw bad("YES or NO") }; return v
        case .stringAttributeType: return text
        case .UUIDAttributeType: guard let v = UUID(uuidString: text) else { throw bad("a UUID") }; return v
        case .URIAttributeType: guard let v = URL(string: text) else { throw bad("a URI") }; return v
        case .undefinedAttributeType, .binaryDataAttributeType, .transformableAttributeType,
             .objectIDAttributeType, .compositeAttributeType, .dateAttributeType:
            // Xcode offers no default for these; a stray string is kept as written.
            return text
        }
    }

    private func readValidationRules(_ type: NSAttributeType, _ element: ModelXMLElement) throws(ModelError) -> [AttributeValidationRule] {
        var rules: [AttributeValidationRule] = []
        if type.isNumeric {
            if let text = element["minValueString"] {
                guard let value = decimal(text) else { throw error(.invalidValue, "minValueString '\(text)' is not a number", element) }
                rules.append(.minimumValue(value))
            }
            if let text = element["maxValueString"] {
                guard let value = decimal(text) else { throw error(.invalidValue, "maxValueString '\(text)' is not a number", element) }
                rules.append(.maximumValue(value))
            }
        } else if type == .stringAttributeType || type == .binaryDataAttributeType {
            if let text = element["minValueString"] {
                guard let value = Int(text), value >= 0 else { throw error(.invalidValue, "minValueString '\(text)' is not a length", element) }
                rules.append(.minimumLength(value))
            }
            if let text = element["maxValueString"] {
                guard let value = Int(text), value >= 0 else { throw error(.invalidValue, "maxValueString '\(text)' is not a length", element) }
                rules.append(.maximumLength(value))
            }
        } else if type == .dateAttributeType {
            if let text = element["minDateTimeInterval"] {
                rules.append(.earliestDate(Date(timeIntervalSinceReferenceDate: try number(text, "minDateTimeInterval", element))))
            }
            if let text = element["maxDateTimeInterval"] {
                rules.append(.latestDate(Date(timeIntervalSinceReferenceDate: try number(text, "maxDateTimeInterval", element))))
            }
        }
        if let pattern = element["regularExpressionString"], !pattern.isEmpty {
            do {
                _ = try NSRegularExpression(pattern: pattern)
            } catch {
                throw self.error(.invalidValue, "regularExpressionString '\(pattern)' is not a valid regular expression", element)
            }
            rules.append(.regularExpression(pattern))
        }
        return rules
    }

    /// A composite attribute: its elements are the `<attribute>`s of the model-level definition
    /// its `composite` attribute names, or its own `<attribute>` children. `composites` holds the
    /// definitions being read, so that a definition containing itself is an error, not a loop.
    private func readComposite(_ element: ModelXMLElement, composites: Set<String>) throws(ModelError) -> NSCompositeAttributeDescription {
        let composite = NSCompositeAttributeDescription()
        var definition = element
        var inside = composites
        if let typeName = element["composite"], !typeName.isEmpty {
            guard let found = compositeDefinitions[typeName] else {
                throw error(.missingEntity, "composite attribute names composite '\(typeName)', which the model does not define", element)
            }
            guard inside.insert(typeName).inserted else {
                throw error(.invalidValue, "composite '\(typeName)' contains itself", element)
            }
            definition = found
        }
        var names = Set<String>()
        var elements: [NSAttributeDescription] = []
        for child in definition.children(named: "attribute") {
            let item = try readAttribute(child, composites: inside)
            guard names.insert(item.name).inserted else {
                throw error(.duplicateProperty, "composite has two elements named '\(item.name)'", child)
            }
            elements.append(item)
        }
        composite.elements = elements
        return composite
    }

    private func readRelationship(_ element: ModelXMLElement) throws(ModelError) -> NSRelationshipDescription {
        let relationship = NSRelationshipDescription()
        try readCommon(relationship, element)
        let toMany = try flag("toMany", element)
        relationship.minCount = try count("minCount", element) ?? 0
        relationship.maxCount = try count("maxCount", element) ?? (toMany ? 0 : 1)
        if !toMany && relationship.maxCount != 1 {
            throw error(.invalidCount, "a to-one relationship (no toMany=\"YES\") must have maxCount 1, not \(relationship.maxCount)", element)
        }
        if toMany && relationship.maxCount == 1 {
            throw error(.invalidCount, "a to-many relationship cannot have maxCount 1", element)
        }
        relationship.isOrdered = try flag("ordered", element)
        if let ruleName = element["deletionRule"] {
            guard let rule = NSDeleteRule(xcodeName: ruleName) else {
                throw error(.unknownDeleteRule, "unknown deletionRule '\(ruleName)'; expected Nullify, Cascade, Deny or No Action", element)
            }
            relationship.deleteRule = rule
        } else {
            relationship.deleteRule = .nullifyDeleteRule
        }
        return relationship
    }

    private func readFetchedProperty(_ element: ModelXMLElement) throws(ModelError) -> NSFetchedPropertyDescription {
        let property = NSFetchedPropertyDescription()
        try readCommon(property, element)
        if let request = element.children(named: "fetchRequest").first {
            property.fetchRequestDescription = try readFetchRequest(request)
        }
        return property
    }

    private func readFetchRequest(_ element: ModelXMLElement) throws(ModelError) -> FetchRequestDescription {
        let entityName = try required("entity", element)
        var request = FetchRequestDescription(entityName: entityName)
        request.predicateFormat = element["predicateString"].flatMap { $0.isEmpty ? nil : $0 }
        request.fetchLimit = try count("fetchLimit", element) ?? 0
        request.fetchBatchSize = try count("fetchBatchSize", element) ?? 0
        if element["includeSubentities"] != nil { request.includesSubentities = try flag("includeSubentities", element) }
        if element["includesPendingChanges"] != nil { request.includesPendingChanges = try flag("includesPendingChanges", element) }
        if element["returnObjectsAsFaults"] != nil { request.returnsObjectsAsFaults = try flag("returnObjectsAsFaults", element) }
        request.returnsDistinctResults = try flag("returnDistinctResults", element)
        if let paths = element["relationshipKeyPathsForPrefetching"] {
            request.relationshipKeyPathsForPrefetching = paths.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return request
    }

    // MARK: Entity children

    private func readUserInfo(_ element: ModelXMLElement) throws(ModelError) -> [AnyHashable: Any]? {
        guard let info = element.children(named: "userInfo").first else { return nil }
        var result: [AnyHashable: Any] = [:]
        for entry in info.children(named: "entry") {
            let key = try required("key", entry)
            result[key] = entry["value"] ?? ""
        }
        return result
    }

    private func readUniquenessConstraints(_ element: ModelXMLElement) throws(ModelError) -> [[Any]] {
        var groups: [[Any]] = []
        for container in element.children(named: "uniquenessConstraints") {
            for constraint in container.children(named: "uniquenessConstraint") {
                var names: [Any] = []
                for member in constraint.children(named: "constraint") {
                    names.append(try required("value", member))
                }
                if !names.isEmpty { groups.append(names) }
            }
        }
        return groups
    }

    private func readFetchIndexes(_ element: ModelXMLElement, entityName: String) throws(ModelError) -> [NSFetchIndexDescription] {
        var indexes: [NSFetchIndexDescription] = []
        for child in element.children(named: "fetchIndex") {
            let name = try required("name", child)
            var elements: [NSFetchIndexElementDescription] = []
            for item in child.children(named: "fetchIndexElement") {
                guard let property = item["property"], !property.isEmpty else {
                    if item["expression"] != nil {
                        throw error(.invalidValue, "fetch index '\(name)' uses an expression element; only property elements are supported", item)
                    }
                    throw error(.missingAttribute, "fetchIndexElement has no 'property' attribute", item)
                }
                let collation: NSFetchIndexElementDescription.CollationType
                switch item["type"] ?? "Binary" {
                case "Binary": collation = .binary
                case "RTree": collation = .rTree
                case let other: throw error(.invalidValue, "unknown index element type '\(other)'; expected Binary or RTree", item)
                }
                let ascending: Bool
                switch item["order"] ?? "ascending" {
                case "ascending": ascending = true
                case "descending": ascending = false
                case let other: throw error(.invalidValue, "unknown index order '\(other)'; expected ascending or descending", item)
                }
                elements.append(NSFetchIndexElementDescription(propertyName: property, collationType: collation, isAscending: ascending))
            }
            indexes.append(NSFetchIndexDescription(name: name, elements: elements))
        }
        for container in element.children(named: "compoundIndexes") {
            for (position, compound) in container.children(named: "compoundIndex").enumerated() {
                let names = try compound.children(named: "index").map { (item) throws(ModelError) in try required("value", item) }
                indexes.append(NSFetchIndexDescription(
                    name: "\(entityName)_compoundIndex_\(position)",
                    elements: names.map { NSFetchIndexElementDescription(propertyName: $0, collationType: .binary) }))
            }
        }
        return indexes
    }

    // MARK: Values

    private func required(_ attribute: String, _ element: ModelXMLElement) throws(ModelError) -> String {
        guard let value = element[attribute], !value.isEmpty else {
            throw error(.missingAttribute, "missing required attribute '\(attribute)'", element)
        }
        return value
    }

    private func flag(_ attribute: String, _ element: ModelXMLElement) throws(ModelError) -> Bool {
        guard let text = element[attribute] else { return false }
        guard let value = boolean(text) else {
            throw error(.invalidValue, "\(attribute)=\"\(text)\" is not YES or NO", element)
        }
        return value
    }

    private func count(_ attribute: String, _ element: ModelXMLElement) throws(ModelError) -> Int? {
        guard let text = element[attribute] else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw error(.invalidValue, "\(attribute)=\"\(text)\" is not a count (a whole number, 0 or more)", element)
        }
        return value
    }

    private func number(_ text: String, _ attribute: String, _ element: ModelXMLElement) throws(ModelError) -> Double {
        guard let value = Double(text), value.isFinite else {
            throw error(.invalidValue, "\(attribute)=\"\(text)\" is not a number of seconds", element)
        }
        return value
    }

    private func boolean(_ text: String) -> Bool? {
        switch text {
        case "YES", "yes", "true", "1": return true
        case "NO", "no", "false", "0": return false
        default: return nil
        }
    }

    /// `Decimal(string:)` accepts a numeric prefix ("12abc" → 12); a model value must be all number.
    private func decimal(_ text: String) -> Decimal? {
        guard Double(text) != nil, let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            return nil
        }
        return value
    }

    private func error(_ code: ModelError.Code, _ message: String, _ element: ModelXMLElement) -> ModelError {
        ModelError(code, message, file: file, line: element.line, element: element.label)
    }
}

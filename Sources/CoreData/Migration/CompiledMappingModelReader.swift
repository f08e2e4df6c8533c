import CoreDataArchive
import CoreDataPredicate
import Foundation

/// Builds a mapping model from Xcode's compiled form, a `.cdm` file: an `NSKeyedArchiver` archive
/// whose root is an `NSMappingModel` (Formats/compiled-model.md §5).
///
/// The result is what ``MappingModelFile/decodeSource(_:path:)`` makes of the `.xcmappingmodel`
/// the file was compiled from, with what the compiler fills in already there (every value
/// expression, Apple's entity version hashes).
///
/// Does no I/O: the caller reads the file. The bytes come from outside, so every problem throws
/// an `NSMigrationError` (134110) naming the file, the archive object and the key; nothing traps.
/// The archive's own bounds apply (size, objects, nesting, and one object budget for the whole
/// mapping, expressions included), and entity and property mapping counts are bounded.
///
/// Threading: a reader lives for one ``read(_:path:)`` call, on the caller's thread.
package struct CompiledMappingModelReader {
    /// §5: the most entity mappings of one mapping model, and property mappings of one list
    /// (Xcode writes one entity mapping per entity, one property mapping per property).
    static let maximumEntityMappings = 10_000
    static let maximumPropertyMappings = 10_000

    /// Whether `data` is a binary property list (a compiled mapping model), not Xcode's XML source.
    static func isCompiled(_ data: Data) -> Bool { data.starts(with: Array("bplist".utf8)) }

    private let archive: KeyedArchive
    private let unarchiver: KeyedUnarchiver
    private let expressions: ArchivedExpressionDecoder

    private init(archive: KeyedArchive) {
        self.archive = archive
        // One unarchiver for every expression of the mapping: its budget bounds the whole read,
        // not each expression on its own.
        unarchiver = KeyedUnarchiver(archive: archive)
        expressions = ArchivedExpressionDecoder(unarchiver: unarchiver, hook: Self.fetchRequestExpression)
    }

    /// Decodes the compiled mapping model in `data`; `path` names the file in errors.
    ///
    /// - Throws: `NSMigrationError` (134110) whose message names `path` and what is wrong: bytes
    ///   that are not a keyed archive, a root that is not an `NSMappingModel`, a required key
    ///   missing, a field of the wrong kind or class, two entity mappings of one name, or an
    ///   archive limit exceeded (with the `$objects` index of the object at fault).
    package static func read(_ data: Data, path: String) throws -> NSMappingModel {
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(data: data)
        } catch {
            throw MappingModelFile.failure(path, "not a compiled mapping model: \(error)")
        }
        do {
            return try CompiledMappingModelReader(archive: archive).readMappingModel()
        } catch {
            throw MappingModelFile.failure(path, "\(error)")
        }
    }

    // MARK: The mapping model

    private func readMappingModel() throws(KeyedArchiveError) -> NSMappingModel {
        let root = try archive.object(at: archive.rootReference())
        guard root.isKind(of: "NSMappingModel") else {
            throw KeyedArchiveError(.wrongClass, "the root object is \(root.label), not an NSMappingModel", object: root.reference.index)
        }
        // NSEntityMappingsByName repeats NSEntityMappings keyed by NSMappingName; the array is
        // read because it alone keeps the order the migration runs the mappings in.
        guard let list = try root.reference(forKey: "NSEntityMappings") else { throw fail("NSEntityMappings is missing", root) }
        let references = try elements(list, "NSEntityMappings", of: root, limit: Self.maximumEntityMappings)
        var mappings: [NSEntityMapping] = []
        var names = Set<String>()
        for reference in references {
            let mapping = try unarchiver.withObject(reference) { (object) throws(KeyedArchiveError) -> NSEntityMapping in
                try readEntityMapping(object)
            }
            // The migration finds mappings by name (destinationInstancesForEntityMappingNamed:).
            guard names.insert(mapping.name ?? "").inserted else {
                throw fail("NSEntityMappings holds two entity mappings named '\(mapping.name ?? "")'", root)
            }
            mappings.append(mapping)
        }
        let model = NSMappingModel()
        model.entityMappings = mappings
        return model
    }

    // MARK: Entity mappings

    private func readEntityMapping(_ object: ArchivedObject) throws(KeyedArchiveError) -> NSEntityMapping {
        try expect(object, "NSEntityMapping", in: "NSEntityMappings")
        let mapping = NSEntityMapping()
        guard let name = try object.string(forKey: "NSMappingName"), !name.isEmpty else { throw fail("NSMappingName is missing", object) }
        mapping.name = name
        guard let rawType = try object.integer(forKey: "NSMappingType") else { throw fail("NSMappingType is missing", object) }
        guard rawType >= 0, let type = NSEntityMappingType(rawValue: UInt(rawType)) else {
            throw fail("NSMappingType \(rawType) is not an entity mapping type (0 … 5)", object)
        }
        mapping.mappingType = type
        // The source loader reads an empty name as none; so does this, for the two to agree.
        mapping.sourceEntityName = try object.string(forKey: "NSSourceEntityName").flatMap { $0.isEmpty ? nil : $0 }
        mapping.destinationEntityName = try object.string(forKey: "NSDestinationEntityName").flatMap { $0.isEmpty ? nil : $0 }
        guard mapping.sourceEntityName != nil || mapping.destinationEntityName != nil else {
            throw fail("entity mapping '\(name)' has neither NSSourceEntityName nor NSDestinationEntityName", object)
        }
        mapping.sourceEntityVersionHash = try object.data(forKey: "NSSourceEntityVersionHash")
        mapping.destinationEntityVersionHash = try object.data(forKey: "NSDestinationEntityVersionHash")
        // The hashes are Apple's, which this library does not compute yet: the migration does not
        // compare them with its models' hashes (Formats/model-version-hash.md).
        mapping.versionHashesAreApples = true
        mapping.entityMigrationPolicyClassName = try object.string(forKey: "NSEntityMigrationPolicyClassName").flatMap { $0.isEmpty ? nil : $0 }
        mapping.sourceExpression = try expressions.expression(forKey: "NSSourceExpression", in: object)
        mapping.userInfo = try userInfo(object)
        var filled = Set<String>()
        mapping.attributeMappings = try propertyMappings("NSAttributeMappings", of: object, filled: &filled)
        mapping.relationshipMappings = try propertyMappings("NSRelationshipMappings", of: object, filled: &filled)
        return mapping
    }

    // MARK: Property mappings

    /// The property mappings in field `key`; nil when it is missing or `$null`, which a copy
    /// mapping reads as "every property as it is" (unlike an empty list). `filled` collects the
    /// destination properties of the entity mapping across both lists.
    private func propertyMappings(_ key: String, of entityMapping: ArchivedObject, filled: inout Set<String>) throws(KeyedArchiveError) -> [NSPropertyMapping]? {
        guard let list = try entityMapping.reference(forKey: key) else { return nil }
        var mappings: [NSPropertyMapping] = []
        for reference in try elements(list, key, of: entityMapping, limit: Self.maximumPropertyMappings) {
            let mapping = try unarchiver.withObject(reference) { (object) throws(KeyedArchiveError) -> NSPropertyMapping in
                try expect(object, "NSPropertyMapping", in: key)
                let mapping = NSPropertyMapping()
                guard let name = try object.string(forKey: "NSDestinationPropertyName"), !name.isEmpty else {
                    throw fail("NSDestinationPropertyName is missing", object)
                }
                mapping.name = name
                // `$null` is a property left at its default value (the compiler writes it for a
                // destination property the source entity does not have).
                mapping.valueExpression = try expressions.expression(forKey: "NSValueExpression", in: object)
                mapping.userInfo = try userInfo(object)
                return mapping
            }
            // Two mappings of one property would each set it, the last one winning silently.
            guard filled.insert(mapping.name ?? "").inserted else {
                throw fail("two property mappings fill '\(mapping.name ?? "")' (\(key))", entityMapping)
            }
            mappings.append(mapping)
        }
        return mappings
    }

    // MARK: Expressions

    /// Decodes Core Data's `NSFetchRequestExpression` (an entity mapping's source expression),
    /// which the archive module cannot build; nil leaves any other class unknown to the decoder.
    static func fetchRequestExpression(_ object: ArchivedObject, _ decoder: ArchivedExpressionDecoder) throws -> NSExpression? {
        guard object.isKind(of: "NSFetchRequestExpression") else { return nil }
        guard let request = try decoder.expression(forKey: "NSFRExpression", in: object) else {
            throw KeyedArchiveError(.malformed, "\(object.label): NSFRExpression is missing", object: object.reference.index)
        }
        guard let context = try decoder.expression(forKey: "NSMOCExpression", in: object) else {
            throw KeyedArchiveError(.malformed, "\(object.label): NSMOCExpression is missing", object: object.reference.index)
        }
        return NSFetchRequestExpression.expression(forFetch: request, context: context, countOnly: try object.bool(forKey: "NSCountOnlyFlag") ?? false)
    }

    // MARK: Values

    /// Field `NSUserInfo`: a dictionary with string keys (what Xcode's editor writes); nil when
    /// missing or `$null`.
    private func userInfo(_ object: ArchivedObject) throws(KeyedArchiveError) -> [AnyHashable: Any]? {
        guard let value = try unarchiver.decode(forKey: "NSUserInfo", in: object) else { return nil }
        switch value {
        case .null:
            return nil
        case .dictionary(let keys, let values):
            var info: [AnyHashable: Any] = [:]
            for (key, value) in zip(keys, values) {
                guard case .string(let name) = key else { throw fail("NSUserInfo has a key that is not a string", object) }
                info[name] = value.foundationValue ?? NSNull()
            }
            return info
        default:
            throw fail("NSUserInfo is not a dictionary", object)
        }
    }

    /// The element references of the array at `list` (field `key` of `owner`), none `$null`, at
    /// most `limit`.
    private func elements(_ list: ArchiveReference, _ key: String, of owner: ArchivedObject, limit: Int) throws(KeyedArchiveError) -> [ArchiveReference] {
        let references = try unarchiver.withObject(list) { (array) throws(KeyedArchiveError) -> [ArchiveReference] in
            guard array.isKind(of: "NSArray") else { throw fail("\(key) is \(array.label), not an NSArray", owner, .wrongClass) }
            return try unarchiver.elements(of: array)
        }
        guard references.count <= limit else { throw fail("\(key) has \(references.count) elements, more than \(limit)", owner) }
        if let position = references.firstIndex(where: \.isNull) { throw fail("element \(position) of \(key) is $null", owner) }
        return references
    }

    private func expect(_ object: ArchivedObject, _ className: String, in key: String) throws(KeyedArchiveError) {
        guard object.isKind(of: className) else { throw fail("an element of \(key) is not an \(className)", object, .wrongClass) }
    }

    private func fail(_ message: String, _ object: ArchivedObject, _ kind: KeyedArchiveError.Kind = .malformed) -> KeyedArchiveError {
        KeyedArchiveError(kind, "\(object.label): \(message)", object: object.reference.index)
    }
}

import CoreDataArchive
import CoreDataPredicate
import CoreDataXMLFormat
import Foundation

/// Reads mapping models from Xcode's two files: the editor's `.xcmappingmodel` (a folder whose
/// `xcmapping.xml` is an XML store of `XDDevEntityMapping`, `XDDevAttributeMapping`, … objects,
/// value expressions inside as keyed archives) and the compiler's `.cdm` (a keyed archive of an
/// `NSMappingModel`, read by ``CompiledMappingModelReader``). Decoding does no I/O: ``load(_:)``
/// reads the bytes, the decoders turn them into a model or throw an error naming the file and the
/// problem.
enum MappingModelFile {
    /// What can be wrong with a mapping model file: the message names the file and what is wrong.
    static func failure(_ path: String, _ problem: String) -> NSError {
        coreDataError(NSMigrationError, "the mapping model \(path) cannot be read: \(problem)", [NSFilePathErrorKey: path])
    }

    /// The file name extensions of mapping models, source and compiled.
    static let sourceExtension = "xcmappingmodel"
    static let compiledExtension = "cdm"
    /// The XML store inside a `.xcmappingmodel` folder.
    static let sourceContents = "xcmapping.xml"

    /// Reads the mapping model at `url`: a `.xcmappingmodel` folder (or its `xcmapping.xml`), or
    /// a `.cdm` file.
    static func load(_ url: URL) throws -> NSMappingModel {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw failure(url.path, "no file is there")
        }
        let file = isFolder.boolValue ? url.appendingPathComponent(sourceContents) : url
        // A compiled file past the archive's size limit is refused before it is read into memory.
        if !isFolder.boolValue, url.pathExtension.lowercased() == compiledExtension,
           let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber,
           size.int64Value > Int64(BinaryPropertyList.maximumInputSize) {
            throw failure(file.path, "not a compiled mapping model: it holds \(size.int64Value) bytes, more than the limit of \(BinaryPropertyList.maximumInputSize)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw failure(file.path, error.localizedDescription)
        }
        let mapping: NSMappingModel
        // The content decides, as for a `.mom`: a renamed compiled file still loads. A `.cdm` that
        // is not a property list goes to the compiled reader too, whose error says what it is not
        // (the XML reader's would describe a parse failure of what was never XML).
        if CompiledMappingModelReader.isCompiled(data) || (!isFolder.boolValue && url.pathExtension.lowercased() == compiledExtension) {
            mapping = try CompiledMappingModelReader.read(data, path: file.path)
        } else {
            mapping = try decodeSource([UInt8](data), path: file.path)
        }
        mapping.fileURL = url
        return mapping
    }

    // MARK: The editor's source (`.xcmappingmodel`)

    /// The entity and property mappings of an `xcmapping.xml`, with Xcode's compiler rules for
    /// what the editor leaves implicit:
    /// - an entity mapping's type: custom with a policy class, add without a source entity,
    ///   remove without a destination, else copy; its name `SourceToDestination` (the
    ///   destination's name alone for an added entity, the source's for a removed one);
    /// - its source expression: every object of its source entity (`FETCH(FUNCTION($manager,
    ///   "fetchRequestForSourceEntityNamed:predicateString:", "Source", "TRUEPREDICATE"),
    ///   $manager.sourceContext, NO)`);
    /// - a property mapping without a value expression, in a mapping with a source entity, reads
    ///   the source property of the same name when the source entity has one
    ///   (``NSPropertyMapping/generatesExpression``, resolved against the models when the
    ///   migration runs, as Xcode resolves it when it compiles);
    /// - entity mappings in their `mappingnumber` order, property mappings by name.
    static func decodeSource(_ bytes: [UInt8], path: String) throws -> NSMappingModel {
        let document: XMLStoreDocument
        do {
            document = try XMLStoreReader.decode(bytes)
        } catch {
            throw failure(path, "\(error)")
        }
        var byID: [Int64: XMLStoreObject] = [:]
        for object in document.objects { byID[object.id] = object }
        func text(_ object: XMLStoreObject, _ name: String) -> String? {
            object.attributes.first { $0.name == name }?.text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func targets(_ object: XMLStoreObject, _ name: String) throws -> [XMLStoreObject] {
            try (object.relationships.first { $0.name == name }?.idrefs ?? []).map { id in
                guard let target = byID[id] else {
                    throw failure(path, "line \(object.line): \(object.type) z\(object.id).\(name) refers to z\(id), which the file does not hold")
                }
                return target
            }
        }

        let models = document.objects.filter { $0.type.uppercased() == "XDDEVMAPPINGMODEL" }
        guard models.count == 1, let model = models.first else {
            throw failure(path, "it holds \(models.count) XDDevMappingModel objects where one is expected")
        }
        let mapping = NSMappingModel()
        mapping.sourceModelPath = text(model, "sourcemodelpath")
        mapping.destinationModelPath = text(model, "destinationmodelpath")

        var numbered: [(Int, NSEntityMapping)] = []
        for (position, object) in try targets(model, "entitymappings").enumerated() {
            guard object.type.uppercased() == "XDDEVENTITYMAPPING" else {
                throw failure(path, "line \(object.line): an entity mapping of the mapping model is a \(object.type)")
            }
            let entityMapping = NSEntityMapping()
            let source = text(object, "sourcename").flatMap { $0.isEmpty ? nil : $0 }
            let destination = text(object, "destinationname").flatMap { $0.isEmpty ? nil : $0 }
            let policy = text(object, "migrationpolicyclassname").flatMap { $0.isEmpty ? nil : $0 }
            entityMapping.sourceEntityName = source
            entityMapping.destinationEntityName = destination
            entityMapping.entityMigrationPolicyClassName = policy
            entityMapping.mappingType = mappingType(named: text(object, "mappingtypename"), source: source, destination: destination, policy: policy)
            switch (source, destination) {
            case let (source?, destination?): entityMapping.name = "\(source)To\(destination)"
            case let (nil, destination?): entityMapping.name = destination
            case let (source?, nil): entityMapping.name = source
            case (nil, nil): throw failure(path, "line \(object.line): entity mapping z\(object.id) has neither a source nor a destination entity")
            }
            if let source, entityMapping.mappingType != .addEntityMappingType {
                entityMapping.sourceExpression = everyObject(of: source)
            }
            func properties(_ name: String, kind: String) throws -> [NSPropertyMapping] {
                var mappings: [NSPropertyMapping] = []
                for property in try targets(object, name) {
                    guard property.type.uppercased() == kind, let key = text(property, "name"), !key.isEmpty else {
                        throw failure(path, "line \(property.line): \(property.type) z\(property.id) of entity mapping \(entityMapping.name ?? "") is not a named \(kind)")
                    }
                    let propertyMapping = NSPropertyMapping()
                    propertyMapping.name = key
                    if let archived = property.attributes.first(where: { $0.name == "valueexpressiondata" }) {
                        propertyMapping.valueExpression = try expression(base64: archived.text, path: path, line: archived.line, property: "\(entityMapping.name ?? "").\(key)")
                    } else if source != nil {
                        propertyMapping.generatesExpression = true
                    }
                    mappings.append(propertyMapping)
                }
                return mappings.sorted { ($0.name ?? "") < ($1.name ?? "") }
            }
            entityMapping.attributeMappings = try properties("attributemappings", kind: "XDDEVATTRIBUTEMAPPING")
            entityMapping.relationshipMappings = try properties("relationshipmappings", kind: "XDDEVRELATIONSHIPMAPPING")
            numbered.append((Int(text(object, "mappingnumber") ?? "") ?? position, entityMapping))
        }
        mapping.entityMappings = numbered.sorted { $0.0 < $1.0 }.map(\.1)
        return mapping
    }

    /// Xcode's `mappingtypename`; "Undefined" (what the editor writes) is derived as the compiler does.
    private static func mappingType(named name: String?, source: String?, destination: String?, policy: String?) -> NSEntityMappingType {
        switch name {
        case "Add": return .addEntityMappingType
        case "Remove": return .removeEntityMappingType
        case "Copy": return .copyEntityMappingType
        case "Transform": return .transformEntityMappingType
        case "Custom": return .customEntityMappingType
        default:
            if policy != nil { return .customEntityMappingType }
            if source == nil { return .addEntityMappingType }
            if destination == nil { return .removeEntityMappingType }
            return .copyEntityMappingType
        }
    }

    /// Xcode's source expression of a mapping without a filter.
    static func everyObject(of entity: String) -> NSExpression {
        NSFetchRequestExpression.expression(
            forFetch: NSExpression(
                forFunction: NSExpression(forVariable: NSMigrationManagerKey), selectorName: "fetchRequestForSourceEntityNamed:predicateString:",
                arguments: [NSExpression(forConstantValue: entity), NSExpression(forConstantValue: "TRUEPREDICATE")]),
            context: NSExpression.keyPath("sourceContext", operand: NSExpression(forVariable: NSMigrationManagerKey)),
            countOnly: false)
    }

    /// A value expression the editor stored: base64 of a keyed archive of an `NSExpression`.
    private static func expression(base64: String, path: String, line: Int, property: String) throws -> NSExpression {
        let compact = base64.filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: compact) else {
            throw failure(path, "line \(line): the value expression of \(property) is not base64")
        }
        do {
            return try decodeExpression(KeyedArchive(data: data), root: nil)
        } catch {
            throw failure(path, "line \(line): the value expression of \(property): \(error)")
        }
    }

    /// An archived expression, Core Data's `NSFetchRequestExpression` included (decoded as the
    /// compiled reader decodes it); `root` nil for the archive's root object.
    static func decodeExpression(_ archive: KeyedArchive, root: ArchiveReference?) throws -> NSExpression {
        let decoder = ArchivedExpressionDecoder(archive: archive, hook: CompiledMappingModelReader.fetchRequestExpression)
        return try decoder.expression(at: root ?? archive.rootReference())
    }
}

// Fuzz target: arbitrary bytes as an NSKeyedArchiver archive (Formats/keyed-archive.md), as
// a mapping model (.cdm), a compiled model (.mom) or Xcode's value expression data would hold it.
// The bytes are parsed as a binary property list, then as a keyed archive; every entry is read
// through the generic object view and decoded by one unarchiver with a budget; each $top root is
// decoded as an NSExpression (without a hook, and with one that reaches back into the decoder)
// and as an NSPredicate, and what decodes is printed, compared and evaluated; last, the archive is
// loaded as a compiled model and as a compiled mapping model (Formats/compiled-model.md) and what
// loads is walked. Every step must return or throw its error type; any crash, hang or sanitizer
// report is a bug.
import CoreData
import CoreDataArchive
import CoreDataModel
import CoreDataPredicate
import Foundation

/// The body of the `FuzzKeyedArchive` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzKeyedArchive {
    /// Reads `bytes` as a binary property list and a keyed archive, decodes every entry and root,
    /// and exercises what decodes.
    ///
    /// Traps (`precondition`) when a container reference is out of range, a decoder does not
    /// unwind, an error has no message, or a value is not equal to itself.
    public static func run(_ bytes: [UInt8]) {
        if let list = try? BinaryPropertyList(bytes: bytes) {
            precondition(list.objects.indices.contains(list.top), "top object out of range")
            for object in list.objects {
                switch object {
                case .array(let refs), .set(let refs):
                    precondition(refs.allSatisfy(list.objects.indices.contains), "a container reference out of range")
                case .dictionary(let keys, let values):
                    precondition(keys.count == values.count, "a dictionary with unpaired keys")
                    precondition((keys + values).allSatisfy(list.objects.indices.contains), "a dictionary reference out of range")
                default:
                    break
                }
            }
        }

        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(bytes: bytes)
        } catch {
            precondition(!error.message.isEmpty, "an empty error message")
            return
        }
        compiledModel(bytes)
        compiledMappingModel(bytes)

        // Every entry through the generic view, and decoded generically under one budget.
        let unarchiver = KeyedUnarchiver(archive: archive, objectBudget: 5_000)
        for index in 0..<archive.objectCount {
            let reference = ArchiveReference(index)
            if case .object(let object)? = try? archive.entry(at: reference) {
                precondition(object.className == object.classChain.first, "the class is not the first of its chain")
                for key in object.keys {
                    _ = object.value(forKey: key)
                    _ = try? object.reference(forKey: key)
                    _ = try? object.references(forKey: key)
                    _ = try? object.string(forKey: key)
                    _ = try? object.integer(forKey: key)
                    _ = try? object.bool(forKey: key)
                    _ = try? object.double(forKey: key)
                    _ = try? object.data(forKey: key)
                }
            }
            if let value = try? unarchiver.decode(reference) {
                _ = value.foundationValue
            }
            precondition(unarchiver.depth == 0, "the decoding path did not unwind")
        }

        for key in archive.topKeys {
            guard let root = try? archive.rootReference(key) else { continue }
            // Small budgets: inputs are at most a few kilobytes, and a mutated DAG should not eat the
            // fuzzer's time (the budget's own check is what is under test).
            let hooks: [ArchivedExpressionDecoder.Hook?] = [nil, hook]
            for hook in hooks {
                let decoder = ArchivedExpressionDecoder(unarchiver: KeyedUnarchiver(archive: archive, objectBudget: 5_000), hook: hook)
                if let expression = try? decoder.expression(at: root) { exercise(expression) }
                precondition(decoder.unarchiver.depth == 0, "the decoding path did not unwind")
            }
            let predicateDecoder = ArchivedExpressionDecoder(unarchiver: KeyedUnarchiver(archive: archive, objectBudget: 5_000), hook: hook)
            if let predicate = try? predicateDecoder.predicate(at: root) {
                _ = predicate.predicateFormat
                precondition(predicate.isEqual(predicate), "a predicate is not equal to itself")
                _ = predicate.hash
                _ = predicate.evaluate(with: sample(), substitutionVariables: variables())
            }
        }
    }

    /// A hook as Core Data's would be: it decodes a fetch request expression's nested expressions
    /// through the decoder, takes the first field of any other unknown object that decodes as an
    /// expression, and fails on one class to take the error path.
    private static func hook(_ object: ArchivedObject, _ decoder: ArchivedExpressionDecoder) throws -> CoreDataPredicate.NSExpression? {
        if object.className == "NSFetchRequestExpression" {
            _ = try? decoder.expression(forKey: "NSMOCExpression", in: object)
            return try decoder.expression(forKey: "NSFRExpression", in: object)
        }
        if object.className.hasPrefix("Fail") { throw HookRefusal() }
        for key in object.keys {
            if let expression = try? decoder.expression(forKey: key, in: object) { return expression }
        }
        return nil
    }

    private struct HookRefusal: Error {}

    /// The object and variables expressions are evaluated against (statics of `Any` are not Sendable).
    private static func sample() -> [String: Any] { ["name": "Ada", "age": 36, "tags": ["a", "b"], "owner": ["name": "Grace"]] }
    private static func variables() -> [String: Any] { ["source": sample(), "manager": "manager", "x": 1] }

    private static func exercise(_ expression: CoreDataPredicate.NSExpression) {
        _ = expression.description
        precondition(expression.isEqual(expression), "an expression is not equal to itself")
        _ = expression.hash
        let context = NSMutableDictionary()
        for (key, value) in variables() { context[key] = value }
        _ = expression.expressionValue(with: sample(), context: context)
    }

    /// The archive as a compiled mapping model (`.cdm`): it loads, and prints, or throws an error
    /// with a message.
    private static func compiledMappingModel(_ bytes: [UInt8]) {
        do {
            let mapping = try CompiledMappingModelReader.read(Data(bytes), path: "fuzz.cdm")
            for entityMapping in mapping.entityMappings ?? [] {
                _ = entityMapping.description
                _ = entityMapping.sourceExpression?.description
                for property in (entityMapping.attributeMappings ?? []) + (entityMapping.relationshipMappings ?? []) { _ = property.description }
            }
        } catch {
            precondition(!error.localizedDescription.isEmpty, "an empty mapping model error message")
        }
    }

    /// The archive as a compiled model: it loads consistent or throws a ``ModelError`` with a message.
    private static func compiledModel(_ bytes: [UInt8]) {
        do {
            let model = try NSManagedObjectModel(compiledModelData: Data(bytes))
            for entity in model.entities {
                _ = entity.versionHash
                for property in entity.properties {
                    if let relationship = property as? NSRelationshipDescription {
                        precondition(relationship.destinationEntity != nil, "a relationship without a destination loaded")
                    }
                    if let fetched = property as? NSFetchedPropertyDescription {
                        precondition(fetched.fetchRequestDescription != nil, "a fetched property without a request loaded")
                    }
                    _ = property.validationPredicates.map(\.predicateFormat)
                }
                _ = entity.indexes.map { $0.partialIndexPredicate?.predicateFormat }
            }
            _ = model.versionChecksum
            // A template's predicate was checked to parse back when the model loaded.
            for (name, template) in model.fetchRequestDescriptionsByName {
                precondition(model.fetchRequestTemplate(forName: name) != nil, "template '\(name)' of entity '\(template.entityName)' loaded but makes no request")
            }
            for configuration in model.configurations { _ = model.entities(forConfigurationName: configuration) }
        } catch {
            precondition(!error.message.isEmpty, "an empty model error message")
        }
    }
}

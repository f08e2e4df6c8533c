import CoreDataModel
import CoreDataStorage
import Foundation

/// How a transformable attribute's value becomes the `Data` a store keeps, and back, as Apple's
/// Core Data does it: through the transformer the attribute names, or
/// `NSSecureUnarchiveFromData` when it names none; the unarchiving transformers (that one,
/// `NSKeyedUnarchiveFromData` and subclasses of ``NSSecureUnarchiveFromDataTransformer``) in
/// reverse, any other transformer forwards.
///
/// Threading: stateless; transformers are looked up in the locked registry.
enum TransformableValues {
    /// `bplist00`: how every keyed archive (a binary property list) starts.
    static let binaryPropertyListMagic = Data("bplist00".utf8)

    /// The name of the transformer `attribute` uses: its own, or `NSSecureUnarchiveFromData`.
    static func transformerName(of attribute: NSAttributeDescription) -> NSValueTransformerName {
        if let name = attribute.valueTransformerName, !name.isEmpty { return NSValueTransformerName(rawValue: name) }
        return .secureUnarchiveFromDataTransformerName
    }

    /// The `Data` a store keeps for `value`, a transformable attribute's value as a store of the
    /// app's own (`NSIncrementalStore`, `NSAtomicStore`) hands it over: archived by an unarchiving
    /// transformer (the attribute names none, or one of them), `Data` as it is for another
    /// transformer (taken as the stored form) or none registered, otherwise through the
    /// transformer forwards. `nil` when that gives no data.
    static func storedData(for value: Any, _ attribute: NSAttributeDescription) -> Data? {
        guard let transformer = ValueTransformer.valueTransformer(forName: transformerName(of: attribute)) else { return value as? Data }
        if !(transformer is any UnarchivingValueTransformer), let data = value as? Data { return data }
        return transformer.storedData(for: value)
    }

    /// The attribute value for the `data` a store keeps. The bytes themselves when no transformer
    /// is registered under the attribute's name; `nil`, reported on standard error, when an
    /// unarchiving transformer cannot read them (a damaged store, a class not allowed).
    static func objectValue(fromStored data: Data, _ attribute: NSAttributeDescription) -> Any? {
        // Before November 2026 a nameless transformable kept the app's `Data` as it was; an
        // archive always starts with the binary property list's magic, so bytes without it are
        // such a value and read as before instead of as nil (which the next save would write).
        if attribute.valueTransformerName?.isEmpty ?? true, !data.starts(with: binaryPropertyListMagic) { return data }
        let name = transformerName(of: attribute)
        guard let transformer = ValueTransformer.valueTransformer(forName: name) else { return data }
        if let value = transformer.objectValue(fromStored: data) { return value }
        if let unarchiving = transformer as? any UnarchivingValueTransformer {
            let entity = attribute.entity?.name ?? "an entity"
            let message = "CoreData: error: the value of '\(attribute.name)' of \(entity) (\(data.count) bytes) "
                + "cannot be unarchived by its value transformer '\(name.rawValue)' and reads as nil: \(unarchiving.unarchivingFailure(data))\n"
            FileHandle.standardError.write(Data(message.utf8))
        }
        return nil
    }
}

extension NSManagedObject {
    /// The stored form of a transformable attribute's `value` when the attribute's transformer is
    /// one of Apple's unarchiving transformers (`NSSecureUnarchiveFromData` for an attribute that
    /// names none), which Core Data applies in reverse: `value` archived. `nil` when the attribute
    /// names another transformer, or one that is not registered: the caller applies those forwards.
    ///
    /// - Throws: an `NSManagedObjectValidationError` naming the attribute and the reason when the
    ///   value cannot be archived (an object of a class that is not allowed, not secure-codable…).
    ///   Apple's transformer raises an exception there ("Object of class … is not among allowed
    ///   top level class list").
    func archivedTransformableValue(_ value: Any, _ attribute: NSAttributeDescription) throws -> StoreValue? {
        let name = TransformableValues.transformerName(of: attribute)
        guard let transformer = ValueTransformer.valueTransformer(forName: name), let unarchiving = transformer as? any UnarchivingValueTransformer else {
            return nil
        }
        if let data = transformer.storedData(for: value) { return .data(data) }
        throw validationError(
            NSManagedObjectValidationError, key: attribute.name, value: value,
            "'\(attribute.name)' of \(entity.name ?? "object") is transformable and its value transformer '\(name.rawValue)' cannot archive the value: \(unarchiving.archivingFailure(value))")
    }
}

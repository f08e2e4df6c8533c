import Foundation

/// A property of an entity: the common part of attributes, relationships and fetched properties.
///
/// Matches Apple's `NSPropertyDescription`. A property belongs to at most one entity, set when the
/// entity's ``NSEntityDescription/properties`` are assigned.
///
/// Threading: edit a property only before its model is handed to a coordinator; after that it is
/// immutable (edits trap) and safe to read from any thread.
open class NSPropertyDescription: NSObject, @unchecked Sendable {
    /// The property's name, unique within its entity and its entity's ancestors.
    public var name: String = "" { willSet { checkEditable("name") } }

    /// The entity that declares this property; `nil` until the property is added to an entity.
    public internal(set) weak var entity: NSEntityDescription!

    /// Whether a value may be `nil` when the object is saved. Apple's default is `true`.
    public var isOptional: Bool = true { willSet { checkEditable("isOptional") } }

    /// Whether the value lives only in memory and is never saved to a store.
    public var isTransient: Bool = false { willSet { checkEditable("isTransient") } }

    /// Whether the value can be set only by the store (e.g. derived values).
    public var isReadOnly: Bool = false { willSet { checkEditable("isReadOnly") } }

    /// Free-form data from the model editor; it does not affect the version hash.
    public var userInfo: [AnyHashable: Any]? { willSet { checkEditable("userInfo") } }

    /// A string mixed into ``versionHash`` to mark a change the structure alone does not show.
    public var versionHashModifier: String? { willSet { checkEditable("versionHashModifier") } }

    /// The property's name in an earlier model version (Xcode's `elementID`); used by migration.
    public var renamingIdentifier: String? { willSet { checkEditable("renamingIdentifier") } }

    /// Whether the property is indexed by Spotlight (kept for source compatibility; no effect on Linux).
    public var isIndexedBySpotlight: Bool = false { willSet { checkEditable("isIndexedBySpotlight") } }

    /// Whether the property is stored in an external record (kept for source compatibility).
    public var isStoredInExternalRecord: Bool = false { willSet { checkEditable("isStoredInExternalRecord") } }

    /// Predicates and warnings from ``setValidationPredicates(_:withValidationWarnings:)``.
    var customValidation = CustomValidation()

    /// Creates a property with no name; set ``name`` before adding it to an entity.
    public override init() { super.init() }

    /// A digest of the values that affect how the property is stored (see `Formats/model-version-hash.md`).
    ///
    /// Deterministic across runs and machines. Complexity: O(1) after the model is frozen,
    /// otherwise one SHA-256 of a few dozen bytes.
    public var versionHash: Data { VersionHash.of(self) }

    func checkEditable(_ what: String) {
        requireEditable(entity?.managedObjectModel, "\(type(of: self)).\(what) of '\(name)'")
    }

    open override var description: String {
        "(\(type(of: self))) name \(name), isOptional \(isOptional), isTransient \(isTransient), entity \(entity?.name ?? "nil")"
    }
}

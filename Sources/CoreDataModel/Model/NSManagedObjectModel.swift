import Foundation

/// A managed object model: the entities an app stores, their properties and relationships, the
/// configurations that route entities to stores, and stored fetch request templates.
///
/// Matches Apple's `NSManagedObjectModel`. Build one in code, or load Xcode's model source with
/// ``init(contentsOf:)`` (a `.xcdatamodeld` package or a `.xcdatamodel` folder); both behave the same.
///
/// Threading: a model is edited on one thread, then handed to a coordinator, which freezes it.
/// A frozen model traps on edits and is safe to read from any thread.
open class NSManagedObjectModel: NSObject, @unchecked Sendable {
    /// Whether a coordinator has frozen the model; edits then trap, as Apple's raise.
    package private(set) var isFrozen = false

    private var frozenEntitiesByName: [String: NSEntityDescription]?
    private var frozenDerivationIndex: DerivationIndex?

    /// The model's derived attributes and what recomputes them; `nil` when it has none. Made
    /// once when the model freezes, on every call before.
    package var derivationIndex: DerivationIndex? { isFrozen ? frozenDerivationIndex : DerivationIndex.make(self) }

    /// Creates an empty model.
    public override init() { super.init() }

    /// The model's entities. Assigning sets each entity's ``NSEntityDescription/managedObjectModel``.
    public var entities: [NSEntityDescription] = [] {
        willSet {
            requireEditable(self, "NSManagedObjectModel.entities")
            for old in entities where old.managedObjectModel === self { old.managedObjectModel = nil }
        }
        didSet { for entity in entities { entity.managedObjectModel = self } }
    }

    /// The entities by name.
    public var entitiesByName: [String: NSEntityDescription] {
        if let frozenEntitiesByName { return frozenEntitiesByName }
        return Dictionary(
            entities.compactMap { entity in entity.name.map { ($0, entity) } },
            uniquingKeysWith: { first, _ in first })
    }

    private var configurationMembers: [String: [NSEntityDescription]] = [:]
    private var configurationOrder: [String] = []

    /// The names of the model's configurations, in the order they were added.
    public var configurations: [String] { configurationOrder }

    /// The entities of a configuration; all entities for `nil`; `nil` for an unknown name.
    public func entities(forConfigurationName configuration: String?) -> [NSEntityDescription]? {
        guard let configuration else { return entities }
        return configurationMembers[configuration]
    }

    /// Sets the entities of a configuration, creating the configuration if needed.
    public func setEntities(_ entities: [NSEntityDescription], forConfigurationName configuration: String) {
        requireEditable(self, "NSManagedObjectModel.setEntities(_:forConfigurationName: \(configuration))")
        if configurationMembers[configuration] == nil { configurationOrder.append(configuration) }
        configurationMembers[configuration] = entities
    }

    /// The versioned package (`.xcdatamodeld`) this model is the current version of, when it was
    /// loaded from one: migration looks there for the version a store was saved with.
    package var versionPackageURL: URL?

    /// Identifiers the developer gave this model version (Xcode's model version identifier).
    /// They do not affect compatibility.
    public var versionIdentifiers: Set<AnyHashable> = [] {
        willSet { requireEditable(self, "NSManagedObjectModel.versionIdentifiers") }
    }

    /// The entities' version hashes by entity name; stores record them in their metadata.
    public var entityVersionHashesByName: [String: Data] {
        Dictionary(
            entities.compactMap { entity in entity.name.map { ($0, entity.versionHash) } },
            uniquingKeysWith: { first, _ in first })
    }

    /// A Base64 digest of all entity hashes (Apple's 128-bit `versionChecksum`; see
    /// `Formats/model-version-hash.md` for the exact bytes).
    public var versionChecksum: String { VersionHash.checksum(of: entityVersionHashesByName) }

    /// Whether a store whose metadata is `metadata` can be opened with this model's configuration.
    ///
    /// True when the metadata's `NSStoreModelVersionHashes` holds exactly the configuration's
    /// entities with equal hashes. `nil` names the whole model.
    public func isConfiguration(withName configuration: String?, compatibleWithStoreMetadata metadata: [String: Any]) -> Bool {
        guard let members = entities(forConfigurationName: configuration),
              let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Any]
        else { return false }
        guard stored.count == members.filter({ $0.name != nil }).count else { return false }
        for entity in members {
            guard let name = entity.name else { continue }
            guard let recorded = stored[name] as? Data, entity.matchesVersionHash(recorded) else { return false }
        }
        return true
    }

    /// The model's stored fetch requests by name, as the model describes them.
    public var fetchRequestDescriptionsByName: [String: FetchRequestDescription] = [:] {
        willSet { requireEditable(self, "NSManagedObjectModel fetch request templates") }
    }

    /// Localized names of entities and properties (Apple's `localizationDictionary`).
    public var localizationDictionary: [String: String]? {
        willSet { requireEditable(self, "NSManagedObjectModel.localizationDictionary") }
    }

    /// Checks the model and makes it immutable, as a coordinator does before using it.
    ///
    /// - Throws: ``ModelError`` for an inconsistent model (an inverse that does not point back, a
    ///   constraint on a missing property, an inheritance cycle, …).
    package func freeze() throws(ModelError) {
        if isFrozen { return }
        try ModelConsistency.check(self)
        for entity in entities {
            for index in entity.indexes {
                for element in index.elements where element.property == nil {
                    element.property = entity.propertiesByName[element.propertyName]
                }
            }
        }
        frozenEntitiesByName = entitiesByName
        for entity in entities { entity.freeze() }
        frozenDerivationIndex = DerivationIndex.make(self)
        isFrozen = true
    }

    open override var description: String {
        "(NSManagedObjectModel) entities \(entities.compactMap(\.name)), configurations \(configurations)"
    }
}

/// The metadata key of the entity version hashes a store was saved with (Apple's constant).
public let NSStoreModelVersionHashesKey = "NSStoreModelVersionHashes"
/// The metadata key of the model version identifiers a store was saved with (Apple's constant).
public let NSStoreModelVersionIdentifiersKey = "NSStoreModelVersionIdentifiers"

import Foundation

/// An entity of a managed object model: a named kind of object with properties, optionally
/// inheriting from a superentity.
///
/// Matches Apple's `NSEntityDescription`. ``properties`` and the `…ByName` dictionaries include the
/// properties inherited from superentities (inherited ones first); assigning ``properties`` sets
/// only the entity's own.
///
/// Threading: edit only before the model is handed to a coordinator; after that the entity is
/// immutable (edits trap) and safe to read from any thread. Complexity: the `…ByName` lookups are
/// O(1) once the model is frozen and O(properties) before.
open class NSEntityDescription: NSObject, @unchecked Sendable {
    /// The entity's name, unique within its model.
    public var name: String? { willSet { checkEditable("name") } }

    /// The name of the class instantiated for the entity's objects; `"NSManagedObject"` by default.
    public var managedObjectClassName: String! = "NSManagedObject" {
        willSet { checkEditable("managedObjectClassName") }
    }

    /// Whether the entity has no objects of its own, only through subentities.
    public var isAbstract: Bool = false { willSet { checkEditable("isAbstract") } }

    /// The model the entity belongs to; set when the model's ``NSManagedObjectModel/entities`` are assigned.
    public internal(set) weak var managedObjectModel: NSManagedObjectModel!

    /// The entity this one inherits from; set by assigning the superentity's ``subentities``.
    public internal(set) weak var superentity: NSEntityDescription?

    /// The entities that inherit from this one. Assigning it sets each subentity's ``superentity``.
    public var subentities: [NSEntityDescription] = [] {
        willSet {
            checkEditable("subentities")
            for old in subentities where old.superentity === self { old.superentity = nil }
        }
        didSet { for sub in subentities { sub.superentity = self } }
    }

    private var ownProperties: [NSPropertyDescription] = []

    /// All properties, inherited ones first. Assigning sets the entity's own properties; inherited
    /// properties in the assigned array are recognised and left with their superentity.
    public var properties: [NSPropertyDescription] {
        get {
            if let frozen { return frozen.properties }
            return entityChain(from: self).reversed().flatMap { $0.ownProperties }
        }
        set {
            checkEditable("properties")
            let ancestors = Set(entityChain(from: self).dropFirst().map(ObjectIdentifier.init))
            for old in ownProperties where old.entity === self { old.entity = nil }
            ownProperties = newValue.filter { property in
                guard let owner = property.entity else { return true }
                return !ancestors.contains(ObjectIdentifier(owner))
            }
            for property in ownProperties { property.entity = self }
        }
    }

    /// The properties the entity declares itself, without inherited ones.
    public var declaredProperties: [NSPropertyDescription] { ownProperties }

    /// All properties by name, inherited ones included.
    public var propertiesByName: [String: NSPropertyDescription] {
        if let frozen { return frozen.propertiesByName }
        return Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// All attributes by name, inherited ones included.
    public var attributesByName: [String: NSAttributeDescription] {
        if let frozen { return frozen.attributesByName }
        return propertiesByName.compactMapValues { $0 as? NSAttributeDescription }
    }

    /// All relationships by name, inherited ones included.
    public var relationshipsByName: [String: NSRelationshipDescription] {
        if let frozen { return frozen.relationshipsByName }
        return propertiesByName.compactMapValues { $0 as? NSRelationshipDescription }
    }

    /// The subentities by name (direct subentities only, as Apple's).
    public var subentitiesByName: [String: NSEntityDescription] {
        Dictionary(subentities.compactMap { sub in sub.name.map { ($0, sub) } }, uniquingKeysWith: { first, _ in first })
    }

    /// The relationships of this entity whose destination is `entity`.
    public func relationships(forDestination entity: NSEntityDescription) -> [NSRelationshipDescription] {
        properties.compactMap { $0 as? NSRelationshipDescription }.filter { $0.destinationEntity === entity }
    }

    /// Whether this entity is `entity` or inherits from it.
    public func isKindOf(entity: NSEntityDescription) -> Bool {
        entityChain(from: self).contains { $0 === entity }
    }

    /// Free-form data from the model editor; it does not affect the version hash.
    public var userInfo: [AnyHashable: Any]? { willSet { checkEditable("userInfo") } }

    /// Groups of properties whose values together must be unique among the entity's objects.
    ///
    /// Each inner array holds property names (`String`) or ``NSPropertyDescription``s, as Apple's.
    public var uniquenessConstraints: [[Any]] = [] { willSet { checkEditable("uniquenessConstraints") } }

    /// The fetch indexes a store keeps for the entity.
    public var indexes: [NSFetchIndexDescription] = [] {
        willSet { checkEditable("indexes") }
        didSet { for index in indexes { index.entity = self } }
    }

    /// A string mixed into ``versionHash`` to mark a change the structure alone does not show.
    public var versionHashModifier: String? { willSet { checkEditable("versionHashModifier") } }

    /// The entity's name in an earlier model version (Xcode's `elementID`); used by migration.
    public var renamingIdentifier: String? { willSet { checkEditable("renamingIdentifier") } }

    /// A digest of everything about the entity that affects how its objects are stored: its name,
    /// its superentity's hash, whether it is abstract, its own properties' hashes and its modifier.
    ///
    /// Stores record it; a different hash means the store needs migration. The exact bytes are
    /// specified in `Formats/model-version-hash.md`.
    public var versionHash: Data {
        if let frozen { return frozen.versionHash }
        return VersionHash.of(self)
    }

    public override init() { super.init() }

    // MARK: Frozen state

    /// Derived lookups computed once when the model freezes, so that concurrent readers never
    /// build them at the same time. A class: reading one field must not copy (and retain) all.
    final class FrozenState {
        let properties: [NSPropertyDescription]
        let propertiesByName: [String: NSPropertyDescription]
        let attributesByName: [String: NSAttributeDescription]
        let relationshipsByName: [String: NSRelationshipDescription]
        let validatedProperties: [NSPropertyDescription]
        let versionHash: Data
        let propertyLayout: PropertyLayout
        let layoutProperties: [NSPropertyDescription]
        let layoutAttributes: [NSAttributeDescription?]
        let validatedSlots: [Int]
        let slotTable: EntitySlotTable
        let slotAttributesByName: [String: NSAttributeDescription]
        let entityNumber: EntityNumber

        init(
            properties: [NSPropertyDescription], propertiesByName: [String: NSPropertyDescription],
            attributesByName: [String: NSAttributeDescription], relationshipsByName: [String: NSRelationshipDescription],
            validatedProperties: [NSPropertyDescription], versionHash: Data, propertyLayout: PropertyLayout,
            layoutProperties: [NSPropertyDescription], layoutAttributes: [NSAttributeDescription?]
        ) {
            self.properties = properties
            self.propertiesByName = propertiesByName
            self.attributesByName = attributesByName
            self.relationshipsByName = relationshipsByName
            self.validatedProperties = validatedProperties
            self.versionHash = versionHash
            self.propertyLayout = propertyLayout
            self.layoutProperties = layoutProperties
            self.layoutAttributes = layoutAttributes
            self.validatedSlots = validatedProperties.map { propertyLayout.slot(of: $0.name) ?? -1 }
            self.slotTable = EntitySlotTable(layout: propertyLayout, properties: layoutProperties)
            self.slotAttributesByName = Self.byName(layoutAttributes)
            self.entityNumber = EntityNumber(propertyLayout.entityName)
        }

        static func byName(_ attributes: [NSAttributeDescription?]) -> [String: NSAttributeDescription] {
            Dictionary(attributes.compactMap { $0.map { ($0.name, $0) } }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// The attribute at each slot of ``propertyLayout``, `nil` at a relationship's slot.
    public var layoutAttributes: [NSAttributeDescription?] {
        if let frozen { return frozen.layoutAttributes }
        return layoutProperties.map { $0 as? NSAttributeDescription }
    }

    /// The process-wide number of the entity's name, which store object IDs carry. Made once
    /// when the model freezes; before that, looked up (under a lock) on every call.
    package var entityNumber: EntityNumber {
        if let frozen { return frozen.entityNumber }
        return EntityNumber(name ?? "")
    }

    /// The entity's property layout: one slot per attribute and relationship (transient ones
    /// included, fetched properties left out), inherited properties first. Made once when the
    /// model freezes; before that, a new layout on every call.
    public var propertyLayout: PropertyLayout {
        if let frozen { return frozen.propertyLayout }
        return PropertyLayout(entityName: name ?? "", names: Self.slotted(properties).map(\.name))
    }

    /// The layout, attributes and ``SlotTraits`` of every slot, in one object: made once when
    /// the model freezes; before that, a new table on every call.
    package var slotTable: EntitySlotTable {
        if let frozen { return frozen.slotTable }
        return EntitySlotTable(layout: propertyLayout, properties: layoutProperties)
    }

    /// What the hot paths need of each slot of ``propertyLayout`` (see ``SlotTraits``).
    package var layoutTraits: [SlotTraits] { slotTable.traits }

    /// The property at each slot of ``propertyLayout``.
    public var layoutProperties: [NSPropertyDescription] {
        if let frozen { return frozen.layoutProperties }
        return Self.slotted(properties)
    }

    /// The attribute at each slot by name: ``attributesByName`` with each composite attribute
    /// replaced by its elements (`address.city`), the names stores keep values under.
    package var slotAttributesByName: [String: NSAttributeDescription] {
        if let frozen { return frozen.slotAttributesByName }
        return FrozenState.byName(layoutAttributes)
    }

    /// The properties that take a slot: attributes and relationships (fetched properties are
    /// computed), each composite attribute replaced by its elements, named by key path.
    private static func slotted(_ properties: [NSPropertyDescription]) -> [NSPropertyDescription] {
        var seen = Set<String>()
        return properties.flatMap { property -> [NSPropertyDescription] in
            guard let composite = property as? NSCompositeAttributeDescription else { return [property] }
            return composite.slotElements()
        }.filter { !($0 is NSFetchedPropertyDescription) && seen.insert($0.name).inserted }
    }

    /// The properties an object's validation checks, in the order it reports them: every
    /// property except fetched ones (computed, never saved), sorted by name. Computed once for a
    /// frozen entity, because every validated object asks.
    package var validatedProperties: [NSPropertyDescription] {
        if let frozen { return frozen.validatedProperties }
        return Self.validated(layoutProperties)
    }

    /// The slot in ``propertyLayout`` of each of ``validatedProperties``.
    package var validatedSlots: [Int] {
        if let frozen { return frozen.validatedSlots }
        let layout = propertyLayout
        return validatedProperties.map { layout.slot(of: $0.name) ?? -1 }
    }

    /// Validated by slot: a composite attribute's elements are checked one by one.
    private static func validated(_ slotted: [NSPropertyDescription]) -> [NSPropertyDescription] {
        slotted.sorted { $0.name < $1.name }
    }

    /// Set once, by ``freeze()`` before the model is used, and only read after; unchecked
    /// because every object made and every value read goes through it (the runtime's
    /// exclusivity check was some 80 instructions a read).
    @exclusivity(unchecked) private var frozen: FrozenState?

    func freeze() {
        let props = properties
        let byName = propertiesByName
        // Made once: a composite's element slots are new descriptions on every call.
        let slotted = Self.slotted(props)
        frozen = FrozenState(
            properties: props,
            propertiesByName: byName,
            attributesByName: byName.compactMapValues { $0 as? NSAttributeDescription },
            relationshipsByName: byName.compactMapValues { $0 as? NSRelationshipDescription },
            validatedProperties: Self.validated(slotted),
            versionHash: VersionHash.of(self),
            propertyLayout: PropertyLayout(entityName: name ?? "", names: slotted.map(\.name)),
            layoutProperties: slotted,
            layoutAttributes: slotted.map { $0 as? NSAttributeDescription })
    }

    /// Names the uniqueness constraints refer to, whatever form each element has.
    public var uniquenessConstraintNames: [[String]] {
        uniquenessConstraints.map { group in
            group.compactMap { element in
                if let name = element as? String { return name }
                if let property = element as? NSPropertyDescription { return property.name }
                return nil
            }
        }
    }

    private func checkEditable(_ what: String) {
        requireEditable(managedObjectModel, "NSEntityDescription.\(what) of '\(name ?? "unnamed")'")
    }

    open override var description: String {
        "(NSEntityDescription) name \(name ?? "nil"), managedObjectClassName \(managedObjectClassName ?? "nil"), "
            + "superentity \(superentity?.name ?? "nil"), isAbstract \(isAbstract), properties \(properties.map(\.name))"
    }
}

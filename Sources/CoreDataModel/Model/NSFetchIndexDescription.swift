import CoreDataPredicate
import Foundation

/// An index a store keeps for an entity to answer fetches quickly (Xcode's `<fetchIndex>`).
///
/// Matches Apple's `NSFetchIndexDescription`. Stores build one index per description; the index
/// orders rows by its elements in turn.
open class NSFetchIndexDescription: NSObject, @unchecked Sendable {
    /// The index's name, unique within its entity.
    public var name: String { willSet { requireEditable(entity?.managedObjectModel, "index name") } }

    /// The indexed properties, most significant first.
    public var elements: [NSFetchIndexElementDescription] {
        willSet { requireEditable(entity?.managedObjectModel, "index elements") }
        didSet { adoptElements() }
    }

    /// The rows the index is meant for (Apple's partial index); `nil` for every row.
    ///
    /// The stores here index every row whatever it is: the index answers the same fetches, and
    /// only its size differs from Apple's (see the deviations article).
    public var partialIndexPredicate: CoreDataPredicate.NSPredicate? {
        willSet { requireEditable(entity?.managedObjectModel, "partialIndexPredicate") }
    }

    /// The entity the index belongs to; set when it is added to the entity's ``NSEntityDescription/indexes``.
    public internal(set) weak var entity: NSEntityDescription?

    /// Creates an index with a name and its elements.
    public init(name: String, elements: [NSFetchIndexElementDescription]?) {
        self.name = name
        self.elements = elements ?? []
        super.init()
        adoptElements()
    }

    private func adoptElements() {
        for element in elements { element.indexDescription = self }
    }

    open override var description: String {
        "(NSFetchIndexDescription) name \(name), elements \(elements.map(\.description))"
            + (partialIndexPredicate.map { ", partialIndexPredicate \($0.predicateFormat)" } ?? "")
    }
}

/// One property of a fetch index, with its collation and direction.
open class NSFetchIndexElementDescription: NSObject, @unchecked Sendable {
    /// How values are compared in the index.
    public enum CollationType: UInt, Sendable {
        /// Ordinary ordering of values.
        case binary = 0
        /// A spatial index over a range (Apple's R-tree indexes).
        case rTree = 1
    }

    /// The indexed property, once resolved against the entity.
    public internal(set) weak var property: NSPropertyDescription?

    /// The indexed property's name.
    public let propertyName: String

    /// How values are compared in the index.
    public var collationType: CollationType

    /// Whether the index orders this element ascending.
    public var isAscending: Bool = true

    /// The index this element belongs to.
    public internal(set) weak var indexDescription: NSFetchIndexDescription?

    /// Creates an element for a property.
    public init(property: NSPropertyDescription, collationType: CollationType) {
        self.property = property
        self.propertyName = property.name
        self.collationType = collationType
        super.init()
    }

    /// Creates an element that names its property; the entity resolves the name when the index is added.
    public init(propertyName: String, collationType: CollationType, isAscending: Bool = true) {
        self.propertyName = propertyName
        self.collationType = collationType
        self.isAscending = isAscending
        super.init()
    }

    open override var description: String {
        "\(propertyName) \(collationType == .binary ? "binary" : "rtree") \(isAscending ? "ascending" : "descending")"
    }
}

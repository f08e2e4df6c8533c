import Foundation

/// Which entities of a model have derived attributes, and which relationships carry changes to
/// them; made when the model freezes (a model is immutable from then on).
package final class DerivationIndex: @unchecked Sendable {
    package struct Dependency {
        /// The entity whose objects' changes matter (the relationship's destination).
        package let source: NSEntityDescription
        /// The relationship from `source` back to the objects with the derived attribute.
        package let inverse: NSRelationshipDescription
        /// The entity with the derived attribute.
        package let dependent: NSEntityDescription
    }

    private let derivedEntities: Set<ObjectIdentifier>
    package let dependencies: [Dependency]

    private init(derivedEntities: Set<ObjectIdentifier>, dependencies: [Dependency]) {
        self.derivedEntities = derivedEntities
        self.dependencies = dependencies
    }

    package func derives(_ entity: NSEntityDescription) -> Bool { derivedEntities.contains(ObjectIdentifier(entity)) }

    /// The model's index, or `nil` when it has no derived attribute.
    static func make(_ model: NSManagedObjectModel) -> DerivationIndex? {
        var derived = Set<ObjectIdentifier>()
        var dependencies: [Dependency] = []
        for entity in model.entities {
            let attributes = entity.properties.compactMap { $0 as? NSDerivedAttributeDescription }
            guard !attributes.isEmpty else { continue }
            derived.insert(ObjectIdentifier(entity))
            for attribute in attributes {
                guard let expression = attribute.derivationExpression else { continue }
                for path in DerivationCheck.keyPaths(in: expression) {
                    guard let first = path.split(separator: ".").first.map(String.init),
                          let relationship = entity.relationshipsByName[first],
                          let inverse = relationship.inverseRelationship,
                          let destination = relationship.destinationEntity else { continue }
                    if !dependencies.contains(where: { $0.inverse === inverse && $0.dependent === entity }) {
                        dependencies.append(Dependency(source: destination, inverse: inverse, dependent: entity))
                    }
                }
            }
        }
        return derived.isEmpty ? nil : DerivationIndex(derivedEntities: derived, dependencies: dependencies)
    }
}

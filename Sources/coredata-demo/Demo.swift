import CoreData

/// The README's demo: what a newcomer runs first.
///
/// Today it loads the model shipped as a SwiftPM resource, shows what the loader read and the
/// version hashes a store will record. Saving and fetching objects join it as the object graph
/// and the stores land.
@main
enum Demo {
    static func main() throws {
        guard let url = Bundle.module.url(forResource: "Library", withExtension: "xcdatamodeld") else {
            print("error: the Library model is missing from the demo's resources")
            throw ExitError()
        }
        let model = try NSManagedObjectModel(validatingContentsOf: url)
        print("Loaded \(url.lastPathComponent) with \(model.entities.count) entities (checksum \(model.versionChecksum))")
        for entity in model.entities {
            print("- \(entity.name ?? "?"): \(entity.attributesByName.keys.sorted().joined(separator: ", "))")
            for (name, relationship) in entity.relationshipsByName.sorted(by: { $0.key < $1.key }) {
                let kind = relationship.isToMany ? "to-many" : "to-one"
                print("    \(name) → \(relationship.destinationEntity?.name ?? "?") (\(kind), inverse \(relationship.inverseRelationship?.name ?? "none"), delete rule \(relationship.deleteRule))")
            }
            for rules in entity.attributesByName.sorted(by: { $0.key < $1.key }) where !rules.value.validationRules.isEmpty {
                print("    \(rules.key) must satisfy: \(rules.value.validationRules.map(\.description).joined(separator: " AND "))")
            }
            print("    version hash \(entity.versionHash.base64EncodedString())")
        }
        if let request = model.fetchRequestDescriptionsByName["LongBooks"] {
            print("Fetch request template LongBooks: \(request.entityName) where \(request.predicateFormat ?? "TRUEPREDICATE")")
        }
    }

    struct ExitError: Error {}
}

import CoreData
import CoreDataStorage
import CoreDataXMLStore
import Foundation

/// The XML store side, through the store protocol.
final class XMLUsers: Sendable {
    let store: XMLStore
    let layout: UsersLayout

    init(path: String, model: NSManagedObjectModel) throws {
        store = try XMLStore(path: path, model: model, metadata: StoreMetadata())
        guard let entity = model.entitiesByName["User"] else { fatalError("benchmark model has no User entity") }
        layout = UsersLayout(entity.propertyLayout)
    }

    /// Inserts the users in one save (one rewrite of the file).
    func insert(_ users: ArraySlice<User>) throws {
        let keys = try store.newPrimaryKeys(entityName: "User", count: users.count)
        var rows: [StoreRow] = []
        rows.reserveCapacity(users.count)
        for (key, user) in zip(keys, users) { rows.append(layout.row(key, user)) }
        _ = try store.save(StoreChangeSet(inserted: rows))
    }

    func close() throws { try store.close() }

    /// Opens the file (reading and decoding all of it) and counts the users.
    static func openAndCount(path: String, model: NSManagedObjectModel) throws -> Int {
        let store = try XMLStore(path: path, model: model, metadata: StoreMetadata())
        defer { try? store.close() }
        guard let entity = model.entitiesByName["User"], case .count(let count) = try store.execute(StoreFetchRequest(entity: entity, resultType: .count)) else {
            return 0
        }
        return count
    }
}

import CoreData
import Foundation

/// The binary store through managed objects and a context: what an app's code costs end to end.
final class ManagedUsers {
    let container: NSPersistentContainer

    init(path: String, model: NSManagedObjectModel) throws {
        container = NSPersistentContainer(name: "Bench", managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.type = NSBinaryStoreType
        container.persistentStoreDescriptions = [description]
        var failure: Error?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
    }

    /// Inserts the users in saves of `batch`, resetting the context after each save so memory
    /// stays bounded (the import pattern Apple recommends).
    func insert(_ users: [User], batch: Int) throws {
        let context = container.newBackgroundContext()
        var failure: Error?
        context.performAndWait {
            do {
                guard let entity = container.managedObjectModel.entitiesByName["User"] else { return }
                var start = 0
                while start < users.count {
                    for user in users[start..<min(start + batch, users.count)] {
                        let object = NSManagedObject(entity: entity, insertInto: context)
                        object.setValue(user.name, forKey: "name")
                        object.setValue(user.email, forKey: "email")
                        object.setValue(user.age, forKey: "age")
                        object.setValue(user.score, forKey: "score")
                        object.setValue(Date(timeIntervalSinceReferenceDate: user.created), forKey: "created")
                    }
                    try context.save()
                    context.reset()
                    start += batch
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Fetches every user and reads one attribute of each; returns the total name length.
    func fetchAllReadingName() throws -> Int {
        let context = container.newBackgroundContext()
        var total = 0
        var failure: Error?
        context.performAndWait {
            do {
                let request = NSFetchRequest<NSManagedObject>(entityName: "User")
                for object in try context.fetch(request) {
                    total &+= (object.value(forKey: "name") as? String)?.utf8.count ?? 0
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return total
    }

    /// Counts what a fetched-results controller delivers.
    final class ChangeCounter: NSFetchedResultsControllerDelegate {
        var changes = 0
        func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
            changes += 1
        }
    }

    /// A fetched-results controller over every user sorted by name; `prepare` runs its fetch,
    /// then `body` gets a closure that makes `updates` single-object changes (each its own event:
    /// a change, then `processPendingChanges()`), of the score (the object stays in place) or,
    /// with `moving`, of the name (the object moves). Returns the changes delivered.
    func fetchedResultsUpdates(_ updates: Int, moving: Bool, measure: (() throws -> Void) throws -> Void) throws -> Int {
        let context = container.newBackgroundContext()
        let counter = ChangeCounter()
        var failure: Error?
        context.performAndWait {
            do {
                let request = NSFetchRequest<NSManagedObject>(entityName: "User")
                request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
                let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
                controller.delegate = counter
                try controller.performFetch()
                let objects = controller.fetchedObjects ?? []
                let step = max(1, objects.count / max(1, updates))
                try measure {
                    for index in 0..<min(updates, objects.count) {
                        let object = objects[(index * step) % objects.count]
                        if moving {
                            object.setValue("moved \(index)", forKey: "name")
                        } else {
                            object.setValue(Double(index), forKey: "score")
                        }
                        context.processPendingChanges()
                    }
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return counter.changes
    }

    func close() throws {
        for store in container.persistentStoreCoordinator.persistentStores {
            try container.persistentStoreCoordinator.remove(store)
        }
    }
}

import CoreData
import CoreDataPostgreSQL

/// The README's demo: what a newcomer runs first.
///
/// Loads the `Library` model shipped as a SwiftPM resource, opens a container on the default
/// embedded store (the binary store), saves a few related objects, fetches them back with a
/// predicate and a sort, reopens the store in a new container to show the saves are on disk, and
/// prints each step. The store stays at the printed path (or the path given as the first
/// argument) for the `coredata` CLI to inspect.
///
/// Given a `postgres://user@host:port/database?schema=demo` URL instead of a path, the same
/// steps run on a PostgreSQL store (`NSPostgreSQLStoreType`) in that schema.
@main
enum Demo {
    static func main() throws {
        guard let url = Bundle.module.url(forResource: "Library", withExtension: "xcdatamodeld") else {
            print("error: the Library model is missing from the demo's resources")
            throw ExitError()
        }
        let model = try NSManagedObjectModel(validatingContentsOf: url)
        print("1. Loaded \(url.lastPathComponent): entities \(model.entities.compactMap(\.name).sorted().joined(separator: ", ")) (checksum \(model.versionChecksum))")

        let store = Store(argument: CommandLine.arguments.dropFirst().first)
        let container = NSPersistentContainer(name: "Library", managedObjectModel: model)
        // Start from an empty store each run, so the output is always the same.
        try container.persistentStoreCoordinator.destroyPersistentStore(at: store.url, ofType: store.type)
        store.describe(container.persistentStoreDescriptions.first)
        var loadError: Error?
        container.loadPersistentStores { description, error in
            loadError = error
            print("2. Opened \(store.kind) (type \(description.type)) at \(store.shown)")
        }
        if let loadError { throw loadError }

        let context = container.viewContext
        let books = [
            ("Ada Lovelace", [("Notes on the Analytical Engine", 66)]),
            ("Donald Knuth", [("The Art of Computer Programming", 672), ("Literate Programming", 368)]),
            ("Grace Hopper", [("Understanding Computers", 580)]),
        ]
        for (name, titles) in books {
            let author = NSEntityDescription.insertNewObject(forEntityName: "Author", into: context)
            author.setValue(name, forKey: "name")
            for (title, pages) in titles {
                let book = NSEntityDescription.insertNewObject(forEntityName: "Book", into: context)
                book.setValue(title, forKey: "title")
                book.setValue(Int32(pages), forKey: "pages")
                book.setValue(author, forKey: "author")
            }
        }
        try context.save()
        print("3. Saved \(books.count) authors and \(books.flatMap(\.1).count) books (each book linked to its author)")

        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Book")
            request.predicate = NSPredicate(format: "pages > %d AND author.name != %@", 300, "Nobody")
            request.sortDescriptors = [NSSortDescriptor(key: "pages", ascending: false)]
            let long = try reader.fetch(request)
            print("4. Fetched books with more than 300 pages, longest first, in a fresh context:")
            for book in long {
                let author = (book.value(forKey: "author") as? NSManagedObject)?.value(forKey: "name") as? String ?? "?"
                print("   - \(book.value(forKey: "title") as? String ?? "?") (\(book.value(forKey: "pages") as? Int32 ?? 0) pages) by \(author)")
            }
            let knuth = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Author")).first { ($0.value(forKey: "name") as? String) == "Donald Knuth" }
            let count = (knuth?.value(forKey: "books") as? Set<NSManagedObject>)?.count ?? 0
            print("5. Donald Knuth has \(count) books through the inverse relationship")
        }

        // Close the store and open it again in a new container: the saves came from the disk.
        for store in container.persistentStoreCoordinator.persistentStores {
            try container.persistentStoreCoordinator.remove(store)
        }
        let again = NSPersistentContainer(name: "Library", managedObjectModel: model)
        store.describe(again.persistentStoreDescriptions.first)
        again.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        let authors = try again.viewContext.count(for: NSFetchRequest<NSManagedObject>(entityName: "Author"))
        let stored = try again.viewContext.count(for: NSFetchRequest<NSManagedObject>(entityName: "Book"))
        print("6. Reopened the store in a new container: \(authors) authors and \(stored) books were \(store.place)")
        for store in again.persistentStoreCoordinator.persistentStores {
            try again.persistentStoreCoordinator.remove(store)
        }
    }

    struct ExitError: Error {}

    /// Where the demo keeps its objects: the binary store at a path, or a PostgreSQL store when
    /// the argument is a `postgres://` URL.
    struct Store {
        var type: String
        var url: URL

        init(argument: String?) {
            if let argument, let url = URL(string: argument), let scheme = url.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" {
                type = NSPostgreSQLStoreType
                self.url = url
            } else {
                type = NSBinaryStoreType
                url = argument.map { URL(fileURLWithPath: $0) } ?? NSPersistentContainer.defaultDirectoryURL().appendingPathComponent("Library.store")
            }
        }

        var isPostgreSQL: Bool { type == NSPostgreSQLStoreType }
        var kind: String { isPostgreSQL ? "a PostgreSQL store" : "the default embedded store" }
        var place: String { isPostgreSQL ? "on the server" : "on disk" }

        /// The path, or the URL without its password.
        var shown: String {
            guard isPostgreSQL else { return url.path }
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), components.password != nil else { return url.absoluteString }
            components.password = "***"
            return components.url?.absoluteString ?? url.absoluteString
        }

        func describe(_ description: NSPersistentStoreDescription?) {
            description?.type = type
            description?.url = url
        }
    }
}

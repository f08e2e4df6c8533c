import CoreData

/// The README's demo: what a newcomer runs first.
///
/// Loads the `Library` model shipped as a SwiftPM resource, opens a container on the default
/// embedded store in a temporary folder, saves a few related objects, fetches them back with a
/// predicate and a sort, and prints each step.
@main
enum Demo {
    static func main() throws {
        guard let url = Bundle.module.url(forResource: "Library", withExtension: "xcdatamodeld") else {
            print("error: the Library model is missing from the demo's resources")
            throw ExitError()
        }
        let model = try NSManagedObjectModel(validatingContentsOf: url)
        print("1. Loaded \(url.lastPathComponent): entities \(model.entities.compactMap(\.name).sorted().joined(separator: ", ")) (checksum \(model.versionChecksum))")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let container = NSPersistentContainer(name: "Library", managedObjectModel: model)
        container.persistentStoreDescriptions.first?.url = folder.appendingPathComponent("Library.store")
        var loadError: Error?
        container.loadPersistentStores { description, error in
            loadError = error
            print("2. Opened the default embedded store (type \(description.type); the binary file store replaces it when it lands)")
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
    }

    struct ExitError: Error {}
}

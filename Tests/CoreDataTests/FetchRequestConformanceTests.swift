import CoreData
import Foundation
import XCTest

private typealias NSPredicate = CoreData.NSPredicate
private typealias NSExpression = CoreData.NSExpression
private typealias NSSortDescriptor = CoreData.NSSortDescriptor

/// Every `NSFetchRequest` property, run against every store (``StoreKind``) with real data.
///
/// The library: authors Ada (rating 5), Alan (2) and Grace (4); books Notes (Ada, 120 pages,
/// 10.0), Engines (Ada, 400 pages, no price), Computing (Alan, 30 pages, 5.5) and the novel Story
/// (Grace, 350 pages, 12.0); tags swift (Notes, Engines) and data (Notes).
final class FetchRequestConformanceTests: XCTestCase {
    private struct Library {
        var ada, alan, grace: NSManagedObject
        var notes, engines, computing, story: NSManagedObject
    }

    @discardableResult
    private func seedLibrary(_ context: NSManagedObjectContext) throws -> Library {
        let ada = context.make("Author", ["name": "Ada", "rating": Int16(5)])
        let alan = context.make("Author", ["name": "Alan", "rating": Int16(2)])
        let grace = context.make("Author", ["name": "Grace", "rating": Int16(4)])
        let notes = context.make("Book", ["title": "Notes", "pages": Int32(120), "price": 10.0, "author": ada])
        let engines = context.make("Book", ["title": "Engines", "pages": Int32(400), "author": ada])
        let computing = context.make("Book", ["title": "Computing", "pages": Int32(30), "price": 5.5, "author": alan])
        let story = context.make("Novel", ["title": "Story", "pages": Int32(350), "price": 12.0, "author": grace, "genre": "fiction"])
        let swift = context.make("Tag", ["label": "swift"])
        let data = context.make("Tag", ["label": "data"])
        notes.setValue(Set([swift, data]), forKey: "tags")
        engines.setValue(Set([swift]), forKey: "tags")
        try context.save()
        return Library(ada: ada, alan: alan, grace: grace, notes: notes, engines: engines, computing: computing, story: story)
    }

    private func makeRequest(_ entity: String, _ format: String? = nil, _ args: Any..., sortedBy key: String? = nil) -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        if let format { request.predicate = NSPredicate(format: format, argumentArray: args) }
        if let key { request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)] }
        return request
    }

    private func dictionaryRequest(_ entity: String, _ properties: [Any], sortedBy key: String? = nil) -> NSFetchRequest<NSDictionary> {
        let request = NSFetchRequest<NSDictionary>(entityName: entity)
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = properties
        if let key { request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)] }
        return request
    }

    private func expression(_ name: String, _ function: String, _ keyPath: String, _ type: NSAttributeType) -> NSExpressionDescription {
        let description = NSExpressionDescription()
        description.name = name
        description.expression = NSExpression(forFunction: function, arguments: [NSExpression(forKeyPath: keyPath)])
        description.expressionResultType = type
        return description
    }

    // MARK: fetchBatchSize

    func testFetchBatchSizeReadsValuesBatchByBatch() {
        forEachStore { kind, container in
            let writer = container.viewContext
            for index in 0..<25 { writer.make("Author", ["name": String(format: "A%02d", index), "rating": Int16(1)]) }
            try writer.save()

            let reader = container.newBackgroundContext()
            let authors = try reader.performAndWait { () throws -> [NSManagedObject] in
                let request = makeRequest("Author", sortedBy: "name")
                request.fetchBatchSize = 10
                let authors = try reader.fetch(request)
                XCTAssertEqual(authors.count, 25, "[\(kind)] every match is in the array")
                try require(authors, count: 25, "fetch with fetchBatchSize")
                XCTAssertTrue(authors.allSatisfy(\.isFault), "[\(kind)] no values are read by the fetch")
                XCTAssertEqual(authors[12].value(forKey: "name") as? String, "A12", "[\(kind)]")
                XCTAssertEqual(authors.map(\.isFault), Array(repeating: true, count: 10) + Array(repeating: false, count: 10) + Array(repeating: true, count: 5),
                               "[\(kind)] using one object reads its whole batch, and only it")
                return authors
            }

            // A later batch is read when it is used, so it sees a save made after the fetch.
            let late = try XCTUnwrap(try writer.all("Author", where: "name == 'A22'").first)
            late.setValue(Int16(4), forKey: "rating")
            try writer.save()
            reader.performAndWait {
                XCTAssertEqual(authors[22].value(forKey: "rating") as? Int16, 4, "[\(kind)]")
                XCTAssertEqual(authors[21].isFault, false, "[\(kind)] the third batch came in with it")
                XCTAssertEqual(names(authors), (0..<25).map { String(format: "A%02d", $0) }, "[\(kind)] order kept")
            }
        }
    }

    func testFetchBatchSizeWithPendingChangesAndLimits() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seedLibrary(context)
            context.reset()
            context.make("Author", ["name": "Barbara", "rating": Int16(3)])
            let request = makeRequest("Author", sortedBy: "name")
            request.fetchBatchSize = 2
            request.fetchOffset = 1
            request.fetchLimit = 3
            XCTAssertEqual(names(try context.fetch(request)), ["Alan", "Barbara", "Grace"], "[\(kind)]")
        }
    }

    // MARK: includesPropertyValues, returnsObjectsAsFaults

    func testIncludesPropertyValuesFalseReadsOnlyIdentities() {
        forEachStore { kind, container in
            try seedLibrary(container.viewContext)
            let withoutValues = container.newBackgroundContext()
            let bare = try withoutValues.performAndWait { () throws -> NSManagedObject in
                let request = makeRequest("Author", "name == 'Ada'")
                request.includesPropertyValues = false
                let found = try XCTUnwrap(try withoutValues.fetch(request).first)
                XCTAssertTrue(found.isFault, "[\(kind)]")
                return found
            }
            let ada = try XCTUnwrap(try container.viewContext.all("Author", where: "name == 'Ada'").first)
            ada.setValue(Int16(1), forKey: "rating")
            try container.viewContext.save()

            withoutValues.performAndWait {
                XCTAssertEqual(bare.value(forKey: "rating") as? Int16, 1, "[\(kind)] values are read when the fault fires")
            }
        }
    }

    /// With property values (the default) a fetched fault keeps the values the fetch read.
    /// A user's incremental store may ignore `includesPropertyValues` (see ``StoreKind``).
    func testFetchedFaultsKeepTheValuesTheFetchRead() {
        forEachStore { kind, container in
            try seedLibrary(container.viewContext)
            let withValues = container.newBackgroundContext()
            let cached = try withValues.performAndWait { () throws -> NSManagedObject in
                let found = try XCTUnwrap(try withValues.fetch(makeRequest("Author", "name == 'Ada'")).first)
                XCTAssertTrue(found.isFault, "[\(kind)] a fault, but its values came with the fetch")
                return found
            }
            let ada = try XCTUnwrap(try container.viewContext.all("Author", where: "name == 'Ada'").first)
            ada.setValue(Int16(1), forKey: "rating")
            try container.viewContext.save()

            withValues.performAndWait {
                XCTAssertEqual(cached.value(forKey: "rating") as? Int16, 5, "[\(kind)] values are the ones the fetch read")
            }
        }
    }

    /// `stalenessInterval`: a fault fills from the row its fetch read while the interval allows
    /// (a negative one, the default, always), and reads the store's current row once more than
    /// the interval has passed (`0`: at once). Reading a to-one's ID from such a fault goes the
    /// same way. Objects already filled keep their values.
    func testStalenessIntervalDecidesWhetherAFetchedFaultReadsTheStoreAgain() {
        forEachStore { kind, container in
            try seedLibrary(container.viewContext)
            let contexts = [-1, 0, 0.5, 3_600, .infinity].map { (interval: TimeInterval) -> NSManagedObjectContext in
                let context = container.newBackgroundContext()
                context.stalenessInterval = interval
                return context
            }
            XCTAssertEqual(contexts.map(\.stalenessInterval), [-1, 0, 0.5, 3_600, .infinity])
            // Each context: Ada and the book Notes as faults holding the fetch's rows, and Grace filled.
            let fetched = try contexts.map { context in
                try context.performAndWait { () throws -> (ada: NSManagedObject, notes: NSManagedObject, grace: NSManagedObject) in
                    let ada = try XCTUnwrap(try context.fetch(makeRequest("Author", "name == 'Ada'")).first)
                    let notes = try XCTUnwrap(try context.fetch(makeRequest("Book", "title == 'Notes'")).first)
                    let grace = try XCTUnwrap(try context.fetch(makeRequest("Author", "name == 'Grace'")).first)
                    XCTAssertTrue(ada.isFault && notes.isFault, "[\(kind)]")
                    XCTAssertEqual(grace.value(forKey: "rating") as? Int16, 4, "[\(kind)]")
                    return (ada, notes, grace)
                }
            }
            let view = container.viewContext
            let ada = try XCTUnwrap(try view.all("Author", where: "name == 'Ada'").first)
            let alan = try XCTUnwrap(try view.all("Author", where: "name == 'Alan'").first)
            let grace = try XCTUnwrap(try view.all("Author", where: "name == 'Grace'").first)
            ada.setValue(Int16(1), forKey: "rating")
            grace.setValue(Int16(3), forKey: "rating")
            try XCTUnwrap(try view.all("Book", where: "title == 'Notes'").first).setValue(alan, forKey: "author")
            try view.save()
            Thread.sleep(forTimeInterval: 0.6)
            // A fetch now, in the 0.5 s context, first expires the rows of its fetches before
            // the sleep; its own row counts from now.
            let halfSecond = contexts[2]
            let fetchedAt = ContinuousClock.now
            let again = try halfSecond.performAndWait { try XCTUnwrap(try halfSecond.fetch(makeRequest("Author", "name == 'Alan'")).first) }

            // Stale for 0 and 0.5 s (0.6 s have passed); fresh for any age, an hour and forever.
            let expectsCurrent = [false, true, true, false, false]
            for index in contexts.indices {
                let context = contexts[index], objects = fetched[index], interval = context.stalenessInterval
                context.performAndWait {
                    let authorIDs = objects.notes.objectIDs(forRelationshipNamed: "author")
                    XCTAssertEqual(authorIDs, [expectsCurrent[index] ? alan.objectID : ada.objectID], "[\(kind)] interval \(interval): the to-one's ID")
                    XCTAssertEqual(objects.ada.value(forKey: "rating") as? Int16, expectsCurrent[index] ? 1 : 5, "[\(kind)] interval \(interval)")
                    XCTAssertEqual(objects.grace.value(forKey: "rating") as? Int16, 4, "[\(kind)] interval \(interval): a filled object keeps its values")
                }
            }

            // That fault, fired well within 0.5 s of its fetch, keeps its fetch's row. (On a
            // machine so loaded that 0.4 s passed, the row may rightly have expired: not checked.)
            alan.setValue(Int16(3), forKey: "rating")
            try view.save()
            halfSecond.performAndWait {
                let rating = again.value(forKey: "rating") as? Int16
                if ContinuousClock.now - fetchedAt < .milliseconds(400) {
                    XCTAssertEqual(rating, 2, "[\(kind)] a fault fetched after the rows expired keeps its own fetch's row")
                }
            }
        }
    }

    func testReturnsObjectsAsFaults() {
        forEachStore { kind, container in
            try seedLibrary(container.viewContext)
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let faults = try reader.fetch(makeRequest("Book", sortedBy: "title"))
                XCTAssertTrue(faults.allSatisfy(\.isFault), "[\(kind)] faults by default")

                let filled = makeRequest("Book", sortedBy: "title")
                filled.returnsObjectsAsFaults = false
                let books = try reader.fetch(filled)
                XCTAssertTrue(zip(books, faults).allSatisfy { $0 === $1 }, "[\(kind)] the same objects")
                XCTAssertTrue(books.allSatisfy { !$0.isFault }, "[\(kind)] already registered faults are filled too")
                XCTAssertEqual(names(books, "title"), ["Computing", "Engines", "Notes", "Story"], "[\(kind)]")

                let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Tag")
                ids.resultType = .managedObjectIDResultType
                ids.returnsObjectsAsFaults = false
                XCTAssertEqual(try reader.fetch(ids).count, 2, "[\(kind)] ignored for object IDs")
            }
        }
    }

    // MARK: includesSubentities, includesPendingChanges

    func testIncludesSubentitiesWithStoredAndPendingObjects() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seedLibrary(context)
            context.make("Novel", ["title": "Pending", "pages": Int32(10)])
            let all = makeRequest("Book", sortedBy: "title")
            XCTAssertEqual(names(try context.fetch(all), "title"), ["Computing", "Engines", "Notes", "Pending", "Story"], "[\(kind)]")
            XCTAssertEqual(try context.count(for: all), 5, "[\(kind)]")
            XCTAssertTrue(try context.fetch(all).filter { $0.entity.name == "Novel" }.allSatisfy { $0 is NovelObject }, "[\(kind)] subentity objects have their class")

            let own = makeRequest("Book", sortedBy: "title")
            own.includesSubentities = false
            XCTAssertEqual(names(try context.fetch(own), "title"), ["Computing", "Engines", "Notes"], "[\(kind)]")
            XCTAssertEqual(try context.count(for: own), 3, "[\(kind)]")
            own.includesPendingChanges = false
            XCTAssertEqual(try context.count(for: own), 3, "[\(kind)]")
        }
    }

    func testIncludesPendingChangesInEveryResultType() {
        forEachStore { kind, container in
            let context = container.viewContext
            let library = try seedLibrary(context)
            context.make("Book", ["title": "Draft", "pages": Int32(500), "author": library.alan])
            library.notes.setValue(Int32(450), forKey: "pages")
            context.delete(library.engines)

            let long = makeRequest("Book", "pages > 300", sortedBy: "title")
            XCTAssertEqual(names(try context.fetch(long), "title"), ["Draft", "Notes", "Story"], "[\(kind)] insert, update and delete reflected")
            XCTAssertEqual(try context.count(for: long), 3, "[\(kind)]")

            let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Book")
            ids.predicate = NSPredicate(format: "pages > 300")
            ids.resultType = .managedObjectIDResultType
            let found = try context.fetch(ids)
            XCTAssertEqual(found.count, 3, "[\(kind)]")
            XCTAssertTrue(found.contains(library.notes.objectID) && found.contains(library.story.objectID) && !found.contains(library.engines.objectID), "[\(kind)]")

            let count = NSFetchRequest<NSNumber>(entityName: "Book")
            count.predicate = NSPredicate(format: "pages > 300")
            count.resultType = .countResultType
            XCTAssertEqual(try context.fetch(count).first?.intValue, 3, "[\(kind)]")

            long.includesPendingChanges = false
            XCTAssertEqual(names(try context.fetch(long), "title"), ["Engines", "Story"], "[\(kind)] the store's state")
            XCTAssertEqual(try context.count(for: long), 2, "[\(kind)]")
            count.includesPendingChanges = false
            XCTAssertEqual(try context.fetch(count).first?.intValue, 2, "[\(kind)]")

            let titles = dictionaryRequest("Book", ["title"], sortedBy: "title")
            titles.predicate = NSPredicate(format: "pages > 300")
            XCTAssertEqual(try context.fetch(titles).compactMap { $0["title"] as? String }, ["Engines", "Story"],
                           "[\(kind)] dictionaries describe the store, as Apple documents")
        }
    }

    // MARK: Dictionaries: propertiesToFetch, aggregates, grouping, having, distinct

    func testDictionaryColumnsFromNamesKeyPathsAndDescriptions() {
        forEachStore { kind, container in
            let context = container.viewContext
            let library = try seedLibrary(context)
            context.make("Book", ["title": "Anonymous", "pages": Int32(1)])
            try context.save()
            let book = container.managedObjectModel.entitiesByName["Book"]
            let request = dictionaryRequest(
                "Book", ["title", "author.name", book?.attributesByName["pages"] as Any, book?.relationshipsByName["author"] as Any], sortedBy: "title")
            let rows = try context.fetch(request)
            XCTAssertEqual(rows.count, 5, "[\(kind)]")
            try require(rows, count: 5, "dictionary fetch of Book")
            XCTAssertEqual(rows[0]["title"] as? String, "Anonymous")
            XCTAssertNil(rows[0]["author.name"], "[\(kind)] nil values are left out")
            XCTAssertNil(rows[0]["author"], "[\(kind)]")
            XCTAssertEqual(rows[1]["title"] as? String, "Computing")
            XCTAssertEqual(rows[1]["author.name"] as? String, "Alan", "[\(kind)] a key path through a to-one relationship")
            XCTAssertEqual(rows[1]["pages"] as? Int32, 30, "[\(kind)] an attribute description")
            XCTAssertEqual(rows[1]["author"] as? NSManagedObjectID, library.alan.objectID, "[\(kind)] a to-one relationship is its destination's ID")
            let fresh = container.newBackgroundContext()
            try fresh.performAndWait {
                XCTAssertEqual(try fresh.fetch(request).count, 5, "[\(kind)]")
                XCTAssertTrue(fresh.registeredObjects.isEmpty, "[\(kind)] a dictionary fetch registers no objects")
            }

            let all = NSFetchRequest<NSDictionary>(entityName: "Book")
            all.resultType = .dictionaryResultType
            all.predicate = NSPredicate(format: "title == 'Notes'")
            let notes = try XCTUnwrap(try context.fetch(all).first)
            XCTAssertEqual(Set(notes.allKeys.compactMap { $0 as? String }), ["title", "pages", "price"], "[\(kind)] every attribute with a value; never transient ones")

            let objectColumn = NSExpressionDescription()
            objectColumn.name = "object"
            objectColumn.expression = NSExpression.expressionForEvaluatedObject()
            objectColumn.expressionResultType = .objectIDAttributeType
            let withSelf = dictionaryRequest("Book", ["title", objectColumn], sortedBy: "title")
            withSelf.predicate = NSPredicate(format: "title == 'Notes'")
            XCTAssertEqual(try context.fetch(withSelf).first?["object"] as? NSManagedObjectID, library.notes.objectID, "[\(kind)] SELF gives the object's ID")
        }
    }

    func testAggregatesOverAllMatchingObjects() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seedLibrary(context)
            let request = dictionaryRequest("Book", [
                expression("total", "sum:", "pages", .integer64AttributeType),
                expression("mean", "average:", "pages", .doubleAttributeType),
                expression("shortest", "min:", "pages", .integer32AttributeType),
                expression("longest", "max:", "pages", .integer32AttributeType),
                expression("books", "count:", "title", .integer64AttributeType),
                expression("priced", "count:", "price", .integer64AttributeType),
                expression("maxPrice", "max:", "price", .doubleAttributeType),
            ])
            let rows = try context.fetch(request)
            XCTAssertEqual(rows.count, 1, "[\(kind)] one dictionary for the whole result")
            let row = try XCTUnwrap(rows.first)
            XCTAssertEqual(row["total"] as? Int64, 900, "[\(kind)]")
            XCTAssertEqual(row["mean"] as? Double, 225, "[\(kind)]")
            XCTAssertEqual(row["shortest"] as? Int32, 30, "[\(kind)]")
            XCTAssertEqual(row["longest"] as? Int32, 400, "[\(kind)]")
            XCTAssertEqual(row["books"] as? Int64, 4, "[\(kind)]")
            XCTAssertEqual(row["priced"] as? Int64, 3, "[\(kind)] nil values are not counted")
            XCTAssertEqual(row["maxPrice"] as? Double, 12, "[\(kind)]")

            request.predicate = NSPredicate(format: "author.name == 'Ada'")
            XCTAssertEqual(try context.fetch(request).first?["total"] as? Int64, 520, "[\(kind)] over the matching objects")
            request.predicate = NSPredicate(format: "pages > 1000")
            XCTAssertEqual(try context.fetch(request).first?["books"] as? Int64, 0, "[\(kind)] no matches still give one dictionary")
        }
    }

    func testGroupByWithAggregatesHavingAndPaging() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seedLibrary(context)
            let request = dictionaryRequest("Book", [
                "author.name", expression("count", "count:", "title", .integer64AttributeType), expression("total", "sum:", "pages", .integer64AttributeType),
            ], sortedBy: "author.name")
            request.propertiesToGroupBy = ["author.name"]
            let rows = try context.fetch(request)
            XCTAssertEqual(rows.compactMap { $0["author.name"] as? String }, ["Ada", "Alan", "Grace"], "[\(kind)] one dictionary per group, sorted")
            XCTAssertEqual(rows.compactMap { $0["count"] as? Int64 }, [2, 1, 1], "[\(kind)]")
            XCTAssertEqual(rows.compactMap { $0["total"] as? Int64 }, [520, 30, 350], "[\(kind)]")
            XCTAssertEqual(try context.count(for: request), 3, "[\(kind)] count(for:) counts the groups")

            request.havingPredicate = NSPredicate(format: "count > 1")
            XCTAssertEqual(try context.fetch(request).compactMap { $0["author.name"] as? String }, ["Ada"], "[\(kind)] HAVING on a column")
            request.havingPredicate = NSPredicate(format: "$total < 500")
            XCTAssertEqual(try context.fetch(request).compactMap { $0["author.name"] as? String }, ["Alan", "Grace"], "[\(kind)] HAVING on a variable")

            request.havingPredicate = nil
            request.fetchOffset = 1
            request.fetchLimit = 1
            XCTAssertEqual(try context.fetch(request).compactMap { $0["author.name"] as? String }, ["Alan"], "[\(kind)] offset and limit apply to groups")

            let byEntity = dictionaryRequest("Book", [expression("count", "count:", "title", .integer64AttributeType)])
            byEntity.propertiesToGroupBy = [try XCTUnwrap(container.managedObjectModel.entitiesByName["Book"]?.relationshipsByName["author"])]
            byEntity.propertiesToFetch?.append(try XCTUnwrap(container.managedObjectModel.entitiesByName["Book"]?.relationshipsByName["author"]))
            XCTAssertEqual(try context.fetch(byEntity).count, 3, "[\(kind)] grouped by a relationship description")
        }
    }

    /// Aggregates over to-many key paths and predicates through to-many relationships, in
    /// dictionary fetches: a store that loads relationships lazily (an incremental store whose
    /// nodes leave them out) answers them too.
    func testDictionaryAggregatesThroughToManyRelationships() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seedLibrary(context)
            let request = dictionaryRequest("Author", [
                "name", expression("pages", "sum:", "books.pages", .integer64AttributeType), expression("books", "count:", "books", .integer64AttributeType),
            ], sortedBy: "name")
            request.propertiesToGroupBy = ["name"]
            let rows = try context.fetch(request)
            XCTAssertEqual(rows.compactMap { $0["name"] as? String }, ["Ada", "Alan", "Grace"], "[\(kind)]")
            XCTAssertEqual(rows.compactMap { $0["pages"] as? Int64 }, [520, 30, 350], "[\(kind)] sums through the to-many relationship")
            XCTAssertEqual(rows.compactMap { $0["books"] as? Int64 }, [2, 1, 1], "[\(kind)] counts its destinations")

            let tagged = dictionaryRequest("Author", ["name"], sortedBy: "name")
            tagged.predicate = NSPredicate(format: "ANY books.tags.label == 'swift'")
            XCTAssertEqual(try context.fetch(tagged).compactMap { $0["name"] as? String }, ["Ada"], "[\(kind)] a predicate through two to-many steps")
        }
    }

    func testReturnsDistinctResults() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seedLibrary(context)
            let request = dictionaryRequest("Book", ["author.name"], sortedBy: "author.name")
            XCTAssertEqual(try context.fetch(request).count, 4, "[\(kind)]")
            request.returnsDistinctResults = true
            XCTAssertEqual(try context.fetch(request).compactMap { $0["author.name"] as? String }, ["Ada", "Alan", "Grace"], "[\(kind)]")
            request.fetchLimit = 2
            XCTAssertEqual(try context.fetch(request).count, 2, "[\(kind)] the limit counts distinct dictionaries")
        }
    }

    func testInvalidDictionaryRequestsFailWithTheirReason() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seedLibrary(context)
            func assertFails(_ request: NSFetchRequest<NSDictionary>, mentioning words: [String], line: UInt = #line) {
                XCTAssertThrowsError(try context.fetch(request), "[\(kind)]", line: line) { error in
                    let message = (error as NSError).localizedDescription
                    for word in words { XCTAssertTrue(message.contains(word), "[\(kind)] '\(word)' not in: \(message)", line: line) }
                }
            }
            let ungrouped = dictionaryRequest("Book", ["title", expression("count", "count:", "title", .integer64AttributeType)])
            ungrouped.propertiesToGroupBy = ["author.name"]
            assertFails(ungrouped, mentioning: ["'title'", "propertiesToGroupBy"])
            let having = dictionaryRequest("Book", ["title"])
            having.havingPredicate = NSPredicate(format: "title != nil")
            assertFails(having, mentioning: ["havingPredicate", "propertiesToGroupBy"])
            assertFails(dictionaryRequest("Author", ["books"]), mentioning: ["to-many", "'books'"])
            assertFails(dictionaryRequest("Book", ["subtitle"]), mentioning: ["subtitle", "Book"])
            assertFails(dictionaryRequest("Book", [42]), mentioning: ["propertiesToFetch"])
        }
    }

    // MARK: relationshipKeyPathsForPrefetching

    func testRelationshipKeyPathsForPrefetching() {
        forEachStore { kind, container in
            try seedLibrary(container.viewContext)
            let plain = container.newBackgroundContext()
            try plain.performAndWait {
                _ = try plain.fetch(makeRequest("Author", "name == 'Ada'"))
                XCTAssertTrue(plain.registeredObjects.allSatisfy { $0.entity.name == "Author" }, "[\(kind)] without prefetching only authors are registered")
            }
            let reader = container.newBackgroundContext()
            try reader.performAndWait {
                let request = makeRequest("Author", "name == 'Ada'")
                request.relationshipKeyPathsForPrefetching = ["books", "books.tags"]
                let authors = try reader.fetch(request)
                XCTAssertEqual(authors.count, 1, "[\(kind)]")
                let books = reader.registeredObjects.filter { $0.entity.name == "Book" }
                let tags = reader.registeredObjects.filter { $0.entity.name == "Tag" }
                XCTAssertEqual(books.count, 2, "[\(kind)] Ada's books are registered")
                XCTAssertEqual(tags.count, 2, "[\(kind)] and their tags")
                XCTAssertTrue(books.union(tags).allSatisfy { !$0.isFault }, "[\(kind)] prefetched objects are not faults")
                XCTAssertEqual(Set(names(Array(books), "title")), ["Notes", "Engines"], "[\(kind)]")
                let ada = try XCTUnwrap(authors.first)
                XCTAssertEqual(Set(((ada.value(forKey: "books") as? Set<NSManagedObject>) ?? []).map(ObjectIdentifier.init)), Set(books.map(ObjectIdentifier.init)),
                               "[\(kind)] the relationship holds the prefetched objects")

                let bad = self.makeRequest("Author")
                bad.relationshipKeyPathsForPrefetching = ["name"]
                XCTAssertThrowsError(try reader.fetch(bad)) { error in
                    XCTAssertTrue((error as NSError).localizedDescription.contains("'name'"), "\(error)")
                }
            }
        }
    }

    // MARK: count(for:)

    func testCountForFetchRequest() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seedLibrary(context)
            XCTAssertEqual(try context.count(for: makeRequest("Book")), 4, "[\(kind)]")
            XCTAssertEqual(try context.count(for: makeRequest("Book", "pages >= %d", 120)), 3, "[\(kind)]")
            XCTAssertEqual(try context.count(for: makeRequest("Author", "ANY books.tags.label == 'swift'")), 1, "[\(kind)]")
            context.make("Book", ["title": "Draft", "pages": Int32(999)])
            XCTAssertEqual(try context.count(for: makeRequest("Book", "pages >= %d", 120)), 4, "[\(kind)] pending insert")
            let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Book")
            ids.resultType = .managedObjectIDResultType
            XCTAssertEqual(try context.count(for: ids), 5, "[\(kind)] the result type does not matter")
            XCTAssertThrowsError(try context.count(for: makeRequest("Nope"))) { error in
                XCTAssertTrue((error as NSError).localizedDescription.contains("'Nope'"))
            }
        }
    }

    // MARK: Templates and fetched properties

    func testFetchRequestTemplatesWithSubstitutionVariables() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seedLibrary(context)
            let model = container.managedObjectModel
            XCTAssertEqual(model.fetchRequestTemplate(forName: "AuthorsRatedAtLeast")?.predicate?.predicateFormat, "rating >= $MIN")
            XCTAssertNotNil(model.fetchRequestTemplatesByName["AuthorsRatedAtLeast"])
            XCTAssertNil(model.fetchRequestTemplate(forName: "Nope"))
            let request = try XCTUnwrap(model.fetchRequestFromTemplate(withName: "AuthorsRatedAtLeast", substitutionVariables: ["MIN": 4]))
            XCTAssertEqual(request.predicate?.predicateFormat, "rating >= 4")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            XCTAssertEqual(names(try context.fetch(request).compactMap { $0 as? NSManagedObject }), ["Ada", "Grace"], "[\(kind)]")
            XCTAssertEqual(model.fetchRequestTemplate(forName: "AuthorsRatedAtLeast")?.predicate?.predicateFormat, "rating >= $MIN", "the template is unchanged")
        }
    }

    func testFetchedPropertiesAreFetchedCachedAndRefreshed() {
        forEachStore { kind, container in
            let context = container.viewContext
            try seedLibrary(context)
            context.reset()
            let ada = try XCTUnwrap(try context.all("Author", where: "name == 'Ada'").first)
            XCTAssertEqual(names(ada.value(forKey: "longBooks") as? [NSManagedObject] ?? [], "title"), ["Engines"], "[\(kind)]")
            let grace = try XCTUnwrap(try context.all("Author", where: "name == 'Grace'").first)
            XCTAssertEqual(names(grace.value(forKey: "longBooks") as? [NSManagedObject] ?? [], "title"), ["Story"], "[\(kind)] subentities count")
            let alan = try XCTUnwrap(try context.all("Author", where: "name == 'Alan'").first)
            XCTAssertEqual((alan.value(forKey: "longBooks") as? [Any])?.count, 0, "[\(kind)]")

            context.make("Book", ["title": "Sequel", "pages": Int32(500), "author": ada])
            try context.save()
            XCTAssertEqual(names(ada.value(forKey: "longBooks") as? [NSManagedObject] ?? [], "title"), ["Engines"], "[\(kind)] kept until refreshed, as Apple's")
            context.refresh(ada, mergeChanges: false)
            XCTAssertEqual(Set(names(ada.value(forKey: "longBooks") as? [NSManagedObject] ?? [], "title")), ["Engines", "Sequel"], "[\(kind)]")
        }
    }
}

// Code written the way Apple-platform Core Data code observes objects and reads values (issue
// 20): a view model observing a managed object's key with addObserver(_:forKeyPath:) and
// observeValue(forKeyPath:of:change:context:), block-based observe(\.name), Observation
// tracking, `await context.perform(schedule:)`, and the casts Apple code writes on values Core
// Data hands back through Any. Foundation, XCTest and CoreData are imported side by side.
import Foundation
import Observation
import XCTest
import CoreData

final class Playlist: NSManagedObject {
    @Managed var title: String
    @Managed var plays: Int64
    @Managed var tracks: Set<Track>
}

final class Track: NSManagedObject {
    @Managed var name: String
    @Managed var seconds: Int16
    @Managed var playlist: Playlist?
}

/// A view model that keeps a label in step with a playlist's title, as a UIKit/AppKit
/// controller does with key-value observing.
final class PlaylistTitleLabel: NSObject {
    private(set) var text = ""
    private(set) var updates = 0
    /// A unique context pointer, as Apple's samples make with the address of a static.
    private let observationContext = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

    deinit { observationContext.deallocate() }

    func bind(to playlist: Playlist) {
        playlist.addObserver(self, forKeyPath: "title", options: [.initial, .new], context: observationContext)
    }

    func unbind(from playlist: Playlist) {
        playlist.removeObserver(self, forKeyPath: "title", context: observationContext)
    }

    // Apple platforms: `override func observeValue(…)` (NSObject declares it). Linux's NSObject
    // has no such method: the same method without `override`, and the NSKeyValueObserving
    // conformance below. Shared code writes `#if canImport(ObjectiveC) override #endif`-style
    // twin declarations around one body.
    #if canImport(ObjectiveC)
    override func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
        handle(keyPath, change, context)
    }
    #else
    func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
        handle(keyPath, change, context)
    }
    #endif

    private func handle(_ keyPath: String?, _ change: [NSKeyValueChangeKey: Any]?, _ context: UnsafeMutableRawPointer?) {
        guard context == observationContext, keyPath == "title" else { return }
        text = change?[.newKey] as? String ?? ""
        updates += 1
    }
}

#if !canImport(ObjectiveC)
extension PlaylistTitleLabel: NSKeyValueObserving {}
#endif

final class AppleObservationStyleTests: XCTestCase {
    private func makeContainer() throws -> NSPersistentContainer {
        let playlist = NSEntityDescription()
        playlist.name = "Playlist"
        playlist.managedObjectClassName = "Playlist"
        let title = NSAttributeDescription()
        title.name = "title"
        title.attributeType = .stringAttributeType
        let plays = NSAttributeDescription()
        plays.name = "plays"
        plays.attributeType = .integer64AttributeType
        plays.defaultValue = Int64(0)

        let track = NSEntityDescription()
        track.name = "Track"
        track.managedObjectClassName = "Track"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let seconds = NSAttributeDescription()
        seconds.name = "seconds"
        seconds.attributeType = .integer16AttributeType
        seconds.defaultValue = Int16(0)

        let tracks = NSRelationshipDescription()
        tracks.name = "tracks"
        tracks.maxCount = 0
        let owner = NSRelationshipDescription()
        owner.name = "playlist"
        owner.maxCount = 1
        tracks.destinationEntity = track
        tracks.inverseRelationship = owner
        owner.destinationEntity = playlist
        owner.inverseRelationship = tracks

        playlist.properties = [title, plays, tracks]
        track.properties = [name, seconds, owner]
        let model = NSManagedObjectModel()
        model.entities = [playlist, track]

        let container = NSPersistentContainer(name: "Music", managedObjectModel: model)
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        NSManagedObject.registerSubclasses(Playlist.self, Track.self)
        return container
    }

    func testAControllerObservesATitleWithKeyValueObserving() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let playlist = Playlist(context: context)
        playlist.title = "Morning"
        try context.save()

        let label = PlaylistTitleLabel()
        label.bind(to: playlist)
        XCTAssertEqual(label.text, "Morning")
        playlist.title = "Evening"
        XCTAssertEqual(label.text, "Evening")

        // Another context renames it; the merge reaches the label.
        let background = container.newBackgroundContext()
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: background, queue: nil) { note in
            nonisolated(unsafe) let note = note
            context.performAndWait { context.mergeChanges(fromContextDidSave: note) }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try context.save()
        try background.performAndWait {
            let other = try background.existingObject(with: playlist.objectID) as? Playlist
            other?.title = "Night"
            try background.save()
        }
        XCTAssertEqual(label.text, "Night")
        label.unbind(from: playlist)
        playlist.title = "Later"
        XCTAssertEqual(label.text, "Night")
    }

    func testBlockBasedObserveOfATypedProperty() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let playlist = Playlist(context: context)
        playlist.title = "Mix"
        var counts: [Int] = []
        let observation = playlist.observe(\.tracks, options: [.new]) { playlist, change in
            counts.append(change.newValue?.count ?? 0)
        }
        let track = Track(context: context)
        track.name = "Intro"
        track.playlist = playlist
        XCTAssertEqual(counts, [1], "the inverse side of track.playlist")
        observation.invalidate()
        context.delete(track)
        XCTAssertEqual(counts, [1])
    }

    func testObservationTrackingOfAManagedObject() throws {
        let container = try makeContainer()
        let context = container.viewContext
        context.tracksObservationAccess = true
        let playlist = Playlist(context: context)
        playlist.title = "Focus"
        final class Changes: @unchecked Sendable { var count = 0 }
        let changes = Changes()
        let title = withObservationTracking { playlist.title } onChange: { changes.count += 1 }
        XCTAssertEqual(title, "Focus")
        playlist.plays += 1
        XCTAssertEqual(changes.count, 0)
        playlist.title = "Deep Focus"
        XCTAssertEqual(changes.count, 1)
    }

    /// The non-async `perform(_:)` (inside an async function Swift picks the async overload).
    private func enqueue(_ context: NSManagedObjectContext, _ block: @escaping @Sendable () -> Void) {
        context.perform(block)
    }

    @MainActor
    func testPerformScheduleImmediateAndEnqueued() async throws {
        let container = try makeContainer()
        let context = container.viewContext
        final class Log: @unchecked Sendable { var entries: [String] = [] }
        let log = Log()
        enqueue(context) { log.entries.append("queued") }
        // On the main actor a main-queue context's queue is the caller's: runs at once.
        await context.perform(schedule: .immediate) { log.entries.append("immediate") }
        XCTAssertEqual(log.entries, ["immediate"])
        await context.perform(schedule: .enqueued) { log.entries.append("enqueued") }
        XCTAssertEqual(log.entries, ["immediate", "queued", "enqueued"])

        let background = container.newBackgroundContext()
        let order = Log()
        enqueue(background) { order.entries.append("first") }
        let title: String = await background.perform(schedule: .immediate) {
            order.entries.append("second")
            return "done"
        }
        XCTAssertEqual(title, "done")
        XCTAssertEqual(order.entries, ["first", "second"], "off the queue, immediate is enqueued too")
    }

    func testCastsAppleCodeWritesOnValuesCoreDataReturns() throws {
        let container = try makeContainer()
        let context = container.viewContext
        let playlist = Playlist(context: context)
        playlist.title = "Run"
        for seconds in [Int16(100), Int16(200)] {
            let track = Track(context: context)
            track.name = "t\(seconds)"
            track.seconds = seconds
            track.playlist = playlist
        }
        try context.save()

        XCTAssertEqual(playlist.value(forKeyPath: "tracks.@count") as? Int, 2)
        XCTAssertEqual(playlist.value(forKeyPath: "tracks.@sum.seconds") as? Int, 300)
        XCTAssertEqual(playlist.value(forKeyPath: "tracks.@avg.seconds") as? Double, 150)
        XCTAssertEqual((playlist.value(forKey: "tracks") as? Set<NSManagedObject>)?.count, 2)
        XCTAssertEqual((playlist.value(forKey: "tracks") as? NSSet)?.count, 2)

        let request = NSFetchRequest<NSDictionary>(entityName: "Track")
        request.resultType = .dictionaryResultType
        let total = NSExpressionDescription()
        total.name = "total"
        total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "seconds")])
        total.expressionResultType = .integer64AttributeType
        request.propertiesToFetch = [total]
        let row = try context.fetch(request).first
        XCTAssertEqual(row?["total"] as? Int, 300)
        XCTAssertEqual((row?["total"] as? NSNumber)?.intValue, 300)

        let predicate = NSPredicate(format: "seconds > 150 AND playlist.plays == 0")
        XCTAssertEqual(predicate.predicateFormat, "seconds > 150 AND playlist.plays == 0")
        XCTAssertEqual(NSPredicate(format: "sum(tracks.seconds) > 10").predicateFormat, "sum:(tracks.seconds) > 10", "Apple's printed form")
        XCTAssertEqual(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Track")), 2)
        XCTAssertEqual(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Track")).filter { predicate.evaluate(with: $0) }.count, 1)

        let update = NSBatchUpdateRequest(entityName: "Playlist")
        update.propertiesToUpdate = ["plays": 5]
        update.resultType = .updatedObjectsCountResultType
        let result = try context.execute(update) as? NSBatchUpdateResult
        XCTAssertEqual(result?.result as? Int, 1)
        XCTAssertEqual(result?.result as? Int64, 1)
    }
}

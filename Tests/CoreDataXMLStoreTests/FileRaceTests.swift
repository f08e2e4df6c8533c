import CoreData
import CoreDataBinaryStore
import CoreDataFileSystem
import CoreDataStorage
import CoreDataTestSupport
import CoreDataXMLFormat
import CoreDataXMLStore
import Foundation
import XCTest

/// Issue 19, "processes cannot race": what a second process (or a second handle, since locks are
/// per open file) and a hostile folder can do to a store's files. Each of these failed before:
/// creation truncated a log another writer held, saves followed symbolic links and reset the
/// store's permissions to 0644, two XML writers replaced each other's saves, and
/// `destroyPersistentStore` deleted a store another coordinator had open.
final class FileRaceTests: XCTestCase {
    typealias M = BinaryTestModel

    private func binaryOptions(exclusive: Bool = false, timeout: Double = 0.2) -> BinaryStoreOptions {
        var options = BinaryStoreOptions()
        options.backgroundCheckpoints = false
        options.exclusiveAccess = exclusive
        options.lockTimeout = timeout
        return options
    }

    private func xmlOptions(timeout: Double = 0.2) -> XMLStoreOptions {
        var options = XMLStoreOptions()
        options.lockTimeout = timeout
        return options
    }

    private func mode(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    /// A writer with exclusive access created a new store without the log's lock and truncated
    /// whatever log was there, even one another process held while writing it.
    func testCreatingAStoreWaitsForTheLogsLockAndNeverCutsALockedLog() throws {
        let path = M.temporaryPath()
        let bytes = [UInt8](repeating: 0xA5, count: 300)
        try Data(bytes).write(to: URL(fileURLWithPath: path + "-wal"))
        let holder = try POSIXFileSystem().open(path + "-wal", create: false, readOnly: false)
        XCTAssertTrue(try holder.lock(exclusive: true, wait: false))
        XCTAssertThrowsError(try BinaryStore(path: path, model: M.model, metadata: StoreMetadata(), options: binaryOptions(exclusive: true))) { error in
            XCTAssertTrue("\(error)".contains("locked by another process"), "\(error)")
        }
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))), bytes, "the held log is untouched")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        holder.unlock()
        holder.close()
        let store = try BinaryStore(path: path, model: M.model, metadata: StoreMetadata(), options: binaryOptions(exclusive: true))
        _ = try store.save(StoreChangeSet(inserted: [M.tag(1, "t")]))
        try store.close()
    }

    /// Every file the store creates or truncates is opened without following a link: a link
    /// planted as the log, the snapshot lock or a compaction's file never redirects a write.
    func testSymbolicLinksBesideTheStoreAreNeverFollowed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("links-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let victim = folder.appendingPathComponent("victim").path
        let original = Data("do not touch".utf8)
        try original.write(to: URL(fileURLWithPath: victim))

        let path = folder.appendingPathComponent("store").path
        try FileManager.default.createSymbolicLink(atPath: path + "-wal", withDestinationPath: victim)
        XCTAssertThrowsError(try BinaryStore(path: path, model: M.model, metadata: StoreMetadata(), options: binaryOptions()), "a linked log is refused")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: victim)), original)
        try FileManager.default.removeItem(atPath: path + "-wal")

        let store = try BinaryStore(path: path, model: M.model, metadata: StoreMetadata(), options: binaryOptions())
        _ = try store.save(StoreChangeSet(inserted: [M.tag(1, "t")]))
        // A leftover name is removed (unlink never follows), then the file is made anew.
        try FileManager.default.createSymbolicLink(atPath: path + "-compact", withDestinationPath: victim)
        try store.compact()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: victim)), original)
        XCTAssertEqual(try store.row(for: StoreObjectID(entityName: "Tag", primaryKey: 1))?.values["label"], .string("t"))
        try store.close()

        let xml = folder.appendingPathComponent("store.xml").path
        let xmlStore = try XMLStore(path: xml, model: M.model, metadata: StoreMetadata(), options: xmlOptions())
        try FileManager.default.createSymbolicLink(atPath: xml + XMLStoreLayout.pendingFileSuffix, withDestinationPath: victim)
        _ = try xmlStore.save(StoreChangeSet(inserted: [M.tag(1, "t")]))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: victim)), original)
        XCTAssertFalse(FileManager.default.fileExists(atPath: xml + XMLStoreLayout.pendingFileSuffix), "the leftover name was removed")
        try xmlStore.close()
    }

    /// A user's `chmod 600` on the store reached no file made beside it, and every compaction
    /// or XML save replaced the store with a 0644 file.
    func testNewFilesKeepTheStoresPermissions() throws {
        let path = M.temporaryPath()
        let first = try BinaryStore(path: path, model: M.model, metadata: StoreMetadata(), options: binaryOptions())
        try first.close()
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let store = try BinaryStore(path: path, model: M.model, metadata: StoreMetadata(), options: binaryOptions())
        _ = try store.save(StoreChangeSet(inserted: [M.tag(1, "t")]))
        XCTAssertEqual(try mode(path + "-wal"), 0o600, "the log made beside a 0600 store")
        XCTAssertEqual(try mode(path + "-shm"), 0o600)
        try store.compact()
        XCTAssertEqual(try mode(path), 0o600, "the compacted file replaced the store with its permissions")
        try store.close()

        let xml = M.temporaryPath("store.xml")
        let xmlStore = try XMLStore(path: xml, model: M.model, metadata: StoreMetadata(), options: xmlOptions())
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: xml)
        _ = try xmlStore.save(StoreChangeSet(inserted: [M.tag(1, "t")]))
        XCTAssertEqual(try mode(xml), 0o640, "a save keeps the XML store's permissions")
        try xmlStore.close()
    }

    /// Two XML handles each renamed their own file over the store: the second save silently
    /// replaced the first. Now the second is refused (nothing written) until it reopens.
    func testAnXMLSaveNeverReplacesAnotherProcesssSave() throws {
        let path = M.temporaryPath("store.xml")
        let first = try XMLStore(path: path, model: M.model, metadata: StoreMetadata(), options: xmlOptions())
        let second = try XMLStore(path: path, model: M.model, metadata: StoreMetadata(), options: xmlOptions())
        _ = try first.save(StoreChangeSet(inserted: [M.tag(1, "first")]))
        XCTAssertThrowsError(try second.save(StoreChangeSet(inserted: [M.tag(2, "second")]))) { error in
            XCTAssertTrue("\(error)".contains("saved by another process"), "\(error)")
        }
        let reread = try XMLStore(path: path, model: M.model, metadata: StoreMetadata(), options: xmlOptions())
        XCTAssertEqual(try reread.row(for: StoreObjectID(entityName: "Tag", primaryKey: 1))?.values["label"], .string("first"))
        _ = try reread.save(StoreChangeSet(inserted: [M.tag(2, "second")]))
        _ = try first.execute(StoreFetchRequest(entity: try XCTUnwrap(M.model.entitiesByName["Tag"])))
        for store in [first, second, reread] { try store.close() }
        let last = try XMLStore(path: path, model: M.model, metadata: StoreMetadata(), options: xmlOptions())
        XCTAssertNotNil(try last.row(for: StoreObjectID(entityName: "Tag", primaryKey: 1)))
        XCTAssertNotNil(try last.row(for: StoreObjectID(entityName: "Tag", primaryKey: 2)))
        try last.close()
    }

    /// A save waits for another process's save (its lock) and fails with a lock conflict after
    /// the timeout instead of writing beside it.
    func testAnXMLSaveWaitsForTheLockThenFails() throws {
        let path = M.temporaryPath("store.xml")
        let store = try XMLStore(path: path, model: M.model, metadata: StoreMetadata(), options: xmlOptions(timeout: 0.3))
        let holder = try POSIXFileSystem().open(path, create: false, readOnly: true)
        XCTAssertTrue(try holder.lock(exclusive: true, wait: false))
        let started = Date()
        XCTAssertThrowsError(try store.save(StoreChangeSet(inserted: [M.tag(1, "t")]))) { error in
            XCTAssertTrue("\(error)".contains("locked by another process"), "\(error)")
        }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.25)
        holder.unlock()
        holder.close()
        _ = try store.save(StoreChangeSet(inserted: [M.tag(1, "t")]))
        try store.close()
    }

    /// `destroyPersistentStore` removed the files of a store another coordinator had open, which
    /// then went on saving into files no one could open. It now refuses, and deletes the store
    /// once it is closed; the XML store is deleted under its lock.
    func testDestroyingAStoreThatIsOpenElsewhereIsRefused() throws {
        let url = URL(fileURLWithPath: M.temporaryPath())
        let owner = NSPersistentStoreCoordinator(managedObjectModel: M.model)
        let store = try owner.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: url)
        let other = NSPersistentStoreCoordinator(managedObjectModel: M.model)
        XCTAssertThrowsError(try other.destroyPersistentStore(at: url, ofType: NSBinaryStoreType, options: [NSPersistentStoreTimeoutOption: 0.2])) { error in
            XCTAssertTrue((error as NSError).localizedDescription.contains("locked by another process"), (error as NSError).localizedDescription)
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: url.path))
        try owner.remove(store)
        try other.destroyPersistentStore(at: url, ofType: NSBinaryStoreType)
        for suffix in ["", "-wal", "-shm"] { XCTAssertFalse(FileManager.default.fileExists(atPath: url.path + suffix), suffix) }

        let xml = URL(fileURLWithPath: M.temporaryPath("store.xml"))
        let xmlCoordinator = NSPersistentStoreCoordinator(managedObjectModel: M.model)
        try xmlCoordinator.addPersistentStore(ofType: NSXMLStoreType, configurationName: nil, at: xml)
        try xmlCoordinator.destroyPersistentStore(at: xml, ofType: NSXMLStoreType)
        XCTAssertFalse(FileManager.default.fileExists(atPath: xml.path))
    }
}

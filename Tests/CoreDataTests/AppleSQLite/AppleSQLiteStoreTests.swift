import CoreData
import Foundation
import XCTest

/// Apple's SQLite store (`Formats/apple-sqlite-store.md`): the stores Core Data saved on Apple
/// platforms (`apple-compiled/SampleModel_V1.sqlite`, `_V2.sqlite`) open with the source and the
/// compiled model, every object and relationship checked against the `sqlite3` command-line tool
/// reading the same file; what we write is read back by `sqlite3` in Apple's layout.
final class AppleSQLiteStoreTests: XCTestCase {
    static let fixtures = MigrationFixtures.compiledSamplePackage.deletingLastPathComponent()

    /// A writable copy of a fixture store in a fresh folder.
    private func copy(_ name: String) throws -> URL {
        let url = try MigrationFixtures.folder().appendingPathComponent(name)
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent(name), to: url)
        // The fixture folder is read-only on CI machines: a copy must be writable to open.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        return url
    }

    /// Rows the `sqlite3` tool prints for `sql` (`|`-separated), the independent reader.
    private func sqlite3(_ url: URL, _ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", "-readonly", url.path, sql]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "sqlite3 failed: \(String(decoding: message, as: UTF8.self))", file: file, line: line)
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    private func sourceModel(_ version: String) throws -> NSManagedObjectModel {
        try XcodeModelPackage(contentsOf: MigrationFixtures.samplePackage).loadModel(version: version)
    }

    private func compiledModel(_ version: String) throws -> NSManagedObjectModel {
        try XCTUnwrap(NSManagedObjectModel(contentsOf: MigrationFixtures.compiledSamplePackage.appendingPathComponent("\(version).mom")))
    }

    private func open(_ url: URL, model: NSManagedObjectModel, type: String = NSSQLiteStoreType) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    private func fetch(_ entity: String, _ context: NSManagedObjectContext, _ predicate: String? = nil) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        if let predicate { request.predicate = NSPredicate(format: predicate) }
        return try context.fetch(request)
    }

    private func key(_ object: NSManagedObject) -> Int64 {
        Int64(object.objectID.uriRepresentation().lastPathComponent.dropFirst()) ?? -1
    }

    // MARK: Reading Apple's files

    func testVersion1StoreOpensWithTheSourceAndTheCompiledModel() throws {
        let url = try copy("SampleModel_V1.sqlite")
        for (label, model) in [("source", try sourceModel("SampleModel")), ("compiled", try compiledModel("SampleModel"))] {
            let context = try open(url, model: model)
            // Counts, each against sqlite3's reading of the same file.
            let cars = try fetch("Car", context)
            XCTAssertEqual(cars.count, Int(try sqlite3(url, "SELECT count(*) FROM ZCAR").first ?? ""), label)
            XCTAssertEqual(cars.count, 125, label)
            XCTAssertEqual(try fetch("SportCar", context).count, Int(try sqlite3(url, "SELECT count(*) FROM ZCAR WHERE Z_ENT IN (2, 3)").first ?? ""), label)
            XCTAssertEqual(try fetch("ExpensiveSportCar", context).count, Int(try sqlite3(url, "SELECT count(*) FROM ZCAR WHERE Z_ENT = 3").first ?? ""), label)
            let people = try fetch("Person", context)
            XCTAssertEqual(people.count, 20, label)

            // Every car's attributes and owner, row by row.
            var expected: [Int64: [String]] = [:]
            for line in try sqlite3(url, "SELECT Z_PK, Z_ENT, ZMAKER, ZMODEL, ZNUMBERPLATE, coalesce(ZOWNER, ''), coalesce(ZISLIMITEDEDITION, '') FROM ZCAR") {
                let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                expected[Int64(fields[0]) ?? -1] = Array(fields.dropFirst())
            }
            let entityNames = ["1": "Car", "2": "SportCar", "3": "ExpensiveSportCar"]
            for car in cars {
                let row = try XCTUnwrap(expected[key(car)], "\(label): car \(key(car)) is not in the file")
                XCTAssertEqual(car.entity.name, entityNames[row[0]], label)
                XCTAssertEqual(car.value(forKey: "maker") as? String, row[1], label)
                XCTAssertEqual(car.value(forKey: "model") as? String, row[2], label)
                XCTAssertEqual(car.value(forKey: "numberPlate") as? String, row[3], label)
                let owner = car.value(forKey: "owner") as? NSManagedObject
                XCTAssertEqual(owner.map { String(key($0)) } ?? "", row[4], label)
                if row[0] == "3" { XCTAssertEqual((car.value(forKey: "isLimitedEdition") as? Bool).map { $0 ? "1" : "0" } ?? "", row[5], label) }
            }
            // Every person's attributes and cars: the to-many side, from the cars' foreign keys.
            var people1: [Int64: [String]] = [:]
            for line in try sqlite3(url, "SELECT Z_PK, ZFIRSTNAME, ZLASTNAME, ZUPDATEDAT, hex(ZID) FROM ZPERSON") {
                let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                people1[Int64(fields[0]) ?? -1] = Array(fields.dropFirst())
            }
            var carsOf: [Int64: Set<Int64>] = [:]
            for line in try sqlite3(url, "SELECT ZOWNER, Z_PK FROM ZCAR WHERE ZOWNER IS NOT NULL") {
                let fields = line.split(separator: "|").compactMap { Int64($0) }
                carsOf[fields[0], default: []].insert(fields[1])
            }
            XCTAssertFalse(carsOf.isEmpty)
            for person in people {
                let row = try XCTUnwrap(people1[key(person)])
                XCTAssertEqual(person.value(forKey: "firstName") as? String, row[0], label)
                XCTAssertEqual(person.value(forKey: "lastName") as? String, row[1], label)
                let updatedAt = try XCTUnwrap(person.value(forKey: "updatedAt") as? Date)
                XCTAssertEqual(updatedAt.timeIntervalSinceReferenceDate, Double(row[2]) ?? .nan, accuracy: 1e-6, label)
                let id = try XCTUnwrap(person.value(forKey: "id") as? UUID)
                XCTAssertEqual(withUnsafeBytes(of: id.uuid) { $0.map { String(format: "%02X", $0) }.joined() }, row[3], label)
                let cars = (person.value(forKey: "cars") as? Set<NSManagedObject>) ?? []
                XCTAssertEqual(Set(cars.map(key)), carsOf[key(person)] ?? [], label)
            }
            // A predicate through the relationship, answered from the same rows.
            let owner = try XCTUnwrap(try sqlite3(url, "SELECT p.ZFIRSTNAME, count(*) FROM ZCAR c JOIN ZPERSON p ON p.Z_PK = c.ZOWNER GROUP BY p.Z_PK ORDER BY p.Z_PK LIMIT 1").first)
            let parts = owner.split(separator: "|").map(String.init)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
            request.predicate = NSPredicate(format: "owner.firstName == %@", parts[0])
            XCTAssertEqual(try context.count(for: request), Int(parts[1]), label)
        }
    }

    func testVersion2StoreOpensWithTheRenamedEntity() throws {
        let url = try copy("SampleModel_V2.sqlite")
        for (label, model) in [("source", try sourceModel("SampleModel2")), ("compiled", try compiledModel("SampleModel2"))] {
            let context = try open(url, model: model)
            // Z_PRIMARYKEY still says ExpensiveSportCar: LuxuryCar's renaming identifier finds it.
            XCTAssertEqual(try fetch("LuxuryCar", context).count, Int(try sqlite3(url, "SELECT count(*) FROM ZCAR WHERE Z_ENT = 3").first ?? ""), label)
            XCTAssertEqual(try fetch("Car", context).count, 125, label)
            XCTAssertEqual(try fetch("Person", context).count, 20, label)
            let limited = try fetch("LuxuryCar", context, "isLimitedEdition == YES").count
            XCTAssertEqual(limited, Int(try sqlite3(url, "SELECT count(*) FROM ZCAR WHERE Z_ENT = 3 AND ZISLIMITEDEDITION = 1").first ?? ""), label)
        }
    }

    func testAStoreOfAnotherModelVersionIsRefusedAsIncompatible() throws {
        let url = try copy("SampleModel_V1.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: try sourceModel("SampleModel2"))
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)) { error in
            XCTAssertEqual((error as NSError).code, NSPersistentStoreIncompatibleVersionHashError, "\(error)")
        }
        // Nothing was written: the file is byte for byte the fixture.
        XCTAssertEqual(try Data(contentsOf: url), try Data(contentsOf: Self.fixtures.appendingPathComponent("SampleModel_V1.sqlite")))
    }

    func testMetadataIsReadWithoutAModel() throws {
        let url = try copy("SampleModel_V1.sqlite")
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        XCTAssertEqual(metadata[NSStoreTypeKey] as? String, "SQLite")
        XCTAssertEqual(metadata[NSStoreUUIDKey] as? String, "753753D3-A961-4901-AB05-8CC48B1D3853")
        let hashes = try XCTUnwrap(metadata[NSStoreModelVersionHashesKey] as? [String: Any])
        XCTAssertEqual(Set(hashes.keys), ["Car", "SportCar", "ExpensiveSportCar", "Person"])
        XCTAssertEqual((hashes["Car"] as? Data)?.count, 32)
    }

    func testApplesVersionHashesDecideCompatibility() throws {
        let url = try copy("SampleModel_V1.sqlite")
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        XCTAssertTrue(try sourceModel("SampleModel").isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        XCTAssertTrue(try compiledModel("SampleModel").isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        XCTAssertFalse(try sourceModel("SampleModel2").isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    func testAutomaticMigrationKeepsApplesLayout() throws {
        let url = try copy("SampleModel_V1.sqlite")
        // Loaded from its package, the model knows the versions a migration searches.
        let v2 = try XCTUnwrap(NSManagedObjectModel(contentsOf: try MigrationFixtures.samplePackage(current: "SampleModel2")))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v2)
        _ = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        XCTAssertEqual(try fetch("Car", context).count, 125)
        XCTAssertEqual(try fetch("LuxuryCar", context).count, 5)
        XCTAssertEqual(try fetch("Person", context).count, 20)
        // Still an SQLite store, in version 2's layout, with version 2's hashes as Apple computes them.
        XCTAssertEqual(try sqlite3(url, "SELECT count(*) FROM ZCAR"), ["125"])
        XCTAssertEqual(try sqlite3(url, "SELECT Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT"), ["Car", "SportCar", "LuxuryCar", "Person"])
        XCTAssertEqual(try sqlite3(url, "SELECT count(*) FROM pragma_table_info('ZCAR') WHERE name = 'ZCOLOR'"), ["0"])
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let apple = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: Self.fixtures.appendingPathComponent("SampleModel_V2.sqlite"))
        XCTAssertEqual(metadata[NSStoreModelVersionHashesKey] as? [String: Data], apple[NSStoreModelVersionHashesKey] as? [String: Data])
        XCTAssertEqual(try sqlite3(url, "PRAGMA integrity_check"), ["ok"])
    }

    // MARK: Writing in Apple's layout

    func testSavesAreWrittenInApplesLayout() throws {
        let url = try copy("SampleModel_V1.sqlite")
        let context = try open(url, model: try sourceModel("SampleModel"))
        let changed = try XCTUnwrap(try fetch("Car", context).min { key($0) < key($1) })
        let changedKey = key(changed)
        changed.setValue("Changed", forKey: "model")
        let deleted = try XCTUnwrap(try fetch("Car", context).max { key($0) < key($1) })
        let deletedKey = key(deleted)
        context.delete(deleted)
        let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        person.setValue("Ada", forKey: "firstName")
        person.setValue("Lovelace", forKey: "lastName")
        person.setValue(Date(timeIntervalSinceReferenceDate: 1000.5), forKey: "updatedAt")
        let id = UUID()
        person.setValue(id, forKey: "id")
        let car = NSEntityDescription.insertNewObject(forEntityName: "ExpensiveSportCar", into: context)
        car.setValue("Analytical", forKey: "maker")
        car.setValue("AE-1", forKey: "numberPlate")
        car.setValue(true, forKey: "isLimitedEdition")
        car.setValue(person, forKey: "owner")
        try context.save()

        // The independent reader sees Apple's layout.
        XCTAssertEqual(try sqlite3(url, "SELECT Z_ENT, Z_OPT, ZFIRSTNAME, ZLASTNAME, ZUPDATEDAT, hex(ZID) FROM ZPERSON WHERE Z_PK = \(key(person))"),
                       ["4|1|Ada|Lovelace|1000.5|\(withUnsafeBytes(of: id.uuid) { $0.map { String(format: "%02X", $0) }.joined() })"])
        XCTAssertEqual(try sqlite3(url, "SELECT Z_ENT, Z_OPT, ZMAKER, ZNUMBERPLATE, ZISLIMITEDEDITION, ZOWNER FROM ZCAR WHERE Z_PK = \(key(car))"),
                       ["3|1|Analytical|AE-1|1|\(key(person))"])
        XCTAssertEqual(try sqlite3(url, "SELECT ZMODEL, Z_OPT FROM ZCAR WHERE Z_PK = \(changedKey)"), ["Changed|2"])
        XCTAssertEqual(try sqlite3(url, "SELECT count(*) FROM ZCAR WHERE Z_PK = \(deletedKey)"), ["0"])
        // Keys come from the hierarchy's counter, which only the root's row keeps (Z_MAX).
        XCTAssertEqual(try sqlite3(url, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT"), ["1|126", "2|0", "3|0", "4|21"])
        XCTAssertEqual(key(car), 126)
        XCTAssertEqual(key(person), 21)
        XCTAssertEqual(try sqlite3(url, "PRAGMA integrity_check"), ["ok"])
        // Apple's hashes stay in the file's metadata.
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let original = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: Self.fixtures.appendingPathComponent("SampleModel_V1.sqlite"))
        XCTAssertEqual(metadata[NSStoreModelVersionHashesKey] as? [String: Data], original[NSStoreModelVersionHashesKey] as? [String: Data])

        // A second coordinator reads the saves back.
        let reread = try open(url, model: try compiledModel("SampleModel"))
        let ada = try XCTUnwrap(try fetch("Person", reread, "firstName == 'Ada'").first)
        XCTAssertEqual(ada.value(forKey: "id") as? UUID, id)
        let cars = try XCTUnwrap(ada.value(forKey: "cars") as? Set<NSManagedObject>)
        XCTAssertEqual(cars.map { $0.value(forKey: "numberPlate") as? String }, ["AE-1"])
        XCTAssertEqual(try fetch("Car", reread).count, 125)
    }

    func testANewStoreHasApplesTablesAndColumns() throws {
        let url = try MigrationFixtures.folder().appendingPathComponent("New.sqlite")
        let context = try open(url, model: try sourceModel("SampleModel"), type: NSAppleSQLiteStoreType)
        let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        person.setValue("Grace", forKey: "firstName")
        person.setValue(Date(), forKey: "updatedAt")
        person.setValue(UUID(), forKey: "id")
        try context.save()
        // The tables and columns Core Data made for the same model, name for name and type for type.
        let fixture = Self.fixtures.appendingPathComponent("SampleModel_V1.sqlite")
        for table in ["ZCAR", "ZPERSON", "Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"] {
            let sql = "SELECT name, type FROM pragma_table_info('\(table)') ORDER BY name"
            XCTAssertEqual(try sqlite3(url, sql), try sqlite3(fixture, sql), table)
        }
        XCTAssertEqual(try sqlite3(url, "SELECT * FROM Z_PRIMARYKEY"), ["1|Car|0|0", "2|SportCar|1|0", "3|ExpensiveSportCar|2|0", "4|Person|0|1"])
        XCTAssertEqual(try sqlite3(url, "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name"),
                       try sqlite3(fixture, "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name"))
        XCTAssertEqual(try sqlite3(url, "PRAGMA journal_mode"), ["wal"])
        // The metadata Apple's Core Data checks: its own hashes of the model, byte for byte.
        let written = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let apple = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: fixture)
        XCTAssertEqual(written[NSStoreModelVersionHashesKey] as? [String: Data], apple[NSStoreModelVersionHashesKey] as? [String: Data])
        XCTAssertEqual(written["NSStoreModelVersionHashesDigest"] as? String, apple["NSStoreModelVersionHashesDigest"] as? String)
        XCTAssertEqual(written["NSStoreModelVersionHashesVersion"] as? Int, 3)
        // NSSQLiteStoreType finds it an SQLite file and opens Apple's layout again.
        let reread = try open(url, model: try sourceModel("SampleModel"))
        XCTAssertEqual(try fetch("Person", reread).first?.value(forKey: "firstName") as? String, "Grace")
    }

    func testOrderedAndManyToManyRelationshipsRoundTrip() throws {
        let model = try MigrationFixtures.model("""
            <entity name="Album" representedClassName="Album">
                <attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="tracks" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Track" inverseName="album" inverseEntity="Track"/>
                <relationship name="tags" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="albums" inverseEntity="Tag"/>
            </entity>
            <entity name="Track" representedClassName="Track">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="length" optional="YES" attributeType="Double" defaultValueString="0"/>
                <attribute name="price" optional="YES" attributeType="Decimal"/>
                <relationship name="album" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Album" inverseName="tracks" inverseEntity="Album"/>
            </entity>
            <entity name="Tag" representedClassName="Tag">
                <attribute name="label" optional="YES" attributeType="String"/>
                <relationship name="albums" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Album" inverseName="tags" inverseEntity="Album"/>
            </entity>
            """)
        let url = try MigrationFixtures.folder().appendingPathComponent("Music.sqlite")
        let context = try open(url, model: model, type: NSAppleSQLiteStoreType)
        let album = NSEntityDescription.insertNewObject(forEntityName: "Album", into: context)
        album.setValue("Blue", forKey: "title")
        var tracks: [NSManagedObject] = []
        for name in ["c", "a", "b"] {
            let track = NSEntityDescription.insertNewObject(forEntityName: "Track", into: context)
            track.setValue(name, forKey: "name")
            track.setValue(Decimal(string: "1.10"), forKey: "price")
            tracks.append(track)
        }
        album.setValue(NSOrderedSet(array: tracks), forKey: "tracks")
        let tags = ["x", "y"].map { label -> NSManagedObject in
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue(label, forKey: "label")
            return tag
        }
        album.setValue(NSOrderedSet(array: tags.reversed()), forKey: "tags")
        try context.save()

        // Entity numbers by name: Album 1, Tag 2, Track 3; the join table is named after Album.tags.
        XCTAssertEqual(try sqlite3(url, "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT"), ["1|Album", "2|Tag", "3|Track"])
        XCTAssertEqual(try sqlite3(url, "SELECT ZNAME FROM ZTRACK ORDER BY Z_FOK_ALBUM"), ["c", "a", "b"])
        XCTAssertEqual(try sqlite3(url, "SELECT t.ZLABEL FROM Z_1TAGS j JOIN ZTAG t ON t.Z_PK = j.Z_2TAGS ORDER BY j.Z_FOK_2TAGS"), ["y", "x"])
        XCTAssertEqual(try sqlite3(url, "SELECT DISTINCT Z_1ALBUMS FROM Z_1TAGS"), [String(key(album))])

        // Reorder and reread through a second coordinator.
        album.setValue(NSOrderedSet(array: [tracks[1], tracks[2], tracks[0]]), forKey: "tracks")
        try context.save()
        let reread = try open(url, model: model, type: NSAppleSQLiteStoreType)
        let loaded = try XCTUnwrap(try fetch("Album", reread).first)
        let names = (loaded.value(forKey: "tracks") as? NSOrderedSet)?.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String }
        XCTAssertEqual(names, ["a", "b", "c"])
        let labels = (loaded.value(forKey: "tags") as? NSOrderedSet)?.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "label") as? String }
        XCTAssertEqual(labels, ["y", "x"])
        let tag = try XCTUnwrap(try fetch("Tag", reread, "label == 'x'").first)
        XCTAssertEqual((tag.value(forKey: "albums") as? Set<NSManagedObject>)?.count, 1)
        let price = try XCTUnwrap(try fetch("Track", reread).first?.value(forKey: "price") as? Decimal)
        XCTAssertEqual(price, Decimal(string: "1.1"))
    }

    func testExternalBinaryDataIsReadFromTheSupportFolder() throws {
        let model = try MigrationFixtures.model("""
            <entity name="Photo" representedClassName="Photo">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="bytes" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
            </entity>
            """)
        let folder = try MigrationFixtures.folder()
        let url = folder.appendingPathComponent("Photos.sqlite")
        let context = try open(url, model: model, type: NSAppleSQLiteStoreType)
        let photo = NSEntityDescription.insertNewObject(forEntityName: "Photo", into: context)
        photo.setValue("inline", forKey: "name")
        photo.setValue(Data([1, 2, 3]), forKey: "bytes")
        try context.save()
        // Written inline behind Apple's marker byte 0x01.
        XCTAssertEqual(try sqlite3(url, "SELECT hex(ZBYTES) FROM ZPHOTO"), ["01010203"])

        // A row as Apple writes large data: marker 0x02 and the file's UUID, the bytes in
        // .Photos_SUPPORT/_EXTERNAL_DATA/<UUID>.
        let uuid = "0A1B2C3D-0000-4000-8000-00000000ABCD"
        let external = folder.appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        let large = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try large.write(to: external.appendingPathComponent(uuid))
        let hex = "02" + Data(uuid.utf8).map { String(format: "%02X", $0) }.joined() + "00"
        try sqlite3Write(url, "INSERT INTO ZPHOTO (Z_PK, Z_ENT, Z_OPT, ZNAME, ZBYTES) VALUES (2, 1, 1, 'external', X'\(hex)'); UPDATE Z_PRIMARYKEY SET Z_MAX = 2")
        let reread = try open(url, model: model, type: NSAppleSQLiteStoreType)
        let loaded = try XCTUnwrap(try fetch("Photo", reread, "name == 'external'").first)
        XCTAssertEqual(loaded.value(forKey: "bytes") as? Data, large)
        XCTAssertEqual(try fetch("Photo", reread, "name == 'inline'").first?.value(forKey: "bytes") as? Data, Data([1, 2, 3]))
    }

    func testAnotherConnectionsSaveIsSeenAndConflictsAreDetected() throws {
        let url = try copy("SampleModel_V1.sqlite")
        let model = try sourceModel("SampleModel")
        let first = try open(url, model: model)
        let second = try open(url, model: model)
        let mine = try XCTUnwrap(try fetch("Person", first).min { key($0) < key($1) })
        let theirs = try XCTUnwrap(try fetch("Person", second).first { key($0) == key(mine) })
        theirs.setValue("Other", forKey: "lastName")
        // A transient the model requires: fetched objects have none (as after a fetch on Apple's).
        theirs.setValue(false, forKey: "isDriving")
        mine.setValue(false, forKey: "isDriving")
        try second.save()
        // The first coordinator's next fetch reads the other connection's save.
        let fresh = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        fresh.persistentStoreCoordinator = first.persistentStoreCoordinator
        let refetched = try fetch("Person", fresh, "lastName == 'Other'")
        XCTAssertEqual(refetched.map(key), [key(mine)])
        // Its stale object's save is an optimistic-locking conflict (Z_OPT moved on).
        mine.setValue("Mine", forKey: "firstName")
        first.mergePolicy = NSMergePolicy.error
        XCTAssertThrowsError(try first.save()) { error in
            XCTAssertEqual((error as NSError).code, NSManagedObjectMergeError, "\(error)")
        }
    }

    // MARK: Bad files

    func testFilesThatAreNotCoreDataStoresGiveClearErrors() throws {
        let folder = try MigrationFixtures.folder()
        let model = try sourceModel("SampleModel")
        // An SQLite header followed by garbage.
        let damaged = folder.appendingPathComponent("Damaged.sqlite")
        var bytes = Data("SQLite format 3\0".utf8)
        bytes.append(Data(repeating: 0xA5, count: 4096))
        try bytes.write(to: damaged)
        XCTAssertThrowsError(try open(damaged, model: model)) { error in
            XCTAssertTrue("\(error)".contains("Damaged.sqlite"), "\(error)")
        }
        // An SQLite database of another program.
        let other = folder.appendingPathComponent("Other.sqlite")
        _ = try? sqlite3Write(other, "CREATE TABLE notes (body TEXT)")
        XCTAssertThrowsError(try open(other, model: model)) { error in
            XCTAssertTrue("\(error)".contains("not a Core Data store"), "\(error)")
        }
        // Not SQLite at all, with the Apple layout asked for.
        let text = folder.appendingPathComponent("Text.sqlite")
        try Data("hello".utf8).write(to: text)
        XCTAssertThrowsError(try open(text, model: model, type: NSAppleSQLiteStoreType)) { error in
            XCTAssertTrue("\(error)".contains("not an SQLite database"), "\(error)")
        }
        // A value of the wrong kind in a column names the table, key and column.
        let url = try copy("SampleModel_V1.sqlite")
        try sqlite3Write(url, "UPDATE ZPERSON SET ZUPDATEDAT = 'yesterday' WHERE Z_PK = 3")
        XCTAssertThrowsError(try open(url, model: model)) { error in
            XCTAssertTrue("\(error)".contains("ZPERSON row Z_PK 3 column ZUPDATEDAT"), "\(error)")
        }
    }

    private func sqlite3Write(_ url: URL, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", url.path, sql]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
    }
}

// Fuzz target: arbitrary bytes as an Apple Core Data SQLite store (Formats/apple-sqlite-store.md),
// opened read-only with the CoreDataPlus sample model (version 1, the model of the corpus's
// apple-SampleModel_V1.sqlite), every entity fetched with and without a predicate translated to
// SQL, and every row read back by key. SQLite itself parses the damaged file; what is checked here
// is our side: the schema and metadata checks, value decoding, reference resolution and the
// translated fetches must throw or agree, never crash. The SQL path and the evaluator must return
// the same objects.
import CoreDataModel
import CoreDataPredicate
import CoreDataSQLiteStore
import CoreDataStorage
import Foundation

/// The body of the `FuzzAppleSQLiteStore` libFuzzer target, also replayed over its corpus by `swift test`.
public enum FuzzAppleSQLiteStore {
    /// CoreDataPlus's SampleModel version 1 (alemar11/CoreDataPlus, MIT), as Xcode wrote it.
    static let modelSource = #"""
<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="1">
    <entity name="Car" representedClassName="Car" syncable="YES">
        <attribute name="color" optional="YES" attributeType="Transformable" valueTransformerName="ColorTransformer" customClassName="Color"/>
        <attribute name="currentDrivingSpeed" optional="YES" transient="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
        <attribute name="maker" optional="YES" attributeType="String"/>
        <attribute name="markedForDeletionAsOf" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
        <attribute name="model" optional="YES" attributeType="String"/>
        <attribute name="numberPlate" attributeType="String"/>
        <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
        <uniquenessConstraints>
            <uniquenessConstraint>
                <constraint value="numberPlate"/>
            </uniquenessConstraint>
        </uniquenessConstraints>
    </entity>
    <entity name="ExpensiveSportCar" representedClassName="ExpensiveSportCar" parentEntity="SportCar" syncable="YES">
        <attribute name="isLimitedEdition" optional="YES" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
    </entity>
    <entity name="Person" representedClassName="Person" syncable="YES">
        <attribute name="firstName" optional="YES" attributeType="String"/>
        <attribute name="id" attributeType="UUID" usesScalarValueType="NO" preserveAfterDeletion="YES"/>
        <attribute name="isDriving" transient="YES" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
        <attribute name="lastName" optional="YES" attributeType="String"/>
        <attribute name="updatedAt" attributeType="Date" usesScalarValueType="NO"/>
        <relationship name="cars" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/>
        <uniquenessConstraints>
            <uniquenessConstraint>
                <constraint value="firstName"/>
                <constraint value="lastName"/>
            </uniquenessConstraint>
        </uniquenessConstraints>
    </entity>
    <entity name="SportCar" representedClassName="SportCar" parentEntity="Car" syncable="YES"/>
</model>
"""#

    static let model: NSManagedObjectModel? = {
        guard let model = try? NSManagedObjectModel(xcodeModelContents: Data(modelSource.utf8)) else { return nil }
        do { try model.freeze() } catch { return nil }
        return model
    }()

    /// One file per process, rewritten for every input.
    static let path = NSTemporaryDirectory() + "fuzz-apple-sqlite-\(getpid()).sqlite"

    static let predicates = [
        "maker == 'FIAT' OR numberPlate BEGINSWITH '1'", "owner.firstName != 'Bret'", "ANY cars.maker == 'BMW'",
        "updatedAt < %@", "NOT (model CONTAINS 'a')",
    ]

    /// Opens `bytes` as a store and reads everything in it.
    ///
    /// Traps (`precondition`) when the SQL path and the evaluator disagree or a fetched row is
    /// not the row read by its key.
    public static func run(_ bytes: [UInt8]) {
        guard let model else { return }
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { return }
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) } }
        _ = try? AppleSQLiteStore.metadata(atPath: path)
        var options = AppleSQLiteStoreOptions()
        options.readOnly = true
        options.lockTimeout = 0
        guard let translated = try? AppleSQLiteStore(path: path, model: model, metadata: StoreMetadata(), options: options) else { return }
        defer { try? translated.close() }
        options.translatesFetchesToSQL = false
        guard let evaluated = try? AppleSQLiteStore(path: path, model: model, metadata: StoreMetadata(), options: options) else { return }
        defer { try? evaluated.close() }
        for entity in model.entities {
            guard let rows = try? translated.execute(StoreFetchRequest(entity: entity)), case .rows(let all) = rows else { continue }
            for row in all {
                let again = try? translated.row(for: row.objectID)
                precondition(again == row, "\(row.objectID): the row read by key is not the fetched one")
            }
            for format in predicates {
                let predicate = CoreDataPredicate.NSPredicate(format: format, argumentArray: [Date(timeIntervalSinceReferenceDate: 6e8)])
                let request = StoreFetchRequest(entity: entity, predicate: predicate, resultType: .objectIDs)
                let viaSQL = try? translated.execute(request)
                let reference = try? evaluated.execute(request)
                if case .objectIDs(let a)? = viaSQL, case .objectIDs(let b)? = reference {
                    precondition(a == b, "\(entity.name ?? ""): \(format): SQL picked \(a.count) objects, the evaluator \(b.count)")
                }
            }
        }
    }
}

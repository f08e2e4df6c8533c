import CoreData
import Foundation

/// The benchmark's model: one entity `User(name, email, age, score, created)`, optionally with a
/// fetch index on `age` (the "with an index" variant of the query workload).
enum UserModel {
    static func make(indexOnAge: Bool) -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let user = NSEntityDescription()
        user.name = "User"
        user.managedObjectClassName = "NSManagedObject"
        user.properties = [
            attribute("name", .stringAttributeType), attribute("email", .stringAttributeType),
            attribute("age", .integer64AttributeType), attribute("score", .doubleAttributeType),
            attribute("created", .dateAttributeType),
        ]
        if indexOnAge {
            user.indexes = [NSFetchIndexDescription(name: "byAge", elements: [
                NSFetchIndexElementDescription(propertyName: "age", collationType: .binary),
            ])]
        }
        let model = NSManagedObjectModel()
        model.entities = [user]
        return model
    }
}

extension UserModel {
    /// Writes `User` in two versions as an Xcode package at `path` (version 2 current): version 2
    /// renames `name` to `fullName` (its renaming identifier is `name`) and adds `verified`.
    static func writeVersionedPackage(in path: String) throws -> (v1: NSManagedObjectModel, current: NSManagedObjectModel) {
        let common = """
            <attribute name="email" optional="YES" attributeType="String"/>
            <attribute name="age" optional="YES" attributeType="Integer 64"/>
            <attribute name="score" optional="YES" attributeType="Double"/>
            <attribute name="created" optional="YES" attributeType="Date"/>
            """
        let versions = [
            ("Users", #"<attribute name="name" optional="YES" attributeType="String"/>"#),
            ("Users 2", #"<attribute name="fullName" optional="YES" attributeType="String" elementID="name"/><attribute name="verified" optional="YES" attributeType="Boolean" defaultValueString="NO"/>"#),
        ]
        let package = URL(fileURLWithPath: path)
        for (name, own) in versions {
            let folder = package.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let contents = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
                <entity name="User" representedClassName="NSManagedObject">\(own)\(common)</entity>
                </model>
                """
            try contents.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        try #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Users 2.xcdatamodel</string></dict></plist>"#
            .write(to: package.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        let v1 = try XcodeModelPackage(contentsOf: package).loadModel(version: "Users")
        let current = try NSManagedObjectModel(validatingContentsOf: package)
        return (v1, current)
    }
}

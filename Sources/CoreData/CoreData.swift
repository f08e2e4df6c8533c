// The public face of Core Data for Linux: Apple's names, one `import CoreData`.
//
// Foundation is re-exported because Apple's Core Data headers import it: code written for Apple
// platforms uses `URL`, `Data` and `Date` after `import CoreData` alone.
@_exported import Foundation
@_exported import CoreDataPredicate
@_exported import CoreDataModel

/// The version of this library, printed by `coredata --version`.
public let CoreDataLinuxVersion = "0.1.0"

// Foundation on Linux declares its own (unusable) NSPredicate family. These names make
// `import CoreData` alone mean the working classes; a file that also imports Foundation or XCTest
// adds `fileprivate typealias NSPredicate = CoreDataPredicate.NSPredicate` (and the same for the
// other four) for type positions — see README.
public typealias NSPredicate = CoreDataPredicate.NSPredicate
public typealias NSComparisonPredicate = CoreDataPredicate.NSComparisonPredicate
public typealias NSCompoundPredicate = CoreDataPredicate.NSCompoundPredicate
public typealias NSExpression = CoreDataPredicate.NSExpression
public typealias NSSortDescriptor = CoreDataPredicate.NSSortDescriptor

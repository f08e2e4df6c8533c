// The public face of Core Data for Linux: Apple's names, one `import CoreData`.
//
// Foundation is re-exported because Apple's Core Data headers import it: code written for Apple
// platforms uses `URL`, `Data` and `Date` after `import CoreData` alone.
@_exported import Foundation
@_exported import CoreDataModel

/// The version of this library, printed by `coredata --version`.
public let CoreDataLinuxVersion = "0.1.0"

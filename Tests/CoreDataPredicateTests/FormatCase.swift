// One row of the format-string table: the string, its arguments, the tree it must parse to, how it
// must print, and whom it selects from People.all.
import Foundation
@testable import CoreDataPredicate

struct FormatCase {
    let format: String
    let arguments: [Any?]
    let tree: NSPredicate
    let printed: String
    let selects: [String]
    let file: StaticString
    let line: UInt

    init(
        _ format: String, _ arguments: [Any?] = [], tree: NSPredicate, printed: String, selects: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) {
        self.format = format
        self.arguments = arguments
        self.tree = tree
        self.printed = printed
        self.selects = selects
        self.file = file
        self.line = line
    }
}

/// Every name in People.all, in order.
let everyone = ["Ada", "Bob", "Carol", "Dan", "Éva", "frank", "Grace", "Hana"]
let nobody: [String] = []

func everyone(except names: String...) -> [String] { everyone.filter { !names.contains($0) } }

enum FormatTable {
    static var all: [FormatCase] {
        numbers + arithmetic + strings + logic + collections + arguments + expressions
    }
}

// Sendable: rows are built once and only read; their `Any` arguments are immutable values.
extension FormatCase: @unchecked Sendable {}

import Foundation
import CoreDataStorage

/// One object as `dump` prints it: its ID, version and properties in print order.
struct DumpObject {
    var id: StoreObjectID
    var version: Int64
    var properties: [(name: String, value: StoreValue)]
}

/// The output formats of `dump`.
enum DumpFormat: String, CaseIterable {
    case jsonl
    case xml
    case table
}

/// Writes dumped objects in one ``DumpFormat``: JSON Lines and XML stream one object at a time;
/// a table collects one entity's objects to size its columns.
final class DumpWriter {
    private let format: DumpFormat
    private var tableEntity: String?
    private var tableRows: [DumpObject] = []
    private var started = false

    init(format: DumpFormat) { self.format = format }

    func begin(store: String) {
        started = true
        if format == .xml {
            Console.print("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
            Console.print("<objects store=\"\(StoreValueFormatting.xmlEscaped(store))\">")
        }
    }

    func write(_ object: DumpObject) {
        switch format {
        case .jsonl:
            let values = JSONValue.object(object.properties.map { ($0.name, StoreValueFormatting.json($0.value)) })
            Console.print(JSONValue.object([
                ("entity", .string(object.id.entityName)), ("id", .string(object.id.description)),
                ("primaryKey", .integer(object.id.primaryKey)), ("version", .integer(object.version)), ("values", values),
            ]).compact)
        case .xml:
            Console.print("  <object entity=\"\(StoreValueFormatting.xmlEscaped(object.id.entityName))\" id=\"\(StoreValueFormatting.xmlEscaped(object.id.description))\" version=\"\(object.version)\">")
            for (name, value) in object.properties {
                let escapedName = StoreValueFormatting.xmlEscaped(name)
                switch value {
                case .reference(let id):
                    Console.print("    <relationship name=\"\(escapedName)\"><ref id=\"\(StoreValueFormatting.xmlEscaped(id.description))\"/></relationship>")
                case .references(let ids):
                    let refs = ids.map { "<ref id=\"\(StoreValueFormatting.xmlEscaped($0.description))\"/>" }.joined()
                    Console.print("    <relationship name=\"\(escapedName)\" toMany=\"YES\">\(refs)</relationship>")
                case .null:
                    Console.print("    <attribute name=\"\(escapedName)\" type=\"null\"/>")
                default:
                    Console.print("    <attribute name=\"\(escapedName)\" type=\"\(StoreValueFormatting.typeName(value))\">\(StoreValueFormatting.xmlEscaped(StoreValueFormatting.text(value)))</attribute>")
                }
            }
            Console.print("  </object>")
        case .table:
            if tableEntity != object.id.entityName { flushTable() }
            tableEntity = object.id.entityName
            tableRows.append(object)
        }
    }

    func end() {
        guard started else { return }
        switch format {
        case .xml: Console.print("</objects>")
        case .table: flushTable()
        case .jsonl: break
        }
    }

    /// Prints the collected objects of one entity as a table: ID, version, then each property
    /// any of them has, in order of first appearance.
    private func flushTable() {
        guard let entity = tableEntity, !tableRows.isEmpty else { return }
        var columns: [String] = []
        for row in tableRows {
            for (name, _) in row.properties where !columns.contains(name) { columns.append(name) }
        }
        let header = ["id", "version"] + columns
        let cells: [[String]] = tableRows.map { row in
            var byName: [String: String] = [:]
            for (name, value) in row.properties { byName[name] = Self.cell(StoreValueFormatting.text(value)) }
            return [row.id.description, String(row.version)] + columns.map { byName[$0] ?? "" }
        }
        var widths = header.map(\.count)
        for line in cells {
            for (column, cell) in line.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        func format(_ line: [String]) -> String {
            line.enumerated().map { column, cell in
                column == line.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        Console.print("\(entity) (\(tableRows.count) object\(tableRows.count == 1 ? "" : "s"))")
        Console.print(format(header))
        Console.print(format(widths.map { String(repeating: "-", count: $0) }))
        cells.forEach { Console.print(format($0)) }
        Console.print("")
        tableRows.removeAll()
        tableEntity = nil
    }

    /// A cell on one line, cut at 60 characters.
    private static func cell(_ text: String) -> String {
        let line = text.replacingOccurrences(of: "\n", with: "\\n")
        return line.count > 60 ? String(line.prefix(59)) + "…" : line
    }
}

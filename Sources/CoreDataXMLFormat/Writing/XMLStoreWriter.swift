import Foundation

/// Writes an XML store file in Apple's layout (`Formats/xml-store.md §2–§9`), streaming: the
/// bytes go to `sink` in chunks of about ``XMLStoreLayout/writeChunkSize`` as objects are written,
/// so a store is never held twice in memory. The writer does no I/O itself.
///
/// Use: ``begin(_:)``, ``write(_:)`` per object, ``finish()``. Errors are the sink's.
public struct XMLStoreWriter {
    private var buffer: [UInt8] = []
    private let chunkSize: Int
    private let sink: ([UInt8]) throws -> Void

    public init(chunkSize: Int = XMLStoreLayout.writeChunkSize, sink: @escaping ([UInt8]) throws -> Void) {
        self.chunkSize = max(1, chunkSize)
        self.sink = sink
        buffer.reserveCapacity(min(self.chunkSize, XMLStoreLayout.writeChunkSize) + 4096)
    }

    /// The encoded bytes of a whole document.
    public static func encode(_ document: XMLStoreDocument) -> [UInt8] {
        var bytes: [UInt8] = []
        var writer = XMLStoreWriter(chunkSize: .max) { bytes.append(contentsOf: $0) }
        // The sink above cannot throw.
        try? writer.begin(document.info)
        for object in document.objects { try? writer.write(object) }
        try? writer.finish()
        return bytes
    }

    /// The declaration, DOCTYPE, `<database>` and `<databaseInfo>` (§2, §3, §4).
    public mutating func begin(_ info: XMLStoreInfo) throws {
        append(XMLStoreLayout.declaration)
        append("\n")
        append(XMLStoreLayout.doctype)
        append("\n\n<database>\n    <databaseInfo>\n        <version>")
        append(String(info.version))
        append("</version>\n        <UUID>")
        appendEscaped(info.uuid, quote: false)
        append("</UUID>\n        <nextObjectID>")
        append(String(info.nextObjectID))
        append("</nextObjectID>\n        <metadata>\n            <plist version=\"1.0\">\n")
        appendPlist(.dictionary(info.metadata), indent: 16)
        append("            </plist>\n        </metadata>\n    </databaseInfo>\n")
        try flushIfFull()
    }

    /// One `<object>` (§5–§7).
    public mutating func write(_ object: XMLStoreObject) throws {
        append("    <object type=\"")
        appendEscaped(object.type, quote: true)
        append("\" id=\"z")
        append(String(object.id))
        // Ours (§10): only objects saved more than once carry it, so fresh stores match Apple's.
        if object.version != 1 {
            append("\" version=\"")
            append(String(object.version))
        }
        append("\">\n")
        for attribute in object.attributes {
            append("        <attribute name=\"")
            appendEscaped(attribute.name, quote: true)
            append("\" type=\"")
            appendEscaped(attribute.type, quote: true)
            append(attribute.isBase64 ? "\" encoding=\"base64\">" : "\">")
            appendEscaped(attribute.text, quote: false)
            append("</attribute>\n")
        }
        for relationship in object.relationships {
            append("        <relationship name=\"")
            appendEscaped(relationship.name, quote: true)
            append("\" type=\"")
            append("\(relationship.minCount)/\(relationship.maxCount)")
            append("\" destination=\"")
            appendEscaped(relationship.destination, quote: true)
            append("\" idrefs=\"")
            for (index, id) in relationship.idrefs.enumerated() {
                if index > 0 { append(" ") }
                append("z")
                append(String(id))
            }
            append("\"></relationship>\n")
        }
        append("    </object>\n")
        try flushIfFull()
    }

    /// Closes `<database>` and hands the last bytes to the sink.
    public mutating func finish() throws {
        append("</database>\n")
        try sink(buffer)
        buffer.removeAll()
    }

    private mutating func flushIfFull() throws {
        guard buffer.count >= chunkSize else { return }
        try sink(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func append(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    /// `&`, `<`, `>` always, CR as `&#13;`, and in attribute values `"`, LF and tab as `&quot;`,
    /// `&#10;` and `&#9;` (a parser turns literal ones into spaces there) (§9).
    private mutating func appendEscaped(_ text: String, quote: Bool) {
        let utf8 = text.utf8
        // The common case, no character to escape, is found in C (strpbrk): texts can be whole
        // binary attributes in base64. A NUL cannot reach here (§10 writes such strings as base64),
        // but if one did, strpbrk would stop at it, so the byte loop below takes over.
        let special = quote ? "&<>\r\"\n\t" : "&<>\r"
        let plain = text.withCString { strpbrk($0, special) == nil && strlen($0) == utf8.count }
        guard !plain else {
            buffer.append(contentsOf: utf8)
            return
        }
        for byte in utf8 {
            switch byte {
            case 0x26: append("&amp;")
            case 0x3C: append("&lt;")
            case 0x3E: append("&gt;")
            case 0x0D: append("&#13;")
            case 0x22 where quote: append("&quot;")
            case 0x0A where quote: append("&#10;")
            case 0x09 where quote: append("&#9;")
            default: buffer.append(byte)
            }
        }
    }

    private mutating func appendPlist(_ value: PropertyListValue, indent: Int) {
        let pad = String(repeating: " ", count: indent)
        switch value {
        case .dictionary(let entries):
            append(pad + "<dict>\n")
            for key in entries.keys.sorted() {
                guard let item = entries[key] else { continue }
                append(pad + "    <key>")
                appendEscaped(key, quote: false)
                append("</key>\n")
                appendPlist(item, indent: indent + 4)
            }
            append(pad + "</dict>\n")
        case .array(let items):
            append(pad + "<array>\n")
            for item in items { appendPlist(item, indent: indent + 4) }
            append(pad + "</array>\n")
        case .string(let text):
            append(pad + "<string>")
            appendEscaped(text, quote: false)
            append("</string>\n")
        case .integer(let number):
            append(pad + "<integer>\(number)</integer>\n")
        case .real(let number):
            append(pad + "<real>\(XMLValueText.double(number))</real>\n")
        case .bool(let flag):
            append(pad + (flag ? "<true/>\n" : "<false/>\n"))
        case .date(let date):
            append(pad + "<date>\(PlistDate.format(date))</date>\n")
        case .data(let data):
            append(pad + "<data>\(Base64Text.encode(data))</data>\n")
        }
    }
}

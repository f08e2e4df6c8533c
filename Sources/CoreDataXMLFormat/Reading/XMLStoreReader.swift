import CLibXML2
import Foundation

/// Decodes an XML store file handed to it in chunks (`Formats/xml-store.md §12`), with libxml2's
/// SAX2 push parser: no document tree is built, so memory grows with the objects read, and the
/// reader does no I/O (the engine reads the file; the fuzz target hands it a buffer).
///
/// Use: ``feed(_:)`` each chunk in order, then ``finish()`` for the document. After an error every
/// call throws the same error. Errors name the line and what is wrong.
///
/// Threading: one reader is used by one thread at a time.
public final class XMLStoreReader {
    private var context: xmlParserCtxtPtr?
    private var state = ReaderState()
    private var failure: XMLStoreError?

    public init() {
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { ctx, localname, _, _, _, _, attributeCount, _, attributes in
            guard let reader = XMLStoreReader.from(ctx), let localname else { return }
            reader.startElement(localname, attributeCount: Int(attributeCount), attributes: attributes)
        }
        handler.endElementNs = { ctx, localname, _, _ in
            guard let reader = XMLStoreReader.from(ctx), let localname else { return }
            reader.endElement(localname)
        }
        handler.characters = { ctx, bytes, count in
            guard let reader = XMLStoreReader.from(ctx), let bytes, count > 0 else { return }
            reader.characters(UnsafeBufferPointer(start: bytes, count: Int(count)))
        }
        handler.cdataBlock = handler.characters
        // Only the five predefined entities exist; a declared entity is refused (§2, §9).
        handler.getEntity = { _, name in xmlGetPredefinedEntity(name) }
        handler.entityDecl = { ctx, name, _, _, _, _ in
            guard let reader = XMLStoreReader.from(ctx) else { return }
            let entity = name.map { String(cString: $0) } ?? ""
            reader.fail("the document declares the entity '\(entity)'; XML stores declare no entities")
        }
        // Errors are read from the context after each chunk; this only keeps libxml2 from printing.
        handler.serror = { _, _ in }
        context = xmlCreatePushParserCtxt(&handler, nil, nil, 0, nil)
        if let context {
            context.pointee.userData = Unmanaged.passUnretained(self).toOpaque()
            // No network, no DTD loading; character and predefined references replaced in text
            // and attribute values; no 10 MB limit on one text node (large binary attributes).
            let options = XML_PARSE_NONET.rawValue | XML_PARSE_NOENT.rawValue | XML_PARSE_HUGE.rawValue
            xmlCtxtUseOptions(context, Int32(options))
        } else {
            failure = XMLStoreError(line: 0, "libxml2 could not create a parser")
        }
    }

    deinit {
        guard let context else { return }
        // libxml2 makes a document of its own to hold an internal DTD subset's declarations
        // ("SAX compatibility mode") even under a SAX handler; it is ours to free.
        if let document = context.pointee.myDoc {
            xmlFreeDoc(document)
            context.pointee.myDoc = nil
        }
        xmlFreeParserCtxt(context)
    }

    private static func from(_ ctx: UnsafeMutableRawPointer?) -> XMLStoreReader? {
        ctx.map { Unmanaged<XMLStoreReader>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Parses the next bytes of the file.
    public func feed(_ bytes: UnsafeRawBufferPointer) throws(XMLStoreError) {
        if let failure { throw failure }
        guard let context else { throw XMLStoreError(line: 0, "the reader is finished") }
        var offset = 0
        // xmlParseChunk takes an Int32 length.
        repeat {
            let count = min(bytes.count - offset, 1 << 30)
            let base = bytes.baseAddress.map { $0.advanced(by: offset).assumingMemoryBound(to: CChar.self) }
            let status = xmlParseChunk(context, base, Int32(count), 0)
            try check(status)
            offset += count
        } while offset < bytes.count
    }

    /// Parses the next bytes of the file.
    public func feed(_ bytes: [UInt8]) throws(XMLStoreError) {
        var thrown: XMLStoreError?
        bytes.withUnsafeBytes { raw in
            do throws(XMLStoreError) { try feed(raw) } catch { thrown = error }
        }
        if let thrown { throw thrown }
    }

    /// Ends the input and returns the document.
    public func finish() throws(XMLStoreError) -> XMLStoreDocument {
        if let failure { throw failure }
        guard let context else { throw XMLStoreError(line: 0, "the reader is finished") }
        try check(xmlParseChunk(context, nil, 0, 1))
        guard state.sawDatabaseEnd, let info = state.info else {
            throw XMLStoreError(line: line, "the file ends before </database>")
        }
        return XMLStoreDocument(info: info, objects: state.objects)
    }

    /// Decodes a whole buffer: ``feed(_:)`` and ``finish()``.
    public static func decode(_ bytes: [UInt8]) throws(XMLStoreError) -> XMLStoreDocument {
        let reader = XMLStoreReader()
        try reader.feed(bytes)
        return try reader.finish()
    }

    private func check(_ status: Int32) throws(XMLStoreError) {
        if let failure { throw failure }
        guard status != 0 || context?.pointee.wellFormed == 0 else { return }
        var message = "malformed XML"
        var errorLine = line
        if let context, let last = xmlCtxtGetLastError(context) {
            if let text = last.pointee.message {
                message = "malformed XML: " + String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            if last.pointee.line > 0 { errorLine = Int(last.pointee.line) }
        }
        let error = XMLStoreError(line: errorLine, message)
        failure = error
        throw error
    }

    private var line: Int {
        guard let context else { return 0 }
        return Int(xmlSAX2GetLineNumber(context))
    }

    private func fail(_ message: String) {
        guard failure == nil else { return }
        failure = XMLStoreError(line: line, message)
        if let context { xmlStopParser(context) }
    }

    // MARK: Events

    private func startElement(_ localname: UnsafePointer<xmlChar>, attributeCount: Int, attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        guard failure == nil else { return }
        let name = Self.elementName(localname)
        let values = ElementAttributes(count: attributeCount, pointers: attributes)
        do throws(XMLStoreError) {
            try state.start(name, attributes: values, line: line)
        } catch {
            fail(error.message)
        }
    }

    /// The names of the elements each object repeats, as constants: a `String` built per element
    /// was a tenth of the load.
    private static let frequentNames: [(cName: StaticString, name: String)] = [
        ("attribute", "attribute"), ("object", "object"), ("relationship", "relationship"),
    ]

    private static func elementName(_ localname: UnsafePointer<xmlChar>) -> String {
        for known in frequentNames where strcmp(UnsafeRawPointer(localname).assumingMemoryBound(to: CChar.self), UnsafeRawPointer(known.cName.utf8Start).assumingMemoryBound(to: CChar.self)) == 0 {
            return known.name
        }
        return String(cString: localname)
    }

    private func endElement(_ localname: UnsafePointer<xmlChar>) {
        guard failure == nil else { return }
        do throws(XMLStoreError) {
            try state.end(line: line)
        } catch {
            fail(error.message)
        }
    }

    private func characters(_ bytes: UnsafeBufferPointer<xmlChar>) {
        guard failure == nil else { return }
        if state.isCapturingText {
            state.text.append(contentsOf: bytes)
        } else if bytes.contains(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x09 && $0 != 0x0D }) {
            fail("unexpected text inside <\(state.currentElementName)>")
        }
    }
}

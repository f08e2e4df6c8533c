import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One element of a model file, with the line its start tag begins on, so that every error can
/// say where.
struct ModelXMLElement {
    var name: String
    var attributes: [String: String]
    var children: [ModelXMLElement]
    var line: Int

    subscript(attribute: String) -> String? { attributes[attribute] }

    func children(named childName: String) -> [ModelXMLElement] { children.filter { $0.name == childName } }

    /// How the element reads in the file, for error messages: `<relationship name="owner">`.
    var label: String {
        if let name = attributes["name"] { return "<\(self.name) name=\"\(name)\">" }
        if let value = attributes["value"] { return "<\(self.name) value=\"\(value)\">" }
        if let property = attributes["property"] { return "<\(self.name) property=\"\(property)\">" }
        return "<\(self.name)>"
    }
}

/// Reads a model file into a small tree. Model files are a few kilobytes, so a tree is the simple
/// choice; the XML *store* streams instead.
///
/// External entities are never resolved: a model file cannot make the loader read other files.
enum ModelXMLDocument {
    static func parse(_ data: Data, file: URL?) throws(ModelError) -> ModelXMLElement {
        let lines = LineIndex(data)
        // FoundationXML on Linux traps (SIGILL) on a name that is not valid UTF-8, so bytes are
        // checked before the parser sees them. Xcode writes model files in UTF-8 only.
        if let badOffset = firstInvalidUTF8Offset(data) {
            throw ModelError(
                .malformedFile, "not well-formed XML: byte \(badOffset) (0x\(String(data[data.startIndex + badOffset], radix: 16, uppercase: true))) is not valid UTF-8",
                file: file, line: lines.line(ofOffset: badOffset))
        }
        // FoundationXML on Linux reads a processing instruction's content with strlen, and
        // libxml2 hands it none for `<?name?>` (a declaration without a version included): the
        // process dies on a null read. Model files hold no processing instructions but the XML
        // declaration, so an empty one is refused before the parser sees it.
        if let (offset, target) = firstEmptyProcessingInstruction(data) {
            throw ModelError(
                .malformedFile, "not well-formed XML: the processing instruction '<?\(target)?>' has no content (an XML declaration needs a version)",
                file: file, line: lines.line(ofOffset: offset))
        }
        let builder = TreeBuilder(lines: lines)
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.delegate = builder
        let finished = parser.parse()
        // On Linux, parse() can return true after a recoverable error (a stray end tag, content
        // after the root), so the first reported error decides, not the return value.
        if let failure = builder.firstError ?? (finished ? nil : (parser.parserError.map { ($0, parser.lineNumber) })) {
            throw ModelError(
                .malformedFile, "not well-formed XML: \(describe(failure.0))", file: file,
                line: failure.1 > 0 ? failure.1 : nil)
        }
        guard let root = builder.root else {
            throw ModelError(.malformedFile, "not well-formed XML: the file has no root element", file: file)
        }
        return root
    }

    /// The offset and target of the first `<?target?>` whose content is empty or only
    /// whitespace; `nil` when there is none. Complexity: O(bytes).
    static func firstEmptyProcessingInstruction(_ data: Data) -> (Int, String)? {
        let bytes = [UInt8](data)
        var index = 0
        while index + 1 < bytes.count {
            defer { index += 1 }
            guard bytes[index] == UInt8(ascii: "<"), bytes[index + 1] == UInt8(ascii: "?") else { continue }
            var cursor = index + 2
            let nameStart = cursor
            while cursor < bytes.count, !Self.isSpace(bytes[cursor]), bytes[cursor] != UInt8(ascii: "?") { cursor += 1 }
            let target = String(decoding: bytes[nameStart..<cursor], as: UTF8.self)
            while cursor < bytes.count, Self.isSpace(bytes[cursor]) { cursor += 1 }
            if cursor + 1 < bytes.count, bytes[cursor] == UInt8(ascii: "?"), bytes[cursor + 1] == UInt8(ascii: ">") { return (index, target) }
        }
        return nil
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The offset of the first byte of the first sequence that is not valid UTF-8 (a stray
    /// continuation byte, an overlong form, a surrogate, a value above U+10FFFF, or a sequence
    /// cut short), or `nil` when every byte is valid.
    ///
    /// Why not `UTF8().decode`: it reads ahead, so the count of bytes it pulled can pass the end
    /// of the data, and the offset it gave once indexed past the end (found by FuzzModelLoader).
    static func firstInvalidUTF8Offset(_ data: Data) -> Int? {
        let bytes = [UInt8](data)
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            // Table 3-7 of the Unicode Standard: the lead byte fixes the length and the range of
            // the second byte; later bytes are 0x80...0xBF.
            let length: Int
            var second: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0x00...0x7F:
                index += 1
                continue
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; second = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; second = 0x80...0x9F
            case 0xF0: length = 4; second = 0x90...0xBF
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; second = 0x80...0x8F
            default: return index
            }
            guard bytes.count - index >= length else { return index }
            guard second.contains(bytes[index + 1]) else { return index }
            for offset in 2..<max(2, length) where !(0x80...0xBF).contains(bytes[index + offset]) {
                return index
            }
            index += length
        }
        return nil
    }

    /// libxml2's error codes (which XMLParser reports) in words; Linux gives no description.
    private static func describe(_ error: Error) -> String {
        let nsError = error as NSError
        if let message = nsError.userInfo[NSLocalizedDescriptionKey] as? String, !message.isEmpty,
           !message.hasPrefix("The operation could not be completed") {
            return message
        }
        let words: [Int: String] = [
            4: "the document is empty",
            5: "extra content after the root element, or the document ends too early",
            9: "an invalid character",
            23: "an entity reference is missing its ';'",
            26: "an undeclared entity is referenced",
            38: "'<' inside an attribute value",
            39: "an attribute value does not start with a quote",
            40: "an attribute value is not closed",
            41: "an attribute has no value",
            42: "an attribute appears twice in one element",
            64: "the XML declaration is not finished",
            68: "a name is expected here",
            73: "'>' is expected here",
            76: "an end tag does not match its start tag",
            77: "the document ends inside an element (a tag is not closed)",
        ]
        return words[nsError.code] ?? "XML parser error \(nsError.code)"
    }

    private final class TreeBuilder: NSObject, XMLParserDelegate {
        let lines: LineIndex
        var root: ModelXMLElement?
        var firstError: (Error, Int)?
        private var stack: [ModelXMLElement] = []

        init(lines: LineIndex) { self.lines = lines }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            // The parser reports where the start tag *ends*; a tag split over lines starts earlier.
            let line = lines.lineOfTagStart(endingAtLine: parser.lineNumber, column: parser.columnNumber)
            stack.append(ModelXMLElement(name: elementName, attributes: attributeDict, children: [], line: line))
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            guard let finished = stack.popLast() else { return }
            if stack.isEmpty {
                if root == nil { root = finished }
            } else {
                stack[stack.count - 1].children.append(finished)
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            if firstError == nil { firstError = (parseError, parser.lineNumber) }
        }
    }
}

/// Byte offsets of line starts, to turn the parser's (line, column) into the line a tag starts on.
struct LineIndex {
    private let data: Data
    private let starts: [Int]

    init(_ data: Data) {
        self.data = data
        var starts = [0]
        for (offset, byte) in data.enumerated() where byte == UInt8(ascii: "\n") { starts.append(offset + 1) }
        self.starts = starts
    }

    /// The 1-based line holding byte `offset`.
    func line(ofOffset offset: Int) -> Int {
        var low = 0, high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return low + 1
    }

    /// The line of the `<` that opens the tag whose end the parser reported at (`line`, `column`).
    /// Falls back to `line` when the position is outside the data.
    func lineOfTagStart(endingAtLine line: Int, column: Int) -> Int {
        guard line >= 1, line <= starts.count, column >= 1 else { return max(line, 1) }
        // The column points just past the tag's '>' (or at it); start one byte back so that the
        // '<' of a following tag is never taken for this one's.
        let end = min(starts[line - 1] + column - 2, data.count - 1)
        guard end >= 0 else { return line }
        var offset = end
        let base = data.startIndex
        while offset >= 0 {
            if data[base + offset] == UInt8(ascii: "<") { return self.line(ofOffset: offset) }
            offset -= 1
        }
        return line
    }
}

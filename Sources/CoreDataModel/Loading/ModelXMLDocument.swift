import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One element of a model file, with the line it starts on, so that every error can say where.
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
        return "<\(self.name)>"
    }
}

/// Reads a model file into a small tree. Model files are a few kilobytes, so a tree is the simple
/// choice; the XML *store* streams instead.
///
/// External entities are never resolved: a model file cannot make the loader read other files.
enum ModelXMLDocument {
    static func parse(_ data: Data, file: URL?) throws(ModelError) -> ModelXMLElement {
        let builder = TreeBuilder()
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.delegate = builder
        let ok = parser.parse()
        if !ok || builder.root == nil {
            let reason = parser.parserError.map { describe($0) } ?? "the file has no root element"
            throw ModelError(
                .malformedFile, "not well-formed XML: \(reason)", file: file,
                line: parser.lineNumber > 0 ? parser.lineNumber : nil)
        }
        guard let root = builder.root else {
            throw ModelError(.malformedFile, "the file has no root element", file: file)
        }
        return root
    }

    private static func describe(_ error: Error) -> String {
        let nsError = error as NSError
        if let message = nsError.userInfo[NSLocalizedDescriptionKey] as? String, !message.isEmpty {
            return message
        }
        return "XML parser error \(nsError.code)"
    }

    private final class TreeBuilder: NSObject, XMLParserDelegate {
        var root: ModelXMLElement?
        private var stack: [ModelXMLElement] = []

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            stack.append(ModelXMLElement(name: elementName, attributes: attributeDict, children: [], line: parser.lineNumber))
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            guard let finished = stack.popLast() else { return }
            if stack.isEmpty {
                root = finished
            } else {
                stack[stack.count - 1].children.append(finished)
            }
        }
    }
}

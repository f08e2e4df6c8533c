import Foundation

/// Why a model could not be loaded or used, and where the problem is.
///
/// Thrown by the model loader (with ``file`` and, where known, ``line``) and by the consistency
/// check a coordinator runs on a model built in code (with ``entityName`` and ``propertyName``).
/// ``description`` reads `file:line: element: message`.
public struct ModelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Equatable {
        /// The model file or folder does not exist or cannot be read.
        case unreadableFile
        /// The file is not well-formed XML or not a property list where one is expected.
        case malformedFile
        /// The file is XML but not a Core Data model (wrong root element).
        case notAModel
        /// A `.xcdatamodeld` package names no current version, or names one that is missing.
        case missingVersion
        /// A required XML attribute (such as `name`) is missing or empty.
        case missingAttribute
        /// An XML attribute has a value of the wrong form (a count that is not a number, …).
        case invalidValue
        /// `attributeType` names no Core Data attribute type.
        case unknownAttributeType
        /// `deletionRule` names no Core Data delete rule.
        case unknownDeleteRule
        /// Two entities share a name.
        case duplicateEntity
        /// Two properties of one entity (inherited ones included) share a name.
        case duplicateProperty
        /// A reference names an entity the model does not have.
        case missingEntity
        /// A reference names a property the entity does not have.
        case missingProperty
        /// A relationship's inverse is missing or does not point back.
        case invalidInverse
        /// An entity inherits, directly or not, from itself.
        case inheritanceCycle
        /// A relationship's counts contradict each other.
        case invalidCount
    }

    /// The kind of problem.
    public var code: Code
    /// What is wrong, in a sentence.
    public var message: String
    /// The file the problem is in, when loading from a file.
    public var file: URL?
    /// The 1-based line of the element, when known.
    public var line: Int?
    /// The entity the problem is in, when there is one.
    public var entityName: String?
    /// The property the problem is in, when there is one.
    public var propertyName: String?
    /// The XML element the problem is in, as it reads in the file, e.g. `<relationship name="owner">`.
    public var element: String?

    public init(
        _ code: Code, _ message: String, file: URL? = nil, line: Int? = nil,
        entityName: String? = nil, propertyName: String? = nil, element: String? = nil
    ) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
        self.entityName = entityName
        self.propertyName = propertyName
        self.element = element
    }

    public var description: String {
        var parts: [String] = []
        if let file {
            parts.append(line.map { "\(file.path):\($0)" } ?? file.path)
        }
        var place: [String] = []
        if let element { place.append(element) }
        if let entityName { place.append("entity '\(entityName)'") }
        if let propertyName { place.append("property '\(propertyName)'") }
        if !place.isEmpty { parts.append(place.joined(separator: " in ")) }
        parts.append(message)
        return parts.joined(separator: ": ")
    }
}

import Foundation

/// Reads key paths from objects, the way key-value coding does on Apple platforms, with one
/// difference that predicates rely on: stepping through a to-many value maps the rest of the path
/// over its elements and flattens nested collections, so `authors.books.title` is one list of titles.
///
/// Keys every object answers: `self` (the object itself); strings also answer `length`.
///
/// Collection operators: `@count`; `@sum`, `@avg`, `@min`, `@max` (of the elements, or of the rest
/// of the path read from each element); `@distinctUnionOfObjects`, `@unionOfObjects`,
/// `@distinctUnionOfArrays`, `@unionOfArrays`, `@distinctUnionOfSets`. An unknown operator reads as nil.
enum KeyPathReader {
    /// The value at `components` from `object`; nil when any step is missing.
    ///
    /// Complexity: O(total number of values visited).
    static func value(of object: Any?, components: ArraySlice<String>) -> Any? {
        guard let object = ValueKinds.unwrap(object) else { return nil }
        guard let key = components.first else { return object }
        let rest = components.dropFirst()
        if key.hasPrefix("@") {
            return collectionOperator(String(key.dropFirst()), on: object, rest: rest)
        }
        if let elements = ValueKinds.collection(object) {
            // To-many: read the key from each element, splicing in collections, then go on.
            var values: [Any?] = []
            for element in elements {
                let value = self.value(forKey: key, of: element)
                if let value, let nested = ValueKinds.collection(value) {
                    values.append(contentsOf: nested)
                } else {
                    values.append(value)
                }
            }
            return rest.isEmpty ? values : self.value(of: values, components: rest)
        }
        return self.value(of: value(forKey: key, of: object), components: rest)
    }

    /// One key of one object.
    static func value(forKey key: String, of object: Any?) -> Any? {
        guard let object = ValueKinds.unwrap(object) else { return nil }
        if let readable = object as? KeyValueReadable {
            if let value = readable.value(forKey: key) { return ValueKinds.unwrap(value) }
            return key == "self" ? object : nil
        }
        if let dictionary = object as? [String: Any] { return ValueKinds.unwrap(dictionary[key]) }
        if let dictionary = ValueKinds.dictionary(object) { return ValueKinds.unwrap(dictionary[AnyHashable(key)]) }
        if key == "self" { return object }
        // NSString's `length` (UTF-16 units), which validation predicates read (`length >= 3`).
        if key == "length", let string = ValueKinds.string(object) { return string.utf16.count }
        return mirrorValue(forKey: key, of: object)
    }

    /// A stored property by name, through `Mirror`: also `_key` (property wrappers store their
    /// value under the underscored name), and through superclasses.
    private static func mirrorValue(forKey key: String, of object: Any) -> Any? {
        var mirror: Mirror? = Mirror(reflecting: object)
        let wrapped = "_" + key
        while let current = mirror {
            for child in current.children where child.label == key || child.label == wrapped {
                if child.label == wrapped, let wrapper = Mirror(reflecting: child.value).children.first(where: { $0.label == "wrappedValue" }) {
                    return ValueKinds.unwrap(wrapper.value)
                }
                return ValueKinds.unwrap(child.value)
            }
            mirror = current.superclassMirror
        }
        return nil
    }

    /// The collection operators `collectionOperator` knows, without `@`.
    static let operatorNames: Set<String> = [
        "count", "sum", "avg", "min", "max", "unionOfObjects", "distinctUnionOfObjects", "unionOfArrays", "distinctUnionOfArrays",
        "distinctUnionOfSets",
    ]

    /// Whether a key path component is an `@` operator this reader does not know (which reads as
    /// nil here, and is Apple's undefined-key exception).
    static func isUnknownOperator(_ component: String) -> Bool {
        component.hasPrefix("@") && !operatorNames.contains(String(component.dropFirst()))
    }

    private static func collectionOperator(_ name: String, on object: Any, rest: ArraySlice<String>) -> Any? {
        guard let elements = ValueKinds.collection(object) else { return nil }
        // The operator consumes the rest of the path: it is read from each element.
        let values: [Any?] = rest.isEmpty ? elements : elements.map { value(of: $0, components: rest) }
        switch name {
        case "count":
            return elements.count
        case "sum":
            return Aggregates.sum(values)
        case "avg":
            return Aggregates.average(values)
        case "min":
            return Aggregates.minimum(values)
        case "max":
            return Aggregates.maximum(values)
        case "unionOfObjects":
            return values.filter { $0 != nil }
        case "distinctUnionOfObjects":
            return Aggregates.distinct(values.filter { $0 != nil })
        case "unionOfArrays", "distinctUnionOfArrays", "distinctUnionOfSets":
            var flattened: [Any?] = []
            for value in values {
                if let value, let nested = ValueKinds.collection(value) { flattened.append(contentsOf: nested) }
            }
            flattened = flattened.filter { $0 != nil }
            return name == "unionOfArrays" ? flattened : Aggregates.distinct(flattened)
        default:
            return nil
        }
    }
}

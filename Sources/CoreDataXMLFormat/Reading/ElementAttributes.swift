import CLibXML2
import Foundation

/// The attributes of one element as libxml2's SAX2 start-element callback hands them over (five
/// pointers each: local name, prefix, URI, value start, value end). A value becomes a `String`
/// only when asked for, so reading an element costs no dictionary.
///
/// Valid only during the callback that received the pointers.
struct ElementAttributes {
    let count: Int
    let pointers: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?

    /// The value of the attribute called `name`, or `nil` when the element has none.
    subscript(name: String) -> String? {
        guard let pointers else { return nil }
        for index in 0..<count {
            let base = index * 5
            guard let key = pointers[base], let start = pointers[base + 3], let end = pointers[base + 4] else { continue }
            let matches = name.withCString { strcmp($0, UnsafeRawPointer(key).assumingMemoryBound(to: CChar.self)) == 0 }
            if matches {
                return String(decoding: UnsafeBufferPointer(start: start, count: start.distance(to: end)), as: UTF8.self)
            }
        }
        return nil
    }
}

/// Finds classes by name in every Swift module loaded in the process, as the Objective-C runtime
/// finds a class by name on Apple platforms.
///
/// Swift's runtime keeps, for each loaded image, a section of type metadata records: one relative
/// reference per nominal type the image defines, to the type's context descriptor (its kind, its
/// parent context, its name). `swift_enumerateAllMetadataSections` (exported by the runtime on
/// ELF and COFF platforms, where Swift Testing uses it to discover tests) lists those sections;
/// the descriptors' layout is part of Swift's stable ABI.
///
/// Only classes whose every enclosing context is a module, class, struct or enum, none of them
/// generic, are found: private and local classes live in anonymous contexts, and generic classes
/// have no one type for a name (the Objective-C runtime does not find those by a plain name
/// either).
enum SwiftClassFinder {
    /// The mangled names (for `_typeByName`) of the classes whose qualified name is `name` or
    /// ends with `.` and `name`; in the order the runtime lists the images.
    static func classes(named name: String) -> [String] {
        #if os(Linux) || os(Android) || os(FreeBSD) || os(OpenBSD) || os(Windows)
        guard let last = name.split(separator: ".").last.map(String.init), !last.isEmpty else { return [] }
        let search = Search(name: name, lastComponent: last)
        withExtendedLifetime(search) {
            swift_enumerateAllMetadataSections({ sections, context in
                guard let context else { return false }
                Unmanaged<Search>.fromOpaque(context).takeUnretainedValue().scan(sections)
                return true
            }, Unmanaged.passUnretained(search).toOpaque())
        }
        return search.found
        #else
        return []
        #endif
    }

    /// Context descriptor kinds (`ContextDescriptorKind`).
    private enum Kind {
        static let module: UInt32 = 0
        static let `class`: UInt32 = 16
        static let `struct`: UInt32 = 17
        static let `enum`: UInt32 = 18
    }

    private final class Search {
        let name: String
        let lastComponent: [UInt8]
        var found: [String] = []

        init(name: String, lastComponent: String) {
            self.name = name
            self.lastComponent = Array(lastComponent.utf8)
        }

        /// Looks through one image's type metadata records (`MetadataSections.swift5_type_metadata`:
        /// after the version, base address and two unused words, and the two ranges of protocols
        /// and protocol conformances).
        func scan(_ sections: UnsafeRawPointer) {
            let word = MemoryLayout<UInt>.size
            guard sections.loadUnaligned(as: UInt.self) >= 1 else { return }
            let start = sections.loadUnaligned(fromByteOffset: 8 * word, as: UInt.self)
            let length = Int(sections.loadUnaligned(fromByteOffset: 9 * word, as: UInt.self))
            guard let records = UnsafeRawPointer(bitPattern: start), length > 0 else { return }
            var offset = 0
            while offset + 4 <= length {
                let record = records + offset
                offset += 4
                // `TypeMetadataRecord`: a relative reference whose low two bits are its kind.
                let value = record.loadUnaligned(as: Int32.self)
                let descriptor: UnsafeRawPointer?
                switch value & 3 {
                case 0: descriptor = record + Int(value & ~3)
                case 1: descriptor = (record + Int(value & ~3)).loadUnaligned(as: UnsafeRawPointer?.self)
                default: descriptor = nil  // Objective-C classes by name
                }
                guard let descriptor, descriptor.loadUnaligned(as: UInt32.self) & 0x1F == Kind.class,
                      nameMatches(descriptor)
                else { continue }
                if let mangled = mangledName(of: descriptor), !found.contains(mangled) { found.append(mangled) }
            }
        }

        /// Whether the descriptor's own name is the last component searched for, compared
        /// without making a string of every class's name.
        private func nameMatches(_ descriptor: UnsafeRawPointer) -> Bool {
            let cName = Self.relative(descriptor + 8).assumingMemoryBound(to: UInt8.self)
            for (index, byte) in lastComponent.enumerated() where cName[index] != byte { return false }
            return cName[lastComponent.count] == 0
        }

        /// The class's mangled name (`4main6GarageO3CarC` for `main.Garage.Car`) when its
        /// qualified name is the name searched for or ends with it, and it can be named.
        private func mangledName(of descriptor: UnsafeRawPointer) -> String? {
            var components: [(name: String, kind: UInt32)] = []
            var current: UnsafeRawPointer? = descriptor
            while let context = current {
                let flags = context.loadUnaligned(as: UInt32.self)
                let kind = flags & 0x1F
                guard [Kind.module, Kind.class, Kind.struct, Kind.enum].contains(kind), flags & 0x80 == 0 else { return nil }
                let name = String(cString: Self.relative(context + 8).assumingMemoryBound(to: CChar.self))
                components.append((name, kind))
                if kind == Kind.module { break }
                current = Self.relativeIndirectable(context + 4)
            }
            guard let module = components.last, module.kind == Kind.module else { return nil }
            components.reverse()
            let qualified = components.map(\.name).joined(separator: ".")
            guard qualified == name || qualified.hasSuffix("." + name) else { return nil }
            guard components.allSatisfy({ Self.isPlainIdentifier($0.name) }) else { return nil }
            var mangled = module.name == "Swift" ? "s" : "\(module.name.utf8.count)\(module.name)"
            for component in components.dropFirst() {
                let suffix = component.kind == Kind.class ? "C" : component.kind == Kind.struct ? "V" : "O"
                mangled += "\(component.name.utf8.count)\(component.name)\(suffix)"
            }
            return mangled
        }

        /// An identifier the mangling spells as its length and its characters (ASCII, not
        /// starting with a digit); others need Punycode, which is not worth it here.
        private static func isPlainIdentifier(_ name: String) -> Bool {
            guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
            return name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
            }
        }

        /// The target of a relative direct pointer (a 32-bit offset from its own address).
        private static func relative(_ pointer: UnsafeRawPointer) -> UnsafeRawPointer {
            pointer + Int(pointer.loadUnaligned(as: Int32.self))
        }

        /// The target of a relative indirectable pointer: with the low bit set, the offset leads
        /// to a pointer to the target.
        private static func relativeIndirectable(_ pointer: UnsafeRawPointer) -> UnsafeRawPointer? {
            let offset = pointer.loadUnaligned(as: Int32.self)
            guard offset != 0 else { return nil }
            if offset & 1 != 0 { return (pointer + Int(offset & ~1)).loadUnaligned(as: UnsafeRawPointer?.self) }
            return pointer + Int(offset)
        }
    }
}

#if os(Linux) || os(Android) || os(FreeBSD) || os(OpenBSD) || os(Windows)
/// Exported by Swift's runtime: calls `body` with each loaded image's `MetadataSections`
/// (SwiftShims' `MetadataSections.h`) until it returns `false`.
@_silgen_name("swift_enumerateAllMetadataSections")
private func swift_enumerateAllMetadataSections(
    _ body: @convention(c) (UnsafeRawPointer, UnsafeMutableRawPointer?) -> Bool,
    _ context: UnsafeMutableRawPointer?
)
#endif

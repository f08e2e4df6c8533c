// swift-tools-version:6.0
//
// Core Data for Linux. Targets depend one way, bottom to top:
//
//   CLZ4, CXXHash, CLibXML2  system libraries (apt: liblz4-dev, libxxhash-dev, libxml2-dev)
//   CoreDataPageCodec        LZ4 + XXH3 over byte buffers; no I/O (binary store pages)
//   CoreDataPredicate        NSPredicate, NSExpression, NSSortDescriptor: the format parser, the
//                            tree stores execute, and the reference evaluator; knows no model
//   CoreDataArchive          bounded decoder of Apple's binary property lists and NSKeyedArchiver
//                            archives (Formats/keyed-archive.md), with archived NSExpression/NSPredicate
//   CoreDataModel            the managed object model and the Xcode model loader; knows no store
//   CoreDataStorage          the store protocol, store records keyed by object ID, the in-memory
//                            row table and store; never sees a managed object
//   CoreDataFileSystem       the replaceable file layer (POSIX; tests swap in fault injection)
//   CoreDataBinaryFormat     the binary store's on-disk formats (Formats/binary-store.md, wal.md):
//                            encoders and decoders of bytes, no I/O (the CLI and fuzzers use it)
//   CoreDataBinaryStore      the binary store engine: log, group commit, checkpoint, page cache,
//                            index, recovery, verify, compaction, over CoreDataFileSystem
//   CoreDataXMLFormat        the XML store's format (Formats/xml-store.md): libxml2 SAX2 push decoder
//                            and streaming encoder of Apple's layout, row mapping; no I/O
//   CoreDataXMLStore         the XML store engine: the in-memory row table, loaded from and saved
//                            atomically to one file through CoreDataFileSystem
//   CoreData                 the public face: Apple's names, re-exports the layers below
//   coredata                 the file-inspection CLI
//   coredata-demo            the README's demo
//
// Tests/CoreDataTestSupport is a library target the test targets share: the fault-injecting file
// system and the crash workload run against both file stores.
//
// Fuzz targets live in their own package under Fuzz/ so that sanitizer builds never touch this one.
import PackageDescription

let package = Package(
    name: "CoreData",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "CoreData", targets: ["CoreData"]),
        // The engine under the store protocol, for tools and benchmarks that drive it directly.
        .library(name: "CoreDataBinaryStore", targets: ["CoreDataBinaryStore", "CoreDataStorage"]),
        .library(name: "CoreDataXMLStore", targets: ["CoreDataXMLStore", "CoreDataStorage"]),
        .executable(name: "coredata", targets: ["coredata"]),
        .executable(name: "coredata-demo", targets: ["coredata-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        .systemLibrary(
            name: "CXXHash",
            pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"])]
        ),
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .target(
            name: "CoreDataPageCodec",
            dependencies: ["CLZ4", "CXXHash"]
        ),
        .target(
            name: "CoreDataPredicate"
        ),
        .target(
            name: "CoreDataArchive",
            dependencies: ["CoreDataPredicate"]
        ),
        .target(
            name: "CoreDataModel",
            dependencies: ["CoreDataPredicate", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "CoreDataStorage",
            dependencies: ["CoreDataModel", "CoreDataPredicate"]
        ),
        .target(
            name: "CoreDataFileSystem"
        ),
        .target(
            name: "CoreDataBinaryFormat",
            dependencies: ["CoreDataPageCodec", "CoreDataStorage"]
        ),
        .target(
            name: "CoreDataBinaryStore",
            dependencies: ["CoreDataBinaryFormat", "CoreDataPageCodec", "CoreDataFileSystem", "CoreDataStorage", "CoreDataModel"]
        ),
        .target(
            name: "CoreDataXMLFormat",
            dependencies: ["CLibXML2", "CoreDataStorage", "CoreDataModel"]
        ),
        .target(
            name: "CoreDataXMLStore",
            dependencies: ["CoreDataXMLFormat", "CoreDataFileSystem", "CoreDataStorage", "CoreDataModel"]
        ),
        .target(
            name: "CoreData",
            dependencies: ["CoreDataModel", "CoreDataPredicate", "CoreDataArchive", "CoreDataStorage", "CoreDataBinaryFormat", "CoreDataBinaryStore", "CoreDataFileSystem", "CoreDataXMLStore", "CoreDataXMLFormat"]
        ),
        .executableTarget(
            name: "coredata",
            dependencies: [
                "CoreData", "CoreDataBinaryStore", "CoreDataBinaryFormat", "CoreDataXMLFormat", "CoreDataStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "coredata-demo",
            dependencies: ["CoreData"],
            resources: [.copy("Resources/Library.xcdatamodeld")]
        ),
        .testTarget(
            name: "CoreDataModelTests",
            dependencies: ["CoreDataModel", "CoreData"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "CoreDataPredicateTests",
            dependencies: ["CoreDataPredicate"]
        ),
        .testTarget(
            name: "CoreDataArchiveTests",
            dependencies: ["CoreDataArchive", "CoreDataPredicate"]
        ),
        .testTarget(
            name: "CoreDataTests",
            dependencies: ["CoreData", "CoreDataStorage", "CoreDataFileSystem", "CoreDataBinaryStore", "CoreDataTestSupport"]
        ),
        .testTarget(
            name: "CoreDataPageCodecTests",
            dependencies: ["CoreDataPageCodec"]
        ),
        .target(
            name: "CoreDataTestSupport",
            dependencies: ["CoreDataFileSystem", "CoreDataPageCodec", "CoreDataStorage", "CoreDataModel"],
            path: "Tests/CoreDataTestSupport"
        ),
        .testTarget(
            name: "CoreDataBinaryStoreTests",
            dependencies: ["CoreDataBinaryStore", "CoreDataBinaryFormat", "CoreDataPageCodec", "CoreDataStorage", "CoreDataModel", "CoreDataTestSupport"]
        ),
        .testTarget(
            name: "CoreDataXMLStoreTests",
            dependencies: [
                "CoreDataXMLStore", "CoreDataXMLFormat", "CoreDataFileSystem", "CoreDataStorage", "CoreDataModel", "CoreDataTestSupport",
                "CoreData", "CoreDataBinaryStore",
            ]
        ),
        .testTarget(
            name: "CoreDataBinaryFormatTests",
            dependencies: ["CoreDataBinaryFormat", "CoreDataBinaryStore", "CoreDataStorage", "CoreDataModel", "CoreDataPredicate", "CoreDataTestSupport"],
            exclude: ["Fixtures"]
        ),
        // Runs the built `coredata` as a process; depending on it makes `swift build --build-tests`
        // build the executable next to the test bundle.
        .testTarget(
            name: "CoreDataCLITests",
            dependencies: ["coredata", "CoreData", "CoreDataBinaryStore", "CoreDataBinaryFormat", "CoreDataStorage"]
        ),
        .testTarget(
            name: "AppleStyleClientTests",
            dependencies: ["CoreData"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Fuzz targets (Fuzz/README.md) exist only for fuzz builds: they export LLVMFuzzerTestOneInput and
// have no main, so an ordinary build must not see them.
if Context.environment["COREDATA_FUZZ"] == "1" {
    for name in ["FuzzModelLoader", "FuzzPredicateParser"] {
        package.targets.append(.executableTarget(name: name, dependencies: ["CoreData"], path: "Fuzz/\(name)"))
        package.products.append(.executable(name: name, targets: [name]))
    }
    // A model package's .xccurrentversion: the model layer only.
    package.targets.append(.executableTarget(name: "FuzzCurrentVersion", dependencies: ["CoreDataModel"], path: "Fuzz/FuzzCurrentVersion"))
    package.products.append(.executable(name: "FuzzCurrentVersion", targets: ["FuzzCurrentVersion"]))
    // The binary store's decoders (issue 9): the format and engine only, plus shared support.
    package.targets.append(.target(
        name: "FuzzBinarySupport",
        dependencies: ["CoreDataBinaryFormat", "CoreDataBinaryStore", "CoreDataPageCodec", "CoreDataStorage", "CoreDataModel"],
        path: "Fuzz/FuzzBinarySupport"))
    for name in ["FuzzBinaryHeader", "FuzzBinaryPage", "FuzzBinaryRecord", "FuzzLogFrame", "FuzzBinaryIndex", "FuzzBinaryStoreOpen"] {
        package.targets.append(.executableTarget(
            name: name,
            dependencies: ["FuzzBinarySupport", "CoreDataBinaryFormat", "CoreDataBinaryStore", "CoreDataStorage"],
            path: "Fuzz/\(name)"))
        package.products.append(.executable(name: name, targets: [name]))
    }
    // The XML store's reader (issue 6): the format target only, no store and no I/O.
    package.targets.append(.executableTarget(
        name: "FuzzXMLStoreReader", dependencies: ["CoreDataXMLFormat", "CoreDataStorage", "CoreDataModel"], path: "Fuzz/FuzzXMLStoreReader"))
    package.products.append(.executable(name: "FuzzXMLStoreReader", targets: ["FuzzXMLStoreReader"]))
    // Keyed archives (mapping models, compiled models): the archive layer and the predicate tree only.
    package.targets.append(.executableTarget(
        name: "FuzzKeyedArchive", dependencies: ["CoreDataArchive", "CoreDataPredicate"], path: "Fuzz/FuzzKeyedArchive"))
    package.products.append(.executable(name: "FuzzKeyedArchive", targets: ["FuzzKeyedArchive"]))
}

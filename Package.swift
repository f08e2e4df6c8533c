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
//   CSQLite                  system library (apt: libsqlite3-dev)
//   CoreDataSQL              the SQL stores' shared layout (one table per entity hierarchy, Apple's
//                            naming) and fetch-to-SQL translation, in an SQL dialect; no I/O
//   CoreDataSQLiteStore      Apple's SQLite store layout (Formats/apple-sqlite-store.md) on libsqlite3:
//                            the C API wrapper, value coding, the engine
//   CSwiftRuntime            the Swift runtime's swift_tryRetain, for the context's registry
//   CoreData                 the public face: Apple's names, re-exports the layers below
//   CoreDataPostgreSQLStore  the PostgreSQL store engine (Formats/postgresql-store.md) on postgres-nio
//   CoreDataPostgreSQL       the product a server app adds: NSPostgreSQLStoreType's engine, registered
//                            with CoreData; apps that do not add it never build postgres-nio
//   coredata                 the file-inspection CLI
//   coredata-demo            the README's demo (on the binary store, or on PostgreSQL given a URL)
//   coredata-bench           the benchmark program beside SQLite (BENCHMARKS.md); not a product
//
// Tests/CoreDataTestSupport is a library target the test targets share: the fault-injecting file
// system and the crash workload run against both file stores. Tests/CoreDataTestModel holds the
// one all-attribute-types test model; the test suites and the fuzz targets both build on it.
//
// Fuzz targets (Fuzz/README.md): their bodies are the library FuzzTargets (with FuzzBinarySupport),
// built always so that CoreDataFuzzReplayTests replays every seed corpus through them; the
// libFuzzer executables around them exist only in fuzz builds (COREDATA_FUZZ=1, at the end).
import PackageDescription

let package = Package(
    name: "CoreData",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "CoreData", targets: ["CoreData"]),
        // The engine under the store protocol, for tools and benchmarks that drive it directly.
        .library(name: "CoreDataBinaryStore", targets: ["CoreDataBinaryStore", "CoreDataStorage"]),
        .library(name: "CoreDataXMLStore", targets: ["CoreDataXMLStore", "CoreDataStorage"]),
        // The PostgreSQL store (issue 17): `import CoreDataPostgreSQL` beside `import CoreData`.
        .library(name: "CoreDataPostgreSQL", targets: ["CoreDataPostgreSQL"]),
        .executable(name: "coredata", targets: ["coredata"]),
        .executable(name: "coredata-demo", targets: ["coredata-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
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
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
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
            dependencies: ["CoreDataPredicate", "CoreDataArchive", .product(name: "Crypto", package: "swift-crypto")]
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
            dependencies: [
                "CoreDataBinaryFormat", "CoreDataPageCodec", "CoreDataFileSystem", "CoreDataStorage", "CoreDataModel",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
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
            name: "CoreDataSQL",
            dependencies: ["CoreDataStorage", "CoreDataModel", "CoreDataPredicate"]
        ),
        .target(
            name: "CoreDataSQLiteStore",
            dependencies: ["CSQLite", "CoreDataSQL", "CoreDataStorage", "CoreDataModel", "CoreDataPredicate"]
        ),
        .target(
            name: "CoreDataPostgreSQLStore",
            dependencies: [
                "CoreDataSQL", "CoreDataStorage", "CoreDataModel", "CoreDataPredicate",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "CoreDataPostgreSQL",
            dependencies: ["CoreData", "CoreDataPostgreSQLStore", "CoreDataStorage"]
        ),
        // The one Swift runtime entry point the language has no spelling for (swift_tryRetain),
        // for the context's registry of unretained objects.
        .target(
            name: "CSwiftRuntime"
        ),
        .target(
            name: "CoreData",
            dependencies: [
                "CoreDataModel", "CoreDataPredicate", "CoreDataArchive", "CoreDataStorage", "CoreDataBinaryFormat", "CoreDataBinaryStore",
                "CoreDataFileSystem", "CoreDataXMLStore", "CoreDataXMLFormat", "CoreDataSQLiteStore", "CSwiftRuntime",
            ]
        ),
        .executableTarget(
            name: "coredata",
            dependencies: [
                "CoreData", "CoreDataBinaryStore", "CoreDataBinaryFormat", "CoreDataXMLFormat", "CoreDataStorage", "CoreDataSQLiteStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The benchmark program (BENCHMARKS.md): the binary and XML stores, through the store
        // protocol and through managed objects, beside SQLite's C API in one process run. No product,
        // so it never reaches a package that depends on this one; a target of this package so that
        // CI's test build compiles it beside the library instead of building the library again.
        .executableTarget(
            name: "coredata-bench",
            dependencies: [
                "CoreData", "CoreDataBinaryStore", "CoreDataXMLStore", "CoreDataStorage", "CoreDataPostgreSQL", "CSQLite",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "coredata-demo",
            dependencies: ["CoreData", "CoreDataPostgreSQL"],
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
            dependencies: [
                "CoreData", "CoreDataStorage", "CoreDataFileSystem", "CoreDataBinaryStore", "CoreDataBinaryFormat", "CoreDataSQLiteStore",
                "CoreDataTestSupport", "CoreDataPostgreSQL", "CoreDataPostgreSQLStore",
            ]
        ),
        .testTarget(
            name: "CoreDataPageCodecTests",
            dependencies: ["CoreDataPageCodec"]
        ),
        // The one all-attribute-types test model and the models composed from it, shared by the
        // test suites (through CoreDataTestSupport, which re-exports it) and the fuzz targets, so
        // neither depends on the other.
        .target(
            name: "CoreDataTestModel",
            dependencies: ["CoreDataModel", "CoreDataStorage"],
            path: "Tests/CoreDataTestModel"
        ),
        .target(
            name: "CoreDataTestSupport",
            dependencies: ["CoreDataFileSystem", "CoreDataPageCodec", "CoreDataStorage", "CoreDataModel", "CoreDataTestModel"],
            path: "Tests/CoreDataTestSupport"
        ),
        // Needs no store: checks the throwaway PostgreSQL server the store's tests run against
        // (.ci/postgres.sh, PostgreSQLTestServer) with postgres-nio alone.
        .testTarget(
            name: "CoreDataPostgreSQLServerTests",
            dependencies: ["CoreDataTestSupport", .product(name: "PostgresNIO", package: "postgres-nio")]
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
        // What the fuzz targets share: the golden store's catalog (its model is CoreDataTestModel's),
        // an in-memory file system, the checksum fixer.
        .target(
            name: "FuzzBinarySupport",
            dependencies: ["CoreDataBinaryFormat", "CoreDataBinaryStore", "CoreDataPageCodec", "CoreDataStorage", "CoreDataModel", "CoreDataTestModel"],
            path: "Fuzz/FuzzBinarySupport"
        ),
        // The body of every fuzz target, `<Target>.run(bytes)`, and the binary targets' corpus maker.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "CoreData", "CoreDataModel", "CoreDataPredicate", "CoreDataArchive", "CoreDataStorage", "CoreDataBinaryFormat",
                "CoreDataBinaryStore", "CoreDataPageCodec", "CoreDataXMLFormat", "CoreDataSQLiteStore", "CoreDataTestModel", "FuzzBinarySupport",
            ],
            path: "Fuzz/FuzzTargets"
        ),
        // Replays every file of Fuzz/Corpus/<Target>/ through its target's body.
        .testTarget(
            name: "CoreDataFuzzReplayTests",
            dependencies: ["FuzzTargets"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer executables (Fuzz/README.md) exist only for fuzz builds: they export
// LLVMFuzzerTestOneInput and have no main, so an ordinary build must not see them. Each is a shim
// around its body in FuzzTargets.
if Context.environment["COREDATA_FUZZ"] == "1" {
    let fuzzTargets = [
        "FuzzModelLoader", "FuzzCurrentVersion", "FuzzPredicateParser", "FuzzBinaryHeader", "FuzzBinaryPage", "FuzzBinaryRecord",
        "FuzzLogFrame", "FuzzBinaryIndex", "FuzzBinaryStoreOpen", "FuzzBinaryStoreSaves", "FuzzXMLStoreReader", "FuzzKeyedArchive",
        "FuzzAppleSQLiteStore",
    ]
    for name in fuzzTargets {
        package.targets.append(.executableTarget(name: name, dependencies: ["FuzzTargets"], path: "Fuzz/\(name)"))
        package.products.append(.executable(name: name, targets: [name]))
    }
}

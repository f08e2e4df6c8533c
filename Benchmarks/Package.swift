// swift-tools-version:6.0
//
// The benchmark program (BENCHMARKS.md): the binary and XML stores, through the store protocol and through
// managed objects, side by side with SQLite's C API in the same process run. Its own package so
// that the benchmark code never reaches users of the library. Its SQLite module is CBenchSQLite:
// target names must be unique across the package graph, and the library has its own CSQLite.
import PackageDescription

let package = Package(
    name: "CoreDataBenchmarks",
    dependencies: [
        .package(name: "CoreData", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CBenchSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .executableTarget(
            name: "coredata-bench",
            dependencies: [
                "CBenchSQLite",
                .product(name: "CoreData", package: "CoreData"),
                .product(name: "CoreDataBinaryStore", package: "CoreData"),
                .product(name: "CoreDataXMLStore", package: "CoreData"),
                .product(name: "CoreDataPostgreSQL", package: "CoreData"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

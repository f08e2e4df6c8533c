// swift-tools-version:6.0
//
// The benchmark program (BENCHMARKS.md): the binary and XML stores, through the store protocol and through
// managed objects, side by side with SQLite's C API in the same process run. Its own package so
// that SQLite and the argument parser never reach users of the library.
import PackageDescription

let package = Package(
    name: "CoreDataBenchmarks",
    dependencies: [
        .package(name: "CoreData", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .executableTarget(
            name: "coredata-bench",
            dependencies: [
                "CSQLite",
                .product(name: "CoreData", package: "CoreData"),
                .product(name: "CoreDataBinaryStore", package: "CoreData"),
                .product(name: "CoreDataXMLStore", package: "CoreData"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

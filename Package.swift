// swift-tools-version: 6.1
import PackageDescription

// One target per layer; imports only go down (see DESIGN.md in ../shared).
// C libraries are reached only through their thin Swift wrapper.
let package = Package(
  name: "graphvault",
  platforms: [.macOS(.v14)],
  // What an app or a test suite imports: the model, the object context (with the property-list
  // values its transformable and extended attributes hold), migration stages, the services, and
  // fixtures in tests. The other layers (the SQLite, libarchive and zlib wrappers, JSON, the
  // archive format and storage, S3) are the package's own.
  products: [
    .executable(name: "graphvault", targets: ["graphvault"]),
    .library(name: "PropertyList", targets: ["PropertyList"]),
    .library(name: "ObjectModel", targets: ["ObjectModel"]),
    .library(name: "ObjectStore", targets: ["ObjectStore"]),
    .library(name: "Migration", targets: ["Migration"]),
    .library(name: "GraphVault", targets: ["GraphVault"]),
    .library(name: "GraphVaultTesting", targets: ["GraphVaultTesting"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
  ],
  targets: [
    // C libraries (system).
    .systemLibrary(
      name: "CSQLite", pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
    .systemLibrary(
      name: "CArchive", pkgConfig: "libarchive",
      providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]),
    .systemLibrary(
      name: "CZlib", pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
    .systemLibrary(
      name: "CZstd", pkgConfig: "libzstd",
      providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]),
    // glibc's allocator tuning, for the executable.
    .systemLibrary(name: "CMalloc"),
    // fallocate(2), for files read back and given up as they are read.
    .systemLibrary(name: "CFile"),

    // Byte buffers made ready to be filled in place, below every layer that reads or
    // decompresses into them.
    .target(name: "Bytes"),

    // Thin typed wrappers.
    .target(name: "SQLite", dependencies: ["CSQLite"]),
    .target(name: "LibArchive", dependencies: ["CArchive", "Bytes"]),
    .target(name: "Zlib", dependencies: ["CZlib"]),
    .target(name: "Zstd", dependencies: ["CZstd", "Bytes"]),

    // A small S3 client: Signature Version 4, the requests graphvault needs, retries.
    .target(name: "S3", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),

    // Durable file writes (temporary file, fsync, rename) and kernel file locks, below every
    // layer that writes files.
    .target(name: "DurableIO"),

    // Property lists: binary, XML, keyed archives.
    .target(
      name: "PropertyList", linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]),

    // JSON text, read as a stream and written deterministically (export and import).
    .target(name: "JSON"),

    // Model descriptions and their loaders.
    .target(
      name: "ObjectModel",
      dependencies: ["PropertyList", "Zlib", .product(name: "Crypto", package: "swift-crypto")]),

    // The object graph and Core Data's SQLite store layout.
    .target(
      name: "ObjectStore",
      dependencies: [
        "ObjectModel", "PropertyList", "SQLite", "DurableIO", "CFile", "Bytes",
        .product(name: "Crypto", package: "swift-crypto"),
      ]),

    // The migration engine: plans, hops, inferred rules, mapping files, custom stages, writer.
    .target(name: "Migration", dependencies: ["ObjectStore", "ObjectModel", "PropertyList"]),

    // The archive format: layout and versions, header and index, record coding, checksums,
    // compression. Knows nothing of where archives are kept.
    .target(
      name: "ArchiveFormat",
      dependencies: [
        "ObjectStore", "ObjectModel", "PropertyList", "LibArchive", "Zstd", "Bytes",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "_CryptoExtras", package: "swift-crypto"),
      ]),

    // Where archives live: the storage-backend protocol, the local folder, naming, locks.
    .target(name: "ArchiveStorage", dependencies: ["DurableIO", "S3", "Bytes"]),

    // The services the command line calls (backup, restore, verify, list, model, create,
    // sample), thin, composing the rooms above.
    .target(
      name: "GraphVault",
      dependencies: [
        "ArchiveFormat", "ArchiveStorage", "Migration", "ObjectStore", "ObjectModel", "LibArchive",
        "PropertyList", "JSON", "SQLite", "DurableIO", "S3",
        .product(name: "Crypto", package: "swift-crypto"),
      ]),

    // For test suites: a fixture (archive or JSON) loaded into a temporary store in one call,
    // and objects to and from JSON.
    .target(name: "GraphVaultTesting", dependencies: ["GraphVault", "ObjectStore", "ObjectModel"]),

    // The command-line tool.
    .executableTarget(
      name: "graphvault",
      dependencies: [
        "GraphVault", "ArchiveFormat", "ArchiveStorage", "ObjectStore", "CMalloc",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),

    // Release-built benchmark (not a test): `swift run -c release gvbench`.
    .executableTarget(
      name: "gvbench", dependencies: ["PropertyList", "ObjectModel", "ObjectStore", "GraphVault"]),

    // Test support and tests.
    .target(
      name: "TestSupport",
      dependencies: [
        "LibArchive", "SQLite", "PropertyList", .product(name: "Crypto", package: "swift-crypto"),
      ], path: "Tests/TestSupport"),
    .testTarget(name: "BytesTests", dependencies: ["Bytes"]),
    .testTarget(name: "SQLiteTests", dependencies: ["SQLite", "TestSupport"]),
    .testTarget(name: "LibArchiveTests", dependencies: ["LibArchive", "TestSupport"]),
    .testTarget(name: "ZlibTests", dependencies: ["Zlib", "TestSupport"]),
    .testTarget(name: "ZstdTests", dependencies: ["Zstd"]),
    .testTarget(
      name: "PropertyListTests",
      dependencies: ["PropertyList", "Zlib", "SQLite", "TestSupport"]),
    .testTarget(
      name: "GraphVaultTestingTests",
      dependencies: [
        "GraphVaultTesting", "GraphVault", "ObjectStore", "ObjectModel", "PropertyList",
        "TestSupport",
      ]),
    .testTarget(name: "JSONTests", dependencies: ["JSON", "TestSupport"]),
    .testTarget(name: "ObjectModelTests", dependencies: ["ObjectModel", "TestSupport"]),
    .testTarget(
      name: "ObjectStoreTests",
      dependencies: ["ObjectStore", "ObjectModel", "SQLite", "TestSupport"]),
    .testTarget(name: "DurableIOTests", dependencies: ["DurableIO", "TestSupport"]),
    .testTarget(
      name: "ArchiveFormatTests",
      dependencies: [
        "ArchiveFormat", "GraphVault", "ObjectStore", "ObjectModel", "LibArchive", "PropertyList",
        "TestSupport",
      ]),
    .testTarget(
      name: "ArchiveStorageTests", dependencies: ["ArchiveStorage", "S3", "TestSupport"]),
    .testTarget(name: "S3Tests", dependencies: ["S3", "TestSupport"]),
    .testTarget(
      name: "MigrationTests",
      dependencies: [
        "Migration", "GraphVault", "ObjectStore", "ObjectModel", "PropertyList", "SQLite",
        "TestSupport",
      ]),
    .testTarget(
      name: "GraphVaultTests",
      dependencies: [
        "GraphVault", "ArchiveFormat", "ObjectStore", "ObjectModel", "LibArchive", "PropertyList",
        "SQLite", "TestSupport", .product(name: "Crypto", package: "swift-crypto"),
      ]),
    .testTarget(name: "GraphvaultCLITests", dependencies: ["TestSupport"]),
  ],
  swiftLanguageModes: [.v6]
)

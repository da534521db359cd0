import Foundation
import TestSupport
import Testing

@Suite("The package's layers")
struct PackageLayoutTests {
  /// The layer table of docs/DEVELOPMENT.md, top to bottom: a target imports only targets of lower rows.
  static let layers: [[String]] = [
    ["graphvault", "gvbench", "GraphVaultTesting"],
    ["GraphVault"],
    ["ArchiveFormat", "Migration", "ArchiveStorage"],
    ["ObjectStore"],
    ["ObjectModel"],
    ["PropertyList", "JSON", "SQLite", "LibArchive", "Zlib", "Zstd", "DurableIO", "S3"],
    ["Bytes"],
    ["CSQLite", "CArchive", "CZlib", "CZstd", "CMalloc", "CFile"],
  ]

  static func rank(_ target: String) -> Int? {
    layers.firstIndex { $0.contains(target) }
  }

  @Test func everyTargetImportsOnlyTheLayersBelowIt() throws {
    let sources = SharedFixtures.packageRoot.appendingPathComponent("Sources")
    let targets = try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
    // Every target has a row, and every row names a target.
    #expect(Set(targets) == Set(Self.layers.joined()))
    var checked = 0
    for target in targets {
      let rank = try #require(Self.rank(target))
      let folder = sources.appendingPathComponent(target)
      guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
      for case let file as String in files where file.hasSuffix(".swift") {
        let text = try String(
          contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
        for line in text.split(separator: "\n") {
          let words = line.split(separator: " ").map(String.init)
          guard let position = words.firstIndex(of: "import"), position + 1 < words.count,
            words[..<position].allSatisfy({ ["internal", "public", "package"].contains($0) })
          else { continue }
          let module = words[position + 1]
          guard let imported = Self.rank(module) else { continue }  // Foundation, Crypto, …
          checked += 1
          #expect(
            imported > rank, "\(target)/\(file) imports \(module), which is not below it")
        }
      }
    }
    #expect(checked > 50)
  }
}

import Foundation

/// What the store-level benchmarks share: the release-built `graphvault` beside this
/// benchmark, the sample model, and a scratch folder removed afterwards.
struct BenchWorkspace {
  let tool: String
  let model: String
  let folder: URL

  /// Finds the tool and makes the folder; exits with a message when the tool is not built.
  init() throws {
    tool =
      URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("graphvault").path
    guard FileManager.default.isExecutableFile(atPath: tool) else {
      FileHandle.standardError.write(
        Data("gvbench: build graphvault first: swift build -c release --product graphvault\n".utf8))
      exit(1)
    }
    model =
      URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
      .appendingPathComponent("Fixtures/Library.xcdatamodeld").path
    folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "gvbench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  }

  /// A path in the scratch folder.
  func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

  /// The size of a file in the scratch folder, in bytes.
  func size(_ name: String) -> Double {
    ((try? FileManager.default.attributesOfItem(atPath: path(name)))?[.size] as? NSNumber)?
      .doubleValue ?? 0
  }

  /// Removes the scratch folder.
  func remove() { try? FileManager.default.removeItem(at: folder) }
}

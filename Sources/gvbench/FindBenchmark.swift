import Foundation
import GraphVault

/// `graphvault find` of a small entity (tags), and of books by their titles, across 30 nightly
/// backups of a generated library
/// store of `objects` objects: the bytes it reads against the archives' total, its time against
/// one restore of one archive, and its peak RSS; then the same at five times the size, for
/// memory.
func findBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  func path(_ name: String) -> String { workspace.path(name) }
  print(
    "| store | search | archives | bytes read | of the archives | share | find | one restore | peak RSS |"
  )
  print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
  for size in [objects, objects * 5] {
    FileHandle.standardError.write(Data("gvbench find: generating \(size) objects\n".utf8))
    let store = path("store-\(size).sqlite")
    try SampleLibrary.generate(at: store, objects: size)
    let folder = path("nightly-\(size)") + "/"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    try runSucceeding(
      workspace.tool, ["backup", store, "--output", folder + "first.gvault", "-q"],
      failure: "backup failed")
    // Thirty nights of one store: copies of the backup under nightly names (the archives'
    // contents do not change what find reads of each).
    for night in 1...30 {
      try FileManager.default.copyItem(
        atPath: folder + "first.gvault",
        toPath: folder + String(format: "store-202611%02dT030000.000Z.gvault", night))
    }
    try FileManager.default.removeItem(atPath: folder + "first.gvault")
    let restore = try runMeasured(
      workspace.tool,
      [
        "restore", folder + "store-20261101T030000.000Z.gvault", "--to",
        path("restored-\(size).sqlite"), "-q",
      ])
    // Every tag; one book by its title (the entity with most of the bytes: its titles are
    // read, and the one chunk holding it); the books of some thousand titles.
    for search in [
      ["--entity", "Tag"], ["--entity", "Book", "--where", "title BEGINSWITH 'Book 12345:'"],
      ["--entity", "Book", "--where", "title BEGINSWITH 'Book 1234'"],
    ] {
      let best = try bestOfThree(workspace.tool) { _ in ["find", folder] + search + ["-q"] }
      let command =
        "'\(workspace.tool)' find '\(folder)' "
        + search.map { "'\($0.replacingOccurrences(of: "'", with: "'\\''"))'" }.joined(
          separator: " ") + " --json 2>/dev/null"
      let json =
        try JSONSerialization.jsonObject(with: Data(shellOutput(command).utf8)) as? [String: Any]
        ?? [:]
      let read = (json["bytesRead"] as? NSNumber)?.int64Value ?? 0
      let total = (json["bytes"] as? NSNumber)?.int64Value ?? 1
      print(
        "| \(size) objects | `\(search.dropFirst().joined(separator: " "))` | 30 | "
          + String(
            format: "%lld | %lld | %.2f%% | %.2f s | %.2f s | %d MiB |", read, total,
            Double(read) * 100 / Double(total), best.seconds, restore.seconds,
            best.peakKiB / 1024))
    }
  }
}

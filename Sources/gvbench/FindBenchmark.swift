import Foundation
import GraphVault

/// `graphvault find` of a small entity (tags) across 30 nightly backups of a generated library
/// store of `objects` objects: the bytes it reads against the archives' total, its time against
/// one restore of one archive, and its peak RSS; then the same at five times the size, for
/// memory.
func findBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  func path(_ name: String) -> String { workspace.path(name) }
  print(
    "| store | archives | bytes read | of the archives | share | find | one restore | peak RSS |")
  print("|---|---:|---:|---:|---:|---:|---:|---:|")
  for size in [objects, objects * 5] {
    FileHandle.standardError.write(Data("gvbench find: generating \(size) objects\n".utf8))
    let store = path("store-\(size).sqlite")
    try SampleLibrary.generate(at: store, objects: size)
    let folder = path("nightly-\(size)") + "/"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    let first = try runMeasured(
      workspace.tool,
      ["backup", store, "--output", folder + "first.gvault", "-q"])
    guard first.status == 0 else {
      throw NSError(
        domain: "gvbench", code: 1, userInfo: [NSLocalizedDescriptionKey: "backup failed"])
    }
    // Thirty nights of one store: copies of the backup under nightly names (the archives'
    // contents do not change what find reads of each).
    for night in 1...30 {
      try FileManager.default.copyItem(
        atPath: folder + "first.gvault",
        toPath: folder + String(format: "store-202611%02dT030000.000Z.gvault", night))
    }
    try FileManager.default.removeItem(atPath: folder + "first.gvault")
    let best = try bestOfThree(workspace.tool) { _ in ["find", folder, "--entity", "Tag", "-q"] }
    let command = "'\(workspace.tool)' find '\(folder)' --entity Tag --json 2>/dev/null"
    let json =
      try JSONSerialization.jsonObject(with: Data(shellOutput(command).utf8)) as? [String: Any]
      ?? [:]
    let read = (json["bytesRead"] as? NSNumber)?.int64Value ?? 0
    let total = (json["bytes"] as? NSNumber)?.int64Value ?? 1
    let restore = try runMeasured(
      workspace.tool,
      [
        "restore", folder + "store-20261101T030000.000Z.gvault", "--to",
        path("restored-\(size).sqlite"), "-q",
      ])
    print(
      String(
        format: "| %d objects | 30 | %lld | %lld | %.2f%% | %.2f s | %.2f s | %d MiB |", size, read,
        total, Double(read) * 100 / Double(total), best.seconds, restore.seconds,
        best.peakKiB / 1024))
  }
}

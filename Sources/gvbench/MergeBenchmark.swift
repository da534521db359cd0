import Foundation
import GraphVault

/// `graphvault merge` bringing back books 1000 to 1299 (by title, with their pages; about a
/// thousand objects with their authors) into a generated library store they were deleted from, at `objects / 5` and
/// `objects`: from the backup taken before the deletion, and from that backup restored as a
/// store; each against a fresh copy of the store with the books deleted. Best of three.
func mergeBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  func path(_ name: String) -> String { workspace.path(name) }
  print(
    "| store | objects merged | from the archive | from a store | peak RSS (archive) | peak RSS (store) |"
  )
  print("|---|---:|---:|---:|---:|---:|")
  for size in [objects / 5, objects] {
    FileHandle.standardError.write(Data("gvbench merge: generating \(size) objects\n".utf8))
    let store = path("store-\(size).sqlite")
    try SampleLibrary.generate(at: store, objects: size)
    let archive = path("before-\(size).gvault")
    let source = path("before-\(size).sqlite")
    guard
      try runMeasured(workspace.tool, ["backup", store, "--output", archive, "-q"]).status == 0,
      try runMeasured(workspace.tool, ["restore", archive, "--to", source, "-q"]).status == 0
    else {
      throw NSError(
        domain: "gvbench", code: 1, userInfo: [NSLocalizedDescriptionKey: "backup failed"])
    }
    let counted = try shellOutput(
      "sqlite3 '\(store)' \"SELECT count(*) + (SELECT count(*) FROM ZPAGE WHERE ZBOOK IN (SELECT Z_PK FROM ZBOOK WHERE ZTITLE GLOB 'Book 1[0-2][0-9][0-9]:*')) FROM ZBOOK WHERE ZTITLE GLOB 'Book 1[0-2][0-9][0-9]:*'\""
    )
    _ = try timedShell(
      """
      sqlite3 '\(store)' "
        DELETE FROM Z_1TAGS WHERE Z_1BOOKS IN (SELECT Z_PK FROM ZBOOK WHERE ZTITLE GLOB 'Book 1[0-2][0-9][0-9]:*');
        DELETE FROM ZPAGE WHERE ZBOOK IN (SELECT Z_PK FROM ZBOOK WHERE ZTITLE GLOB 'Book 1[0-2][0-9][0-9]:*');
        DELETE FROM ZBOOK WHERE ZTITLE GLOB 'Book 1[0-2][0-9][0-9]:*';"
      """)
    func merge(from input: String) throws -> Measured {
      // Each round merges into a fresh copy of the store with the books deleted.
      let target = path("target-\(size).sqlite")
      return try bestOfThree(workspace.tool) { _ in
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: store, toPath: target)
        return [
          "merge", input, "--into", target, "--entity", "Book", "--where",
          "title MATCHES 'Book 1[0-2][0-9][0-9]:.*'", "--include", "pages", "-q",
        ]
      }
    }
    let fromArchive = try merge(from: archive)
    let fromStore = try merge(from: source)
    print(
      String(
        format: "| %d objects | %@ | %.2f s | %.2f s | %d MiB | %d MiB |", size,
        counted.trimmingCharacters(in: .whitespacesAndNewlines), fromArchive.seconds,
        fromStore.seconds, fromArchive.peakKiB / 1024, fromStore.peakKiB / 1024))
  }
}

/// The standard output of a shell command.
func shellOutput(_ command: String) throws -> String {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/sh")
  process.arguments = ["-c", command]
  let pipe = Pipe()
  process.standardOutput = pipe
  try process.run()
  let data = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return String(decoding: data, as: UTF8.self)
}

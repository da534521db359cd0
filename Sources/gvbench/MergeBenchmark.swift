import Foundation
import GraphVault

/// `graphvault merge` bringing back deleted books with their pages (by title: books 1000 to
/// 1299, about a thousand objects with their authors, and books 10000 to 13999, about thirteen
/// thousand) into a generated library store they were deleted from, at `objects / 5` and
/// `objects`: from the backup taken before the deletion (read in part, what the selection
/// reaches), and from that backup restored as a store; each against a plain restore of the same
/// archive in the same run, and each round into a fresh copy of the store with the books
/// deleted. Best of three. And a fixture of the same selection cut from the archive (read in
/// part too), against the same restore.
func mergeBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  func path(_ name: String) -> String { workspace.path(name) }
  print(
    "| store | books | objects merged | restore | from the archive | ratio | from a store | ratio | peak RSS (archive) | fixture from the archive | ratio |"
  )
  print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  let selections = [
    ("1000–1299", "Book 1[0-2][0-9][0-9]:*", "Book 1[0-2][0-9][0-9]:.*"),
    ("10000–13999", "Book 1[0-3][0-9][0-9][0-9]:*", "Book 1[0-3][0-9][0-9][0-9]:.*"),
  ]
  for size in [objects / 5, objects] {
    FileHandle.standardError.write(Data("gvbench merge: generating \(size) objects\n".utf8))
    let store = path("store-\(size).sqlite")
    try SampleLibrary.generate(at: store, objects: size)
    let archive = path("before-\(size).gvault")
    let source = path("before-\(size).sqlite")
    try runSucceeding(
      workspace.tool, ["backup", store, "--output", archive, "-q"], failure: "backup failed")
    try runSucceeding(
      workspace.tool, ["restore", archive, "--to", source, "-q"], failure: "backup failed")
    let restored = path("restored-\(size).sqlite")
    let restore = try bestOfThree(workspace.tool) { _ in
      ["restore", archive, "--to", restored, "--force", "-q"]
    }
    for (label, glob, pattern) in selections {
      let deleted = path("deleted-\(size).sqlite")
      try copyStore(store, to: deleted)
      let counted = try shellOutput(
        "sqlite3 '\(deleted)' \"SELECT count(*) + (SELECT count(*) FROM ZPAGE WHERE ZBOOK IN (SELECT Z_PK FROM ZBOOK WHERE ZTITLE GLOB '\(glob)')) FROM ZBOOK WHERE ZTITLE GLOB '\(glob)'\""
      )
      try deleteBooks(titled: glob, from: deleted)
      func merge(from input: String) throws -> Measured {
        let target = path("target-\(size).sqlite")
        return try bestOfThree(workspace.tool) { _ in
          // The last round's merge left its write-ahead log (a WAL store stays WAL).
          try copyStore(deleted, to: target)
          return [
            "merge", input, "--into", target, "--entity", "Book", "--where",
            "title MATCHES '\(pattern)'", "--include", "pages", "-q",
          ]
        }
      }
      let fromArchive = try merge(from: archive)
      let fromStore = try merge(from: source)
      let fixture = try bestOfThree(workspace.tool) { round in
        [
          "fixture", archive, "--entity", "Book", "--where", "title MATCHES '\(pattern)'",
          "--include", "pages", "--output", path("fixture-\(size)-\(label)-\(round).gvault"),
          "-q",
        ]
      }
      print(
        String(
          format:
            "| %d objects | %@ | %@ | %.2f s | %.2f s | %.2f× | %.2f s | %.2f× | %d MiB | %.2f s | %.2f× |",
          size, label, counted.trimmingCharacters(in: .whitespacesAndNewlines),
          restore.seconds, fromArchive.seconds, fromArchive.seconds / restore.seconds,
          fromStore.seconds, fromStore.seconds / restore.seconds, fromArchive.peakKiB / 1024,
          fixture.seconds, fixture.seconds / restore.seconds))
    }
  }
}

/// Deletes the books whose titles match `glob` from the sample store at `store`, with their
/// pages and tag links, in SQL.
func deleteBooks(titled glob: String, from store: String) throws {
  _ = try timedShell(
    """
    sqlite3 '\(store)' "
      DELETE FROM Z_1TAGS WHERE Z_1BOOKS IN (SELECT Z_PK FROM ZBOOK WHERE ZTITLE GLOB '\(glob)');
      DELETE FROM ZPAGE WHERE ZBOOK IN (SELECT Z_PK FROM ZBOOK WHERE ZTITLE GLOB '\(glob)');
      DELETE FROM ZBOOK WHERE ZTITLE GLOB '\(glob)';"
    """)
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

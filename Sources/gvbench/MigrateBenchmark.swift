import Foundation
import GraphVault

/// `graphvault migrate` of a change Core Data makes in SQL (the sample model with one optional
/// attribute added, `Book.subtitle`), and a migrating restore to that model, each against a
/// plain restore of the same archive in the same run; a `diff` of the store against its
/// migrated copy (the older side migrated into the newer's model, in memory), and of the older
/// archive against it (restored straight into the store's model); a merge of one book and its
/// pages from the older archive into the migrated store (the archive restored into the newer
/// model in one pass), and the same from an encrypted copy of that archive (whose model is
/// known only as the restore reads it); and a command line's mistake (a merge whose `--where`
/// does not parse) against the same restore. At `objects / 5` and `objects` library objects;
/// best of three.
func migrateBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  func path(_ name: String) -> String { workspace.path(name) }
  let model = path("Library.xcdatamodeld")
  try FileManager.default.copyItem(atPath: workspace.model, toPath: model)
  let third = try String(contentsOfFile: model + "/Library 3.xcdatamodel/contents", encoding: .utf8)
  let anchor = #"<attribute name="uniqueID" "#
  try FileManager.default.createDirectory(
    atPath: model + "/Library 4.xcdatamodel", withIntermediateDirectories: false)
  try third.replacingOccurrences(
    of: anchor,
    with: #"<attribute name="subtitle" optional="YES" attributeType="String"/>"# + anchor
  ).write(toFile: model + "/Library 4.xcdatamodel/contents", atomically: false, encoding: .utf8)
  let current = try String(contentsOfFile: model + "/.xccurrentversion", encoding: .utf8)
  try current.replacingOccurrences(of: "Library 3.xcdatamodel", with: "Library 4.xcdatamodel")
    .write(toFile: model + "/.xccurrentversion", atomically: false, encoding: .utf8)
  print(
    "| store | restore | migrating restore | ratio | migrate in place | ratio | diff across versions | ratio | diff of the older archive | ratio | merge from the older archive | ratio | the same, encrypted | ratio | usage error | ratio | peak RSS (migrating restore) |"
  )
  print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for size in [objects / 5, objects] {
    FileHandle.standardError.write(Data("gvbench migrate: generating \(size) objects\n".utf8))
    let store = path("store-\(size).sqlite")
    try SampleLibrary.generate(at: store, objects: size)
    let archive = path("store-\(size).gvault")
    try runSucceeding(
      workspace.tool, ["backup", store, "--output", archive, "-q"], failure: "backup failed")
    let restored = path("restored-\(size).sqlite")
    let plain = try bestOfThree(workspace.tool) { _ in
      ["restore", archive, "--to", restored, "--force", "-q"]
    }
    let migrating = try bestOfThree(workspace.tool) { _ in
      ["restore", archive, "--to", restored, "--force", "--model", model, "-q"]
    }
    let target = path("target-\(size).sqlite")
    let inPlace = try bestOfThree(workspace.tool) { _ in
      try copyStore(store, to: target)
      return ["migrate", target, "--model", model, "-q"]
    }
    let acrossVersions = try bestOfThree(workspace.tool, accepting: [0, 1]) { _ in
      ["diff", store, target, "-q"]
    }
    let archiveAgainstStore = try bestOfThree(workspace.tool, accepting: [0, 1]) { _ in
      ["diff", archive, target, "-q"]
    }
    let merged = path("merged-\(size).sqlite")
    let fromOlder = try bestOfThree(workspace.tool) { _ in
      try copyStore(target, to: merged)
      return [
        "merge", archive, "--into", merged, "--entity", "Book", "--where",
        "title BEGINSWITH 'Book 12345:'", "--include", "pages", "--model", model, "-q",
      ]
    }
    let password = path("password")
    try Data("migrate bench\n".utf8).write(to: URL(fileURLWithPath: password))
    chmod(password, 0o600)
    let sealed = path("sealed-\(size).gvault")
    try runSucceeding(
      workspace.tool, ["backup", store, "--output", sealed, "--password-file", password, "-q"],
      failure: "backup failed")
    let fromSealed = try bestOfThree(workspace.tool) { _ in
      try copyStore(target, to: merged)
      return [
        "merge", sealed, "--into", merged, "--entity", "Book", "--where",
        "title BEGINSWITH 'Book 12345:'", "--include", "pages", "--model", model,
        "--password-file", password, "-q",
      ]
    }
    let mistake = try bestOfThree(workspace.tool, accepting: [64]) { _ in
      ["merge", archive, "--into", store, "--entity", "Book", "--where", "title ==", "-q"]
    }
    print(
      String(
        format:
          "| %d objects | %.2f s | %.2f s | %.2f× | %.3f s | %.3f× | %.2f s | %.2f× | %.2f s | %.2f× | %.2f s | %.2f× | %.2f s | %.2f× | %.3f s | %.3f× | %d MiB |",
        size, plain.seconds, migrating.seconds, migrating.seconds / plain.seconds,
        inPlace.seconds, inPlace.seconds / plain.seconds, acrossVersions.seconds,
        acrossVersions.seconds / plain.seconds, archiveAgainstStore.seconds,
        archiveAgainstStore.seconds / plain.seconds, fromOlder.seconds,
        fromOlder.seconds / plain.seconds, fromSealed.seconds, fromSealed.seconds / plain.seconds,
        mistake.seconds,
        mistake.seconds / plain.seconds, migrating.peakKiB / 1024))
  }
}

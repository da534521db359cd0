import Foundation
import GraphVault

/// `graphvault diff` of two backups of a generated library store, the second taken after 1%
/// of the books were deleted (with their pages and tag links), 1% retitled and 1% added,
/// against one `graphvault restore` of the first in the same run; at `objects / 5` and
/// `objects`, so that peak RSS shows whether memory follows the stores' size. Best of three.
func diffBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  func path(_ name: String) -> String { workspace.path(name) }
  print("| store | restore | diff | diff / restore | peak RSS restore | peak RSS diff |")
  print("|---|---:|---:|---:|---:|---:|")
  for size in [objects / 5, objects] {
    FileHandle.standardError.write(Data("gvbench diff: generating \(size) objects\n".utf8))
    let store = path("store-\(size).sqlite")
    try SampleLibrary.generate(at: store, objects: size)
    let old = path("old-\(size).gvault")
    let new = path("new-\(size).gvault")
    _ = try bestOfThree(workspace.tool) { _ in
      try? FileManager.default.removeItem(atPath: old)
      return ["backup", store, "--output", old, "-q"]
    }
    _ = try timedShell(
      """
      sqlite3 '\(store)' "
        DELETE FROM Z_1TAGS WHERE Z_1BOOKS % 100 = 7;
        DELETE FROM ZPAGE WHERE ZBOOK % 100 = 7;
        DELETE FROM ZBOOK WHERE Z_PK % 100 = 7;
        UPDATE ZBOOK SET ZTITLE = ZTITLE || ' (revised)', Z_OPT = Z_OPT + 1 WHERE Z_PK % 100 = 9;
        INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZAUTHOR, Z5_AUTHOR)
          SELECT Z_PK + 10000000, Z_ENT, 1, 'New ' || ZTITLE, ZAUTHOR, Z5_AUTHOR FROM ZBOOK
          WHERE Z_PK % 100 = 11;
        UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM ZBOOK) WHERE Z_NAME = 'Book';"
      """)
    _ = try bestOfThree(workspace.tool) { _ in
      try? FileManager.default.removeItem(atPath: new)
      return ["backup", store, "--output", new, "-q"]
    }
    let restored = path("restored-\(size).sqlite")
    let restore = try bestOfThree(workspace.tool) { _ in
      ["restore", old, "--to", restored, "--force", "-q"]
    }
    let diff = try bestOfThree(workspace.tool, accepting: [1]) { _ in ["diff", old, new, "-q"] }
    print(
      String(
        format: "| %d objects | %.2f s | %.2f s | %.2f× | %d MiB | %d MiB |", size,
        restore.seconds, diff.seconds, diff.seconds / restore.seconds, restore.peakKiB / 1024,
        diff.peakKiB / 1024))
  }
}

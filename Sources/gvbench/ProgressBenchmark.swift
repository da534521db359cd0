import Foundation
import GraphVault

/// Backup and restore of a generated library store with the status line drawn (on a
/// pseudo-terminal, through `script`) and without it (output to a file), alternating, three
/// rounds: what progress costs. Needs script(1).
func progressBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  let tool = workspace.tool
  func path(_ name: String) -> String { workspace.path(name) }
  FileHandle.standardError.write(
    Data("gvbench progress: generating \(objects) objects (library)\n".utf8))
  try SampleWorkload.library.generate(at: path("store.sqlite"), objects: objects)
  func onTerminal(_ command: String) -> String {
    "script -qfec \"\(command)\" /dev/null > /dev/null"
  }
  var times: [String: [Double]] = [:]
  for round in 1...3 {
    for shown in [false, true] {
      let archive = path("\(round)-\(shown).gvault")
      let restored = path("\(round)-\(shown).sqlite")
      let backup = "'\(tool)' backup '\(path("store.sqlite"))' --output '\(archive)'"
      let restore = "'\(tool)' restore '\(archive)' --to '\(restored)'"
      times["backup \(shown)", default: []].append(
        try timedShell(shown ? onTerminal(backup) : backup + " > /dev/null 2>&1"))
      times["restore \(shown)", default: []].append(
        try timedShell(shown ? onTerminal(restore) : restore + " > /dev/null 2>&1"))
    }
  }
  func list(_ key: String) -> String {
    times[key, default: []].map { String(format: "%.2f", $0) }.joined(separator: ", ") + " s"
  }
  print("| \(objects) objects (library), three rounds | status line shown | not shown |")
  print("|---|---|---|")
  for command in ["backup", "restore"] {
    print("| \(command) | \(list("\(command) true")) | \(list("\(command) false")) |")
  }
}

import Foundation
import GraphVault

/// A fixture of about a thousand objects cut from a generated store of `objects` objects and
/// from one a fifth its size, against the same command selecting nothing (start-up, model,
/// schema, an empty archive) and against the selection's query alone in the sqlite3 shell, in
/// one run: what remains is the cut's own work; peak RSS shows whether memory follows the
/// store's size.
func fixtureBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  func path(_ name: String) -> String { workspace.path(name) }
  print(
    "| store | objects cut | fixture | selecting nothing | the selection's query (sqlite3) | the cut beyond both | peak RSS |"
  )
  print("|---|---:|---:|---:|---:|---:|---:|")
  for size in [objects / 5, objects] {
    FileHandle.standardError.write(Data("gvbench fixture: generating \(size) objects\n".utf8))
    let store = path("store-\(size).sqlite")
    try SampleLibrary.generate(at: store, objects: size)
    func cut(_ limit: Int, _ name: String) throws -> Measured {
      try bestOfThree(workspace.tool) { round in
        [
          "fixture", store, "--entity", "Book", "--where", "rating < 2.5", "--sort", "-sales",
          "--limit", String(limit), "--include", "pages", "--output",
          path("\(name)-\(size)-\(round).gvault"), "-q",
        ]
      }
    }
    let nothing = try cut(0, "empty")
    // The query that reads what the fixture selects, alone, in the sqlite3 shell.
    var query = Double.infinity
    for _ in 0..<3 {
      query = min(
        query,
        try timedShell(
          "sqlite3 '\(store)' 'SELECT Z_PK FROM ZBOOK WHERE Z_ENT IN (1, 2) AND ZRATING < 2.5 ORDER BY ZSALES DESC, Z_PK LIMIT 300' > /dev/null"
        ))
    }
    let fixture = try cut(300, "fixture")
    let listed = Process()
    listed.executableURL = URL(fileURLWithPath: workspace.tool)
    listed.arguments = ["verify", path("fixture-\(size)-0.gvault")]
    let pipe = Pipe()
    listed.standardOutput = pipe
    try listed.run()
    listed.waitUntilExit()
    let summary = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let count = summary.split(separator: " ").drop { $0 != "OK," }.dropFirst().first ?? "?"
    print(
      String(
        format: "| %d objects | %@ | %.3f s | %.3f s | %.3f s | %.3f s | %d MiB |", size,
        String(count), fixture.seconds, nothing.seconds, query,
        fixture.seconds - nothing.seconds - query, fixture.peakKiB / 1024))
  }
}

import Foundation
import GraphVault

/// Encryption's cost: backup and restore of one generated store, unencrypted and encrypted,
/// interleaved in one run (two rounds each; the faster of each pair is reported, since the
/// first run of a kind also warms the page cache).
func encryptionBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  let (tool, model) = (workspace.tool, workspace.model)
  func path(_ name: String) -> String { workspace.path(name) }
  FileHandle.standardError.write(Data("gvbench encryption: generating \(objects) objects\n".utf8))
  try SampleLibrary.generate(at: path("store.sqlite"), objects: objects)
  let password = path("password")
  try Data("correct horse battery staple\n".utf8).write(to: URL(fileURLWithPath: password))

  var best: [String: Measured] = [:]
  func run(_ kind: String, _ arguments: [String]) throws {
    let measured = try runMeasured(tool, arguments)
    guard measured.status == 0 else {
      throw NSError(
        domain: "gvbench", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(kind) failed"])
    }
    if measured.seconds < best[kind]?.seconds ?? .infinity { best[kind] = measured }
  }
  for round in 0..<2 {
    for encrypted in [false, true] {
      let suffix = encrypted ? "encrypted" : "plain"
      let archive = path("\(suffix)-\(round).gvault")
      let secret = encrypted ? ["--password-file", password] : []
      try run(
        "backup \(suffix)",
        ["backup", path("store.sqlite"), "--model", model, "--output", archive, "-q"] + secret)
      try run(
        "restore \(suffix)",
        ["restore", archive, "--to", path("\(suffix)-\(round).sqlite"), "-q"] + secret)
    }
  }
  print("| \(objects) objects | unencrypted | encrypted | cost | target |")
  print("|---|---:|---:|---:|---:|")
  for step in ["backup", "restore"] {
    let plain = best["\(step) plain"]!
    let sealed = best["\(step) encrypted"]!
    print(
      String(
        format: "| %@ time | %.2f s | %.2f s | %+.1f%% | ≤ +15%% |", step, plain.seconds,
        sealed.seconds, (sealed.seconds / plain.seconds - 1) * 100))
    print(
      "| \(step) peak RSS | \(plain.peakKiB / 1024) MiB | \(sealed.peakKiB / 1024) MiB | | |")
  }
  let plainMB = workspace.size("plain-0.gvault") / 1_000_000
  let sealedMB = workspace.size("encrypted-0.gvault") / 1_000_000
  print(
    String(
      format: "| archive size | %.1f MB | %.1f MB | %+.1f%% | |", plainMB, sealedMB,
      (sealedMB / plainMB - 1) * 100))
}

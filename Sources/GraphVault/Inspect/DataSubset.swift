import ArchiveFormat

/// Which archives of a location a check reads whole this run, as restic's
/// `check --read-data-subset N/T`: run `N` of every `T` runs. Each archive belongs to one
/// subset, chosen by the SHA-256 of its name, so an archive keeps its subset as others come and
/// go, and the runs `1/T` … `T/T` together read every archive.
public struct DataSubset: Sendable, Equatable, CustomStringConvertible {
  /// Which run of the cycle this is, from 1.
  public let run: Int
  /// How many runs read every archive once.
  public let runs: Int

  /// The subset `run` of `runs`, or nil unless `1 ≤ run ≤ runs`.
  public init?(run: Int, of runs: Int) {
    guard runs >= 1, (1...runs).contains(run) else { return nil }
    self.run = run
    self.runs = runs
  }

  /// Parses `N/T` (such as `2/7`), or nil when it is not one.
  public init?(_ text: String) {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, parts.allSatisfy({ $0.allSatisfy(\.isASCII) }),
      let run = Int(parts[0]), let runs = Int(parts[1])
    else { return nil }
    self.init(run: run, of: runs)
  }

  /// `N/T`.
  public var description: String { "\(run)/\(runs)" }

  /// Whether the archive called `name` (its last path component) is read whole this run.
  public func contains(_ name: String) -> Bool {
    let digest = Checksum.digest(Array(name.utf8))
    let number = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    return Int(number % UInt64(runs)) == run - 1
  }
}

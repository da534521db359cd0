import Foundation

/// Which archive a watching backup's next point builds on, so that chains stay short however
/// long the watch runs: points in time on a ladder, as `dump`'s levels are. A full archive
/// starts a week; the first point of each day builds on it (depth 1), the first of each hour
/// on that day's (depth 2), and every other point on that hour's (depth 3). A point thus holds
/// what changed since the rung above it, no chain is longer than four archives, and no point
/// is a parent but the first of its day or hour: `prune` can let any other go (and keeps those
/// a kept point needs).
public struct WatchLadder: Equatable, Sendable {
  /// One rung: an archive and when it was made.
  public struct Rung: Equatable, Sendable {
    /// The archive's file name.
    public let name: String
    /// When it was made.
    public let created: Date
  }

  /// A new full archive after this long.
  public static let week: TimeInterval = 7 * 86_400
  /// How long each rung below the full one stands: a day, an hour.
  public static let spans: [TimeInterval] = [86_400, 3_600]

  /// The newest archive of each rung: the full one, the day's, the hour's.
  public private(set) var rungs: [Rung?] = [nil, nil, nil]

  /// An empty ladder: the next point is a full archive.
  public init() {}

  /// What the next point at `now` is: its parent's name (nil for a full archive) and its
  /// rung (0 full, 1 a day's first, 2 an hour's first, 3 any other).
  public func next(at now: Date) -> (parent: String?, rung: Int) {
    guard let full = rungs[0], now.timeIntervalSince(full.created) < Self.week else {
      return (nil, 0)
    }
    for (index, span) in Self.spans.enumerated() {
      guard let rung = rungs[index + 1], now.timeIntervalSince(rung.created) < span else {
        return (rungs[index]!.name, index + 1)
      }
    }
    return (rungs[2]!.name, 3)
  }

  /// Records an archive written at rung `rung` (0 for a full one, whatever was asked: a
  /// backup that could not build on its parent writes a full archive).
  public mutating func record(_ name: String, created: Date, rung: Int) {
    guard rung < 3 else { return }
    rungs[rung] = Rung(name: name, created: created)
    for lower in (rung + 1)..<3 { rungs[lower] = nil }
  }
}

import Foundation

/// How far a long command has got, for a person watching or a monitor reading: the item at
/// hand (an entity, a member, an archive), objects done of a total, bytes done of a total.
///
/// Services update it a chunk, a member or a few thousand objects at a time, never per object;
/// a display reads it on a timer of its own (``snapshot()``). Totals are given only when they
/// are known before the work (a store's row counts, an archive's size or recorded counts), so a
/// percentage is never a guess.
public final class ProgressMeter: @unchecked Sendable {
  /// One reading.
  public struct Snapshot: Sendable, Equatable {
    /// The step of a command that has several (`restore` of an archive before an `export`),
    /// empty for a command of one step; counts start again at each.
    public var phase = ""
    /// What is being worked on (`Book`, `objects/Page`, an archive's name).
    public var item = ""
    /// What ``objectsDone`` counts: `objects`, or `archives` (prune).
    public var unit = "objects"
    /// Objects (or archives) done.
    public var objectsDone = 0
    /// Objects to do, when known.
    public var objectsTotal: Int?
    /// Bytes read or written.
    public var bytesDone: Int64 = 0
    /// Bytes to read, when known.
    public var bytesTotal: Int64?

    /// The part done, from 0 to 1, by objects when their total is known, else by bytes; nil
    /// when neither total is.
    public var fractionDone: Double? {
      if let total = objectsTotal, total > 0 { return min(1, Double(objectsDone) / Double(total)) }
      if let total = bytesTotal, total > 0 { return min(1, Double(bytesDone) / Double(total)) }
      if objectsTotal == 0 || bytesTotal == 0 { return 1 }
      return nil
    }
  }

  private let lock = NSLock()
  private var state = Snapshot()

  /// A meter at zero, with no totals.
  public init() {}

  /// The current reading.
  public func snapshot() -> Snapshot { lock.withLock { state } }

  /// Starts the step `name` of a command that has several: counts and totals start again.
  public func startPhase(_ name: String) { lock.withLock { state = Snapshot(phase: name) } }

  /// Sets what the count of objects counts (`archives` for prune).
  public func setUnit(_ unit: String) { lock.withLock { state.unit = unit } }

  /// Names the item now being worked on.
  public func begin(_ item: String) { lock.withLock { state.item = item } }

  /// Counts `count` more objects done.
  public func add(objects count: Int) { lock.withLock { state.objectsDone += count } }

  /// Counts `count` more bytes read or written.
  public func add(bytes count: Int64) { lock.withLock { state.bytesDone += count } }

  /// Sets the number of objects to do (nil: unknown).
  public func setTotal(objects total: Int?) { lock.withLock { state.objectsTotal = total } }

  /// Sets the number of bytes to read (nil: unknown).
  public func setTotal(bytes total: Int64?) { lock.withLock { state.bytesTotal = total } }

  /// Sets the objects done to `count` (to agree with a result counted elsewhere).
  public func set(objectsDone count: Int) { lock.withLock { state.objectsDone = count } }
}

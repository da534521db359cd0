import Foundation
import ObjectModel
import SQLite

/// The smallest and largest value an attribute has in a group of objects (a chunk of an
/// archive), in the order SQLite compares its stored values: what lets a reader looking for
/// `title BEGINSWITH "Book 12"` or `price < 5` pass over the chunks that cannot hold a match
/// without reading them, as a column store's zone maps do.
///
/// Kept for attributes whose stored values SQLite compares as the predicate does: integers
/// (16, 32 and 64 bits), reals (double, float and date: seconds since 2001) and strings,
/// compared byte by byte as SQLite's `BINARY` collation does. A string's bounds are cut to
/// ``textLimit`` bytes (at a character's start), so they stay small however long the texts:
/// the low bound cut is still no larger than any value; the high one is read as "no value is
/// larger, or it begins with these bytes". Reals with a NaN among them have no bounds.
package enum ValueBounds: Equatable, Sendable {
  /// Integers, the smallest and largest.
  case integers(ClosedRange<Int64>)
  /// Reals, the smallest and largest.
  case reals(ClosedRange<Double>)
  /// UTF-8 texts: the smallest, and the largest, each cut to ``textLimit`` bytes.
  case texts(low: [UInt8], high: [UInt8])

  /// The most bytes a text bound keeps.
  package static let textLimit = 32

  /// Whether an attribute of `type` has bounds, and of which kind.
  package enum Kind: Sendable {
    case integers, reals, texts
  }

  /// The kind of bounds an attribute of `type` has; nil when it has none.
  package static func kind(of type: AttributeType) -> Kind? {
    switch type {
    case .integer16, .integer32, .integer64: .integers
    case .double, .float, .date: .reals
    case .string: .texts
    default: nil
    }
  }

  /// The bounds of an attribute's values; nil when it has none (no values, a type without
  /// bounds, a NaN).
  package init?(_ attribute: ObjectBatch.Attribute) {
    switch (Self.kind(of: attribute.type), attribute.values) {
    case (.integers?, .integers(let values)):
      guard let low = values.min(), let high = values.max() else { return nil }
      self = .integers(low...high)
    case (.reals?, .reals(let values)):
      var reals = Reals()
      for value in values { reals.take(value) }
      guard let bounds = reals.bounds else { return nil }
      self = bounds
    case (.texts?, .texts(let values)):
      var index = 0
      let bounds = Self.texts {
        defer { index += 1 }
        return index < values.ranges.count ? values[index] : nil
      }
      guard let bounds else { return nil }
      self = bounds
    default:
      return nil
    }
  }

  /// Reals' bounds, as they are met.
  package struct Reals {
    private var low = Double.infinity
    private var high = -Double.infinity
    private var count = 0
    private var sawNaN = false

    package init() {}

    package mutating func take(_ value: Double) {
      if value.isNaN { sawNaN = true }
      if value < low { low = value }
      if value > high { high = value }
      count += 1
    }

    /// Nil when none was met, or a NaN was.
    package var bounds: ValueBounds? {
      count > 0 && !sawNaN ? .reals(low...high) : nil
    }
  }

  /// The bounds of the texts `next` gives in turn until it gives nil; nil when it gives none.
  /// Each text must stay valid until the last is given (they are compared where they lie,
  /// and only the two kept are copied).
  package static func texts(_ next: () -> UnsafeRawBufferPointer?) -> ValueBounds? {
    guard var low = next() else { return nil }
    var high = low
    while let value = next() {
      if compare(value, low) < 0 {
        low = value
      } else if compare(value, high) > 0 {
        high = value
      }
    }
    return .texts(low: cut(Array(low)), high: cut(Array(high)))
  }

  /// `bytes` cut to ``textLimit`` bytes at the start of a UTF-8 sequence.
  static func cut(_ bytes: [UInt8]) -> [UInt8] {
    guard bytes.count > textLimit else { return bytes }
    var end = textLimit
    while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
    return Array(bytes[..<end])
  }

  /// `a` against `b` as SQLite's `BINARY` collation orders them: -1, 0 or 1.
  static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let common = min(a.count, b.count)
    if common > 0, let left = a.baseAddress, let right = b.baseAddress {
      let order = memcmp(left, right, common)
      if order != 0 { return order < 0 ? -1 : 1 }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
  }

  /// `a` against `b` as SQLite's `BINARY` collation orders them: -1, 0 or 1.
  static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { left in b.withUnsafeBytes { right in compare(left, right) } }
  }

  // MARK: What a comparison may find

  /// Whether some value within these bounds may be `==` to `value` (SQLite's `IS`).
  package func mayEqual(_ value: SQLiteValue) -> Bool {
    mayBe(atLeast: value, strictly: false) && mayBe(atMost: value, strictly: false)
  }

  /// Whether some value within these bounds may be above `value` (or equal to it, unless
  /// `strictly`). A value of another storage class than the bounds' says yes.
  package func mayBe(atLeast value: SQLiteValue, strictly: Bool) -> Bool {
    if case .texts(_, let high) = self, case .text(let text) = value {
      let probe = Array(text.utf8)
      // The largest value is at least `high`, and may be longer when it begins with it.
      let order = Self.compare(high, probe)
      return order > 0 || (order == 0 && !strictly) || Self.begins(probe, with: high)
    }
    guard let order = numberOrder(high: true, against: value) else { return true }
    return strictly ? order > 0 : order >= 0
  }

  /// Whether some value within these bounds may be below `value` (or equal to it, unless
  /// `strictly`). A value of another storage class than the bounds' says yes.
  package func mayBe(atMost value: SQLiteValue, strictly: Bool) -> Bool {
    if case .texts(let low, _) = self, case .text(let text) = value {
      // The smallest value is at least `low`.
      let order = Self.compare(low, Array(text.utf8))
      return strictly ? order < 0 : order <= 0
    }
    guard let order = numberOrder(high: false, against: value) else { return true }
    return strictly ? order < 0 : order <= 0
  }

  /// Whether some value within these bounds may begin with `prefix`.
  package func mayBegin(with prefix: String) -> Bool {
    mayHold(from: prefix, upToAnyBeginning: prefix)
  }

  /// Whether some value within these bounds may lie from `low` up to `high` or a text that
  /// begins with it (``GlobFilter``'s range of what a pattern matches).
  package func mayHold(from low: String, upToAnyBeginning high: String) -> Bool {
    guard case .texts(let least, _) = self else { return true }
    let top = Array(high.utf8)
    // The smallest value is at least `least`: it may be up to `high` or begin with it.
    guard Self.compare(least, top) <= 0 || Self.begins(least, with: top) else { return false }
    return mayBe(atLeast: .text(low), strictly: false)
  }

  private static func begins(_ bytes: [UInt8], with prefix: [UInt8]) -> Bool {
    bytes.count >= prefix.count && bytes[..<prefix.count].elementsEqual(prefix)
  }

  /// The high (or low) numeric bound against a number, as SQLite orders them: -1, 0 or 1;
  /// nil when either is not a number, or when a double cannot tell an integer beyond 2^53
  /// from its neighbours.
  private func numberOrder(high: Bool, against value: SQLiteValue) -> Int? {
    func order<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
    let exact: Int64 = 1 << 53
    switch (self, value) {
    case (.integers(let range), .integer(let v)):
      return order(high ? range.upperBound : range.lowerBound, v)
    case (.integers(let range), .real(let v)):
      let bound = high ? range.upperBound : range.lowerBound
      guard bound.magnitude <= exact, !v.isNaN else { return nil }
      return order(Double(bound), v)
    case (.reals(let range), .integer(let v)):
      guard v.magnitude <= exact else { return nil }
      return order(high ? range.upperBound : range.lowerBound, Double(v))
    case (.reals(let range), .real(let v)):
      guard !v.isNaN else { return nil }
      return order(high ? range.upperBound : range.lowerBound, v)
    default:
      return nil
    }
  }
}

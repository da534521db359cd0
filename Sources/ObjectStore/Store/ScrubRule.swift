import Crypto
import Foundation
import ObjectModel

/// How a fixture replaces one attribute's values, for data that must not leave production.
///
/// Only values that are there are replaced (a missing value stays missing), each from the
/// object's entity, attribute and primary key or from the value itself, so the same input
/// always gives the same fixture.
public struct ScrubRule: Sendable, Equatable {
  /// What replaces a value.
  public enum Kind: Sendable, Equatable {
    /// A stand-in of the same type and shape: `Writer.name-17`, an integer of as many digits,
    /// a date shifted by up to a year, bytes of the same length.
    case fake
    /// No value (refused for a required attribute).
    case null
    /// A keyed hash of the value, in the attribute's type: equal values stay equal, so joins by
    /// value still work.
    case hash
    /// This text, read as the attribute's type (Xcode's default-value syntax).
    case value(String)
  }

  /// The entity (its sub-entities' objects included).
  public var entity: String
  /// The attribute.
  public var attribute: String
  /// The replacement.
  public var kind: Kind

  /// A rule.
  public init(entity: String, attribute: String, kind: Kind = .fake) {
    self.entity = entity
    self.attribute = attribute
    self.kind = kind
  }

  /// Parses `ENTITY.ATTRIBUTE[=RULE]` (`fake`, `null`, `hash`, `value:TEXT`); the attribute may
  /// be a key path to an element of a composite (`Cocktail.author.person`).
  public init?(argument: String) {
    let (target, rule) =
      argument.firstIndex(of: "=").map {
        (String(argument[..<$0]), String(argument[argument.index(after: $0)...]))
      } ?? (argument, "fake")
    let parts = target.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count >= 2, !parts.contains(where: \.isEmpty) else { return nil }
    switch rule {
    case "fake": kind = .fake
    case "null": kind = .null
    case "hash": kind = .hash
    case _ where rule.hasPrefix("value:"): kind = .value(String(rule.dropFirst("value:".count)))
    default: return nil
    }
    entity = String(parts[0])
    attribute = parts.dropFirst().joined(separator: ".")
  }

  /// The replacement of `value` (present) for the object with primary key `key`; nil for none.
  func replacement(
    for value: AttributeValue, of attribute: AttributeDescription, key: Int64, secret: SymmetricKey
  ) -> AttributeValue? {
    switch kind {
    case .null: return nil
    case .value(let text): return AttributeValue(defaultValueString: text, type: attribute.type)
    case .fake:
      var random = Self.generator("\(entity).\(attribute.name)#\(key)")
      return Self.standIn(
        value, type: attribute.type, label: "\(entity).\(attribute.name)-\(key)",
        random: &random)
    case .hash:
      let digest = Array(HMAC<SHA256>.authenticationCode(for: Self.bytes(of: value), using: secret))
      var random = SplitMix64(seed: digest.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
      let hex = digest.map { String(format: "%02x", $0) }.joined()
      return Self.standIn(value, type: attribute.type, label: "h" + hex.prefix(24), random: &random)
    }
  }

  private static func generator(_ label: String) -> SplitMix64 {
    let digest = Array(SHA256.hash(data: Array(label.utf8)))
    return SplitMix64(seed: digest.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
  }

  /// The canonical bytes of a value, for hashing.
  private static func bytes(of value: AttributeValue) -> [UInt8] {
    switch value {
    case .integer(let v): return Array("i\(v)".utf8)
    case .double(let v): return Array("d\(v)".utf8)
    case .decimal(let v): return Array("n\(v)".utf8)
    case .string(let v), .uri(let v): return Array("s\(v)".utf8)
    case .bool(let v): return Array("b\(v)".utf8)
    case .date(let v): return Array("t\(v)".utf8)
    case .data(let v), .uuid(let v), .transformed(let v): return Array("x".utf8) + v
    case .composite(let elements):
      return elements.keys.sorted().flatMap { Array("c\($0)=".utf8) + bytes(of: elements[$0]!) }
    }
  }

  /// A value of the same type and shape as `value`, drawn from `random`.
  private static func standIn(
    _ value: AttributeValue, type: AttributeType, label: String, random: inout SplitMix64
  ) -> AttributeValue? {
    func digits(_ magnitude: UInt64) -> UInt64 {
      var limit: UInt64 = 10
      while limit <= magnitude && limit < UInt64.max / 10 { limit *= 10 }
      return limit
    }
    switch value {
    case .string: return .string(label)
    case .uri: return .uri("https://example.invalid/\(label)")
    case .integer(let v):
      let bound: UInt64 =
        switch type {
        case .integer16: 32_767
        case .integer32: 2_147_483_647
        default: UInt64(Int64.max)
        }
      let magnitude = min(random.next() % digits(v.magnitude), bound)
      return .integer(v < 0 ? -Int64(magnitude) : Int64(magnitude))
    case .double(let v):
      let scale = Double(digits(UInt64(min(abs(v), 1e15))))
      let fresh = (Double(random.next() % 1_000_000) / 1_000_000 * scale * 100).rounded() / 100
      return .double(v < 0 ? -fresh : fresh)
    case .decimal(let v):
      let magnitude = Double(v).map { abs($0) } ?? 1
      let scale = Double(digits(UInt64(min(magnitude, 1e15))))
      let fresh = (Double(random.next() % 1_000_000) / 1_000_000 * scale * 100).rounded() / 100
      return .decimal(String(format: "%.2f", v.hasPrefix("-") ? -fresh : fresh))
    case .bool: return .bool(random.next() % 2 == 0)
    case .date(let v):
      let shift = Double(random.next() % (2 * 365 * 86_400)) - 365 * 86_400
      return .date((v + shift).rounded())
    case .data(let v):
      return .data((0..<v.count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    case .uuid:
      var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
      bytes[6] = bytes[6] & 0x0F | 0x40
      bytes[8] = bytes[8] & 0x3F | 0x80
      return .uuid(bytes)
    case .transformed, .composite: return nil
    }
  }
}

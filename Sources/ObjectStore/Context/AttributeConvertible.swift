import Foundation
import ObjectModel

/// A Swift type an attribute's value is read as and written from
/// (``ManagedObject/value(for:as:)``, ``ManagedObject/setValue(_:for:)-(T?,_)``), with the
/// conversions Core Data makes between numbers: an integer into a Double or Decimal attribute,
/// 0 or 1 into a Boolean one, a whole Double into an integer one, within the attribute's width.
public protocol AttributeConvertible: Sendable {
  /// The value an attribute of `type` holds, converted; nil when it does not convert.
  init?(attributeValue value: AttributeValue, type: AttributeType)
  /// This value for an attribute of `type`; nil when it does not fit.
  func attributeValue(for type: AttributeType) -> AttributeValue?
  /// What a generated non-optional property reads while its attribute has no value (a
  /// required one not yet set, a scalar one left nil): `0`, `false`, `""`, empty data, the
  /// reference date, the nil UUID. Nil, the default, for a type with no such value.
  static var emptyAttributeValue: Self? { get }
}

extension AttributeConvertible {
  /// No empty value: reading an attribute without one stops with a message naming it.
  public static var emptyAttributeValue: Self? { nil }
}

/// Numbers as the attribute kinds hold them, for the conversions.
enum AttributeNumber {
  /// An exact integer, when the value is one (a whole real, a Boolean as 0 or 1).
  static func integer(_ value: AttributeValue) -> Int64? {
    switch value {
    case .integer(let v): return v
    case .bool(let v): return v ? 1 : 0
    case .double(let v): return Int64(exactly: v)
    case .decimal(let text): return Int64(text) ?? Double(text).flatMap { Int64(exactly: $0) }
    default: return nil
    }
  }

  /// The value as a real, when it is a number.
  static func real(_ value: AttributeValue) -> Double? {
    switch value {
    case .integer(let v): return Double(v)
    case .bool(let v): return v ? 1 : 0
    case .double(let v): return v
    case .decimal(let text): return Double(text)
    default: return nil
    }
  }

  /// An integer for an attribute of `type`: within its width, 0 or 1 for a Boolean.
  static func value(_ integer: Int64, for type: AttributeType) -> AttributeValue? {
    switch type {
    case .integer16: return Int16(exactly: integer).map { .integer(Int64($0)) }
    case .integer32: return Int32(exactly: integer).map { .integer(Int64($0)) }
    case .integer64: return .integer(integer)
    case .double, .float: return .double(Double(integer))
    case .decimal: return .decimal(String(integer))
    case .boolean: return integer == 0 || integer == 1 ? .bool(integer == 1) : nil
    default: return nil
    }
  }

  /// A real for an attribute of `type`: a whole one for an integer or Boolean attribute.
  static func value(_ real: Double, for type: AttributeType) -> AttributeValue? {
    switch type {
    case .double: return .double(real)
    case .float: return .double(Double(Float(real)))
    case .decimal: return real.isFinite ? .decimal(String(real)) : nil
    default: return Int64(exactly: real).flatMap { value($0, for: type) }
    }
  }
}

extension AttributeConvertible where Self: FixedWidthInteger {
  /// Zero.
  public static var emptyAttributeValue: Self? { 0 }

  /// The integer an attribute holds (a whole number of any numeric kind), when it fits the
  /// type.
  public init?(attributeValue value: AttributeValue, type: AttributeType) {
    guard let integer = AttributeNumber.integer(value).flatMap({ Self(exactly: $0) }) else {
      return nil
    }
    self = integer
  }

  /// The integer for a numeric attribute, within its width.
  public func attributeValue(for type: AttributeType) -> AttributeValue? {
    Int64(exactly: self).flatMap { AttributeNumber.value($0, for: type) }
  }
}

extension Int64: AttributeConvertible {}
extension Int: AttributeConvertible {}
extension Int32: AttributeConvertible {}
extension Int16: AttributeConvertible {}

extension Double: AttributeConvertible {
  /// Zero.
  public static var emptyAttributeValue: Double? { 0 }

  /// The number an attribute holds, as a real.
  public init?(attributeValue value: AttributeValue, type: AttributeType) {
    guard let real = AttributeNumber.real(value) else { return nil }
    self = real
  }
  /// The real for a numeric attribute (a whole one for an integer or Boolean attribute).
  public func attributeValue(for type: AttributeType) -> AttributeValue? {
    AttributeNumber.value(self, for: type)
  }
}

extension Float: AttributeConvertible {
  /// Zero.
  public static var emptyAttributeValue: Float? { 0 }

  /// The number an attribute holds, as a Float.
  public init?(attributeValue value: AttributeValue, type: AttributeType) {
    guard let real = AttributeNumber.real(value) else { return nil }
    self = Float(real)
  }
  /// The real for a numeric attribute (a whole one for an integer or Boolean attribute).
  public func attributeValue(for type: AttributeType) -> AttributeValue? {
    AttributeNumber.value(Double(self), for: type)
  }
}

extension Bool: AttributeConvertible {
  /// False.
  public static var emptyAttributeValue: Bool? { false }

  /// The Boolean an attribute holds (an integer 0 or 1 too).
  public init?(attributeValue value: AttributeValue, type: AttributeType) {
    switch value {
    case .bool(let v): self = v
    case .integer(0): self = false
    case .integer(1): self = true
    default: return nil
    }
  }
  /// The Boolean for a Boolean attribute, 0 or 1 for an integer one.
  public func attributeValue(for type: AttributeType) -> AttributeValue? {
    type == .boolean ? .bool(self) : AttributeNumber.value(Int64(self ? 1 : 0), for: type)
  }
}

extension Decimal: AttributeConvertible {
  /// Zero.
  public static var emptyAttributeValue: Decimal? { 0 }

  /// The number an attribute holds, as a Decimal (a Decimal attribute's exactly).
  public init?(attributeValue value: AttributeValue, type: AttributeType) {
    switch value {
    case .decimal(let text):
      guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
        return nil
      }
      self = decimal
    case .integer(let v): self = Decimal(v)
    case .double(let v): self = Decimal(v)
    default: return nil
    }
  }
  /// The Decimal for a Decimal attribute, or a numeric one it converts to.
  public func attributeValue(for type: AttributeType) -> AttributeValue? {
    if type == .decimal { return .decimal(description) }
    return AttributeNumber.value(NSDecimalNumber(decimal: self).doubleValue, for: type)
  }
}

extension String: AttributeConvertible {
  /// The empty string.
  public static var emptyAttributeValue: String? { "" }

  /// The text of a String attribute.
  public init?(attributeValue value: AttributeValue, type: AttributeType) {
    guard case .string(let text) = value else { return nil }
    self = text
  }
  /// The text for a String attribute.
  public func attributeValue(for type: AttributeType) -> AttributeValue? {
    type == .string ? .string(self) : nil
  }
}

extension Date: AttributeConvertible {
  /// The reference date (2001-01-01 00:00 UTC), which a Core Data date of 0 is.
  public static var emptyAttributeValue: Date? { Date(timeIntervalSinceReferenceDate: 0) }

  /// The date of a Date attribute.
  public init?(attributeValue value: AttributeValue, type: AttributeType) {
    guard case .date(let seconds) = value else { return nil }
    self = Date(timeIntervalSinceReferenceDate: seconds)
  }
  /// The date for a Date attribute.
  public func attributeValue(for type: AttributeType) -> AttributeValue? {
    type == .date ? .date(timeIntervalSinceReferenceDate) : nil
  }
}

extension Data: AttributeConvertible {
  /// No bytes.
  public static var emptyAttributeValue: Data? { Data() }

  /// The bytes of a Binary attribute.
  public init?(attributeValue value: AttributeValue, type: AttributeType) {
    guard case .data(let bytes) = value else { return nil }
    self = Data(bytes)
  }
  /// The bytes for a Binary attribute.
  public func attributeValue(for type: AttributeType) -> AttributeValue? {
    type == .binaryData ? .data([UInt8](self)) : nil
  }
}

extension UUID: AttributeConvertible {
  /// The nil UUID (every bit zero).
  public static var emptyAttributeValue: UUID? {
    UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
  }

  /// The UUID of a UUID attribute.
  public init?(attributeValue value: AttributeValue, type: AttributeType) {
    guard case .uuid(let bytes) = value, bytes.count == 16 else { return nil }
    self = UUID(
      uuid: (
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
        bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
      ))
  }
  /// The UUID for a UUID attribute.
  public func attributeValue(for type: AttributeType) -> AttributeValue? {
    guard type == .uuid else { return nil }
    return withUnsafeBytes(of: uuid) { .uuid(Array($0)) }
  }
}

extension URL: AttributeConvertible {
  /// The URL of a URI attribute.
  public init?(attributeValue value: AttributeValue, type: AttributeType) {
    guard case .uri(let text) = value, let url = URL(string: text) else { return nil }
    self = url
  }
  /// The URL for a URI attribute.
  public func attributeValue(for type: AttributeType) -> AttributeValue? {
    type == .uri ? .uri(absoluteString) : nil
  }
}

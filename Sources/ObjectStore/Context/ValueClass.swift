import Foundation
import PropertyList

/// A value that names its own class for the value-class check (`valueClassName`), with its
/// ancestors: an app's type standing for an archived class.
public protocol ValueClassNaming {
  /// The class and its ancestors, most specific first (`["Color", "NSObject"]`).
  var valueClassHierarchy: [String] { get }
}

/// The Foundation class names of Swift values, as Core Data's `valueClassName` names them.
enum ValueClass {
  /// The classes the keyed-archive transformers read and write.
  static let foundationClasses: Set<String> = [
    "NSObject", "NSString", "NSMutableString", "NSNumber", "NSDecimalNumber", "NSData",
    "NSMutableData", "NSDate", "NSArray", "NSMutableArray", "NSDictionary",
    "NSMutableDictionary", "NSSet", "NSMutableSet", "NSOrderedSet", "NSNull", "NSURL", "NSUUID",
    "NSValue",
  ]

  /// Classes of Apple's frameworks that transformable attributes commonly hold; their archives
  /// surface as ``KeyedArchiveObject``s here.
  static let platformClasses: Set<String> = [
    "UIColor", "NSColor", "CGColor", "UIImage", "NSImage", "NSAttributedString",
    "NSMutableAttributedString", "CLLocation", "NSIndexSet", "NSMeasurement",
    "NSPersonNameComponents",
    "NSLocale", "NSTimeZone", "NSCalendar", "NSDateComponents",
  ]

  /// The class and ancestors a value stands for.
  static func hierarchy(of value: any Sendable) -> [String] {
    switch value {
    case let named as any ValueClassNaming: return named.valueClassHierarchy
    case is String, is Substring: return ["NSString", "NSObject"]
    case is Bool, is Int, is Int64, is Int32, is Int16, is Double, is Float:
      return ["NSNumber", "NSValue", "NSObject"]
    case is Decimal: return ["NSDecimalNumber", "NSNumber", "NSValue", "NSObject"]
    case is Data, is [UInt8]: return ["NSData", "NSObject"]
    case is Date: return ["NSDate", "NSObject"]
    case is URL: return ["NSURL", "NSObject"]
    case is UUID: return ["NSUUID", "NSObject"]
    case is NSNull: return ["NSNull", "NSObject"]
    case is [String: any Sendable]: return ["NSDictionary", "NSObject"]
    case is [any Sendable]: return ["NSArray", "NSObject"]
    case is Set<String>: return ["NSSet", "NSObject"]
    case let object as KeyedArchiveObject: return object.classHierarchy
    case let archived as KeyedArchiveValue:
      switch archived {
      case .object(let object): return object.classHierarchy
      case .string: return ["NSString", "NSObject"]
      case .integer, .real, .bool: return ["NSNumber", "NSValue", "NSObject"]
      case .data: return ["NSData", "NSObject"]
      case .date: return ["NSDate", "NSObject"]
      case .array: return ["NSArray", "NSObject"]
      case .set: return ["NSSet", "NSObject"]
      case .dictionary: return ["NSDictionary", "NSObject"]
      case .null: return ["NSNull", "NSObject"]
      }
    default: return [String(describing: type(of: value))]
    }
  }

  /// Whether a class of `hierarchy` is a `name`. A Swift class archives under its
  /// module-qualified name (`CoreDataPlus_Tests.Cover`), which a model names without the
  /// module (`Cover`).
  static func matches(_ hierarchy: [String], _ name: String) -> Bool {
    hierarchy.contains { $0 == name || $0.hasSuffix("." + name) }
  }
}

/// Named value transformers, for the transformable attributes of the models a context opens.
///
/// ``standard`` holds Core Data's own: `NSKeyedUnarchiveFromData` (also used when an attribute
/// names none) and `NSSecureUnarchiveFromData` (with its `…Transformer` spelling), both
/// ``KeyedArchiveTransformer``s.
public struct ValueTransformerRegistry: Sendable {
  /// Core Data's default transformer name, used when an attribute gives none.
  public static let defaultName = "NSKeyedUnarchiveFromData"

  private var transformers: [String: any AttributeValueTransformer] = [:]
  private var classNames = Set<String>()

  /// Whether a context refuses to open on a model naming a value class that a registered
  /// transformer does not know (the default: a misspelled class name, which Core Data lets
  /// pass and fails on later). Off, nothing is checked when the context opens; for tools that
  /// copy the bytes without looking at them.
  public var refusesUnknownNames = true

  /// Whether a context refuses to open on a model naming a transformer this registry does not
  /// have (off by default: as in Core Data, the store opens, and only reading or setting that
  /// attribute's value fails, naming the transformer).
  public var requiresEveryTransformer = false

  /// An empty registry (not even the default transformer).
  public init() {}

  /// Core Data's transformers.
  public static let standard: ValueTransformerRegistry = {
    var registry = ValueTransformerRegistry()
    registry.register(KeyedArchiveTransformer(secure: false), as: defaultName)
    registry.register(KeyedArchiveTransformer(secure: true), as: "NSSecureUnarchiveFromData")
    registry.register(
      KeyedArchiveTransformer(secure: true), as: "NSSecureUnarchiveFromDataTransformer")
    return registry
  }()

  /// Registers `transformer` under `name`, replacing one registered before.
  public mutating func register(_ transformer: any AttributeValueTransformer, as name: String) {
    transformers[name] = transformer
  }

  /// Declares a class name that values may have (one of an app's own classes that archives
  /// carry, such as `Color`), so an attribute's `valueClassName` naming it is known.
  public mutating func registerValueClass(_ name: String) {
    classNames.insert(name)
  }

  /// The transformer for an attribute's `valueTransformerName` (the default one when nil or
  /// empty), or nil when none is registered under that name.
  public func transformer(named name: String?) -> (any AttributeValueTransformer)? {
    transformers[Self.effectiveName(name)]
  }

  /// The name a transformer is looked up by: `name`, or ``defaultName`` when it is nil or
  /// empty, as Core Data reads an attribute's `valueTransformerName`.
  public static func effectiveName(_ name: String?) -> String {
    name.flatMap { $0.isEmpty ? nil : $0 } ?? defaultName
  }

  /// Whether values may be of class `name`: a Foundation class the keyed-archive
  /// transformers know, one of the Apple frameworks' classes that archives commonly carry
  /// (`UIColor`, `NSColor`, `UIImage`, `CLLocation`, …), a class declared with
  /// ``registerValueClass(_:)``, or one a registered transformer makes.
  public func knowsValueClass(_ name: String) -> Bool {
    knownValueClasses.contains(name)
  }

  /// Every class name ``knowsValueClass(_:)`` accepts.
  public var knownValueClasses: Set<String> {
    ValueClass.foundationClasses.union(ValueClass.platformClasses).union(classNames).union(
      transformers.values.flatMap(\.valueClassNames))
  }
}

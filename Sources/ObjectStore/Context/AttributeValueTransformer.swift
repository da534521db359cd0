/// Converts a transformable attribute's value to the bytes the store keeps and back, as
/// Core Data's `NSValueTransformer` does for "Non-Standard Persistent Attributes".
///
/// Register one under the name an attribute's `valueTransformerName` gives, in the
/// ``ValueTransformerRegistry`` the ``ObjectContext`` opens with:
///
/// ```swift
/// struct RGBTransformer: AttributeValueTransformer {
///   var valueClassNames: Set<String> { ["Color"] }
///   func transformedValue(_ bytes: [UInt8]) throws -> any Sendable { Color(bytes) }
///   func reverseTransformedValue(_ value: any Sendable) throws -> [UInt8] {
///     guard let color = value as? Color else { throw TransformError("not a Color") }
///     return color.bytes
///   }
/// }
/// var transformers = ValueTransformerRegistry.standard
/// transformers.register(RGBTransformer(), as: "RGBTransformer")
/// let context = try ObjectContext(storePath: path, model: model, transformers: transformers)
/// ```
public protocol AttributeValueTransformer: Sendable {
  /// The class names of the values this transformer makes, so that an attribute's
  /// `valueClassName` naming one of them is known when the context opens.
  var valueClassNames: Set<String> { get }

  /// The value the store's bytes stand for.
  func transformedValue(_ bytes: [UInt8]) throws -> any Sendable

  /// The bytes to store for `value`.
  func reverseTransformedValue(_ value: any Sendable) throws -> [UInt8]
}

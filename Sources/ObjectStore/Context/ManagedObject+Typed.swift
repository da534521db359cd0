import ObjectModel

extension ManagedObject {
  /// The value of attribute `key` as a Swift value of type `T` (nil when it has none), with
  /// Core Data's numeric conversions (``AttributeConvertible``); a transformable attribute's
  /// value comes through its value transformer.
  ///
  /// ```swift
  /// let title = try book.value(for: "title", as: String.self)
  /// let pages: Int? = try book.value(for: "pagesCount")
  /// ```
  /// - Throws: ``StoreError`` (``StoreError/Kind/invalidValue``) naming the entity, the key,
  ///   its type and `T` when the value does not convert, or the key is unknown.
  public func value<T: AttributeConvertible>(for key: String, as type: T.Type = T.self)
    throws(StoreError) -> T?
  {
    let attribute = traits.attribute(named: key)
    if attribute?.type == .transformable {
      return try transformedValue(for: key, as: T.self)
    }
    guard let stored = try value(for: key) else { return nil }
    guard let converted = T(attributeValue: stored, type: attribute?.type ?? .undefined) else {
      throw context.fail(
        .invalidValue,
        "\(entity).\(key) is \(attribute?.type.rawValue ?? "an extended attribute") and holds \(stored), which is not a \(T.self)"
      )
    }
    return converted
  }

  /// Sets attribute `key` to a Swift value (nil empties it), converted for the attribute's type
  /// as Core Data converts (an integer into a Double attribute, 0 or 1 into a Boolean one, a
  /// whole Double into an integer one within its width); a transformable attribute's value
  /// goes through its value transformer.
  /// - Throws: ``StoreError`` (``StoreError/Kind/invalidValue``) naming the entity, the key,
  ///   its type and the value when it does not convert, or as ``setValue(_:for:)-(AttributeValue?,_)``.
  @inlinable
  public func setValue<T: AttributeConvertible>(_ value: T?, for key: String) throws(StoreError) {
    // Inlinable, so that an app's calls are specialized for their types: a generic call pays
    // for looking up its types' metadata on every value set.
    guard let slot = traits.slots[key] else {
      throw context.fail(.invalidValue, "\(entity) has no attribute \(key)")
    }
    let type = traits.slotAttributes[slot].type
    guard let value else { return try context.setValue(nil, slot: slot, of: self) }
    if type == .transformable { return try setTransformedValue(value, for: key) }
    guard let converted = value.attributeValue(for: type) else {
      throw context.fail(
        .invalidValue,
        "\(entity).\(key) is \(type.rawValue); \(value) (\(T.self)) does not convert to it")
    }
    try context.setValue(converted, slot: slot, of: self)
  }

  /// The value of transformable attribute `key`, through its value transformer, as `T`.
  /// - Throws: ``StoreError`` when the value is not a `T`, or as
  ///   ``transformedValue(for:)``.
  public func transformedValue<T>(for key: String, as type: T.Type) throws(StoreError) -> T? {
    guard let value = try transformedValue(for: key) else { return nil }
    guard let typed = value as? T else {
      throw context.fail(
        .invalidValue, "\(entity).\(key) holds a \(Swift.type(of: value)), not a \(T.self)")
    }
    return typed
  }
}

// MARK: Accessors for generated classes

extension ManagedObject {
  /// For generated accessors: the value of attribute `key` as `T`. A store error stops the
  /// program with its description, as Core Data's accessors raise; code that expects errors
  /// calls ``value(for:as:)``.
  public func accessorValue<T: AttributeConvertible>(_ key: String) -> T? {
    do { return try value(for: key, as: T.self) } catch { Self.stop(error) }
  }

  /// For generated accessors of a non-optional property (a required attribute, or a scalar
  /// one as Xcode's "Use Scalar Type" makes it): the value of attribute `key`, or while it has
  /// none, the type's empty value (``AttributeConvertible/emptyAttributeValue``: `0`, `false`,
  /// `""`…), as a Core Data scalar accessor reads nil as 0. Reading sets nothing: a required
  /// attribute left empty still fails the save's validation, naming it.
  public func requiredAccessorValue<T: AttributeConvertible>(_ key: String) -> T {
    guard let value: T = accessorValue(key) ?? T.emptyAttributeValue else {
      Self.stop("\(entity).\(key) has no value yet, and \(T.self) has no empty value to read")
    }
    return value
  }

  /// For generated accessors: sets attribute `key` (see ``setValue(_:for:)-(T?,_)``).
  @inlinable
  public func setAccessorValue<T: AttributeConvertible>(_ value: T?, _ key: String) {
    do { try setValue(value, for: key) } catch { Self.stop(error) }
  }

  /// For generated accessors: the value of a transformable attribute, through its transformer.
  public func accessorTransformedValue(_ key: String) -> (any Sendable)? {
    do { return try transformedValue(for: key) } catch { Self.stop(error) }
  }

  /// For generated accessors: sets a transformable attribute through its transformer.
  public func setAccessorTransformedValue(_ value: (any Sendable)?, _ key: String) {
    do { try setTransformedValue(value, for: key) } catch { Self.stop(error) }
  }

  /// For generated accessors: the object a to-one relationship points at, as `T`.
  public func accessorObject<T: ManagedObject>(_ key: String) -> T? {
    do {
      guard let object = try object(for: key) else { return nil }
      guard let typed = object as? T else {
        Self.stop("\(object) is a \(type(of: object)), not a \(T.self): register its class")
      }
      return typed
    } catch { Self.stop(error) }
  }

  /// For generated accessors: points a to-one relationship at `object`.
  public func setAccessorObject(_ object: ManagedObject?, _ key: String) {
    do { try setObject(object, for: key) } catch { Self.stop(error) }
  }

  /// For generated accessors: the objects of a to-many relationship, as `T`, in order.
  public func accessorObjects<T: ManagedObject>(_ key: String) -> [T] {
    do {
      return try objects(for: key).map { object in
        guard let typed = object as? T else {
          Self.stop("\(object) is a \(type(of: object)), not a \(T.self): register its class")
        }
        return typed
      }
    } catch { Self.stop(error) }
  }

  /// For generated accessors: makes a to-many relationship hold exactly `objects`.
  public func setAccessorObjects(_ objects: [ManagedObject], _ key: String) {
    do { try setObjects(objects, for: key) } catch { Self.stop(error) }
  }

  @usableFromInline
  static func stop(_ error: any Error) -> Never {
    fatalError("graphvault: \(error)")
  }

  private static func stop(_ message: String) -> Never {
    fatalError("graphvault: \(message)")
  }
}

import ObjectModel

/// The names an archive's model gives what a later model of the same store renamed, as a
/// migration infers renames: an entity or property of the later model whose renaming
/// identifier names one of the archive's model (and whose own name the archive's model does
/// not have) is that one, renamed. `find` looks for the later model's names in older
/// archives under their older names, and reports what it found under the later ones, so an
/// object's history reads as one through a rename.
struct ModelRenames {
  /// Entity: older name → later name.
  private var entities: [String: String] = [:]
  /// Per entity (its older name): property's older name → later name.
  private var properties: [String: [String: String]] = [:]

  /// The renames from `model` (an older archive's) to `reference` (nil, or the same names:
  /// none).
  init(model: ObjectModel, reference: ObjectModel?) {
    guard let reference, !model.isSameVersion(as: reference) else { return }
    for entity in reference.entities {
      var older = entity.name
      if model.entity(named: entity.name) == nil, let renamed = entity.renamingIdentifier,
        model.entity(named: renamed) != nil
      {
        older = renamed
        entities[renamed] = entity.name
      }
      guard model.entity(named: older) != nil else { continue }
      let own = Set(
        model.attributes(of: older).map(\.name) + model.relationships(of: older).map(\.name))
      var renames: [String: String] = [:]
      let later =
        reference.attributes(of: entity.name).map { ($0.name, $0.renamingIdentifier) }
        + reference.relationships(of: entity.name).map { ($0.name, $0.renamingIdentifier) }
      for (name, renamed) in later {
        guard let renamed, renamed != name, !own.contains(name), own.contains(renamed) else {
          continue
        }
        renames[renamed] = name
      }
      if !renames.isEmpty { properties[older] = renames }
    }
  }

  /// The archive's name for the later model's entity `name`.
  func older(_ name: String) -> String {
    entities.first { $0.value == name }?.key ?? name
  }

  /// The archive's name for the later model's property `name` of entity `entity` (the
  /// archive's name of it).
  func older(_ name: String, of entity: String) -> String {
    properties[entity]?.first { $0.value == name }?.key ?? name
  }

  /// The later model's name for the archive's entity `name`.
  func newer(entity name: String) -> String { entities[name] ?? name }

  /// The later model's name for the archive's property `name` of entity `entity`.
  func newer(property name: String, of entity: String) -> String {
    properties[entity]?[name] ?? name
  }

  /// `object`, found in the archive, named as the later model names it.
  func newer(_ object: FindService.Object) -> FindService.Object {
    guard entities[object.entity] != nil || properties[object.entity] != nil else {
      return object
    }
    var values: [String: String] = [:]
    for (name, value) in object.values {
      values[newer(property: name, of: object.entity)] = value
    }
    return FindService.Object(
      entity: newer(entity: object.entity), primaryKey: object.primaryKey, values: values,
      keys: object.keys.map { newer(property: $0, of: object.entity) })
  }
}

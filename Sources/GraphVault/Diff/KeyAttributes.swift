import ObjectModel

/// The attributes that name an object to a person, which `diff` and `find` show before the
/// others: those of the entity's uniqueness constraints (its own and its ancestors'), then
/// `name` and `title`.
public enum KeyAttributes {
  /// Attribute names that name an object wherever they occur.
  static let naming = ["name", "title"]

  /// The key attributes of `entity` in `model`, in the order they are shown; none for an
  /// entity the model lacks.
  public static func of(_ entity: String, in model: ObjectModel) -> [String] {
    let lineage = model.lineage(of: entity)
    let attributes = Set(model.attributes(of: entity).map(\.name))
    var keys: [String] = []
    for description in lineage {
      for name in description.uniquenessConstraints.joined()
      where attributes.contains(name) && !keys.contains(name) {
        keys.append(name)
      }
    }
    for name in naming where attributes.contains(name) && !keys.contains(name) {
      keys.append(name)
    }
    return keys
  }

  /// `names` with those in `keys` first, in the order of `keys`, then the others by name.
  public static func ordered(_ names: some Sequence<String>, keys: [String]) -> [String] {
    names.sorted { rank($0, keys) < rank($1, keys) }
  }

  /// Where `name` goes: a key by its place among the keys, any other after them by name.
  static func rank(_ name: String, _ keys: [String]) -> (Int, String) {
    (keys.firstIndex(of: name) ?? keys.count, name)
  }
}

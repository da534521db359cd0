import ObjectModel

/// The attributes objects are matched by between two different stores (stores with different
/// `Z_UUID`s, such as a store an app regenerated, whose primary keys were handed out anew):
/// each entity's uniqueness constraint (SwiftData's `#Unique` or `@Attribute(.unique)`, Core
/// Data's `uniquenessConstraints`) when it names one stored attribute, unless `--key` chose an
/// attribute for the entity or one of its ancestors.
///
/// Within one store (two archives of it, a store and its own backup) primary keys name the
/// same objects and stay the match.
struct ConstraintKeys: Equatable {
  /// Entity → the attribute its objects are matched by: those `--key` gave, and those chosen.
  let keys: [String: String]
  /// Entity → the constrained attribute chosen for it (a subset of ``keys``).
  let chosen: [String: String]
  /// Entity → a constraint that names several attributes, which is no single key: its objects
  /// stay matched by primary key.
  let compound: [String: [String]]

  /// The keys for comparing objects of `model`, given the keys `--key` named; constraints are
  /// looked at only when `differentStores`.
  init(model: ObjectModel, given: [String: String], differentStores: Bool) {
    var keys = given
    var chosen: [String: String] = [:]
    var compound: [String: [String]] = [:]
    if differentStores {
      let ordered = model.numberedEntities
      for entity in ordered where !entity.uniquenessConstraints.isEmpty {
        // A key on the entity or an ancestor (given or chosen) already matches it.
        guard !model.lineage(of: entity.name).contains(where: { keys[$0.name] != nil }) else {
          continue
        }
        let stored = Set(model.attributes(of: entity.name).filter(\.isStored).map(\.name))
        if let single = entity.uniquenessConstraints.first(where: {
          $0.count == 1 && stored.contains($0[0])
        }) {
          keys[entity.name] = single[0]
          chosen[entity.name] = single[0]
        } else if let first = entity.uniquenessConstraints.first {
          compound[entity.name] = first
        }
      }
    }
    self.keys = keys
    self.chosen = chosen
    self.compound = compound
  }

  /// What the choice means for the user, one sentence per entity; empty when nothing was
  /// chosen or passed over.
  var notes: [String] {
    chosen.sorted { $0.key < $1.key }.map { entity, attribute in
      "\(entity) matched by its uniqueness constraint (\(attribute)), as the sides are different stores; --key \(entity).ATTRIBUTE chooses otherwise"
    }
      + compound.sorted { $0.key < $1.key }.map { entity, attributes in
        "\(entity) matched by primary key: its uniqueness constraint (\(attributes.joined(separator: ", "))) names more than one attribute; --key \(entity).ATTRIBUTE matches by one of them"
      }
  }
}

import ObjectModel
import ObjectStore

/// How an archive written at one model version reaches another: the archive's version located
/// in the target model set, then hop by hop through the versions in order.
///
/// The order is the mapping file's `order` when it gives one, else the model set's (natural
/// order of version names, the current version last: see ``ModelVersionSet``).
package struct MigrationPlan: Sendable {
  /// The archive's version.
  package let sourceVersion: String
  /// The target version.
  package let targetVersion: String
  /// The target version's model.
  package let target: ObjectModel
  /// The hops, in order; empty when the archive is at the target version.
  package let hops: [MigrationHop]
  /// Custom stages, run with their hops.
  package let stages: [MigrationStage]

  /// Plans the migration of an archive of `source` (with its entity version hashes and schema)
  /// into `set`'s version `targetVersion` (the current one when nil).
  ///
  /// The archive's version is the one with `source`'s entity version hashes, as Core Data
  /// identifies a model (whatever the models, files and versions are called), else the one
  /// whose schema the archive's is. When no version of the set is the archive's, the plan is
  /// one hop from `source` itself (an archive's model, a store's model cache) to the target,
  /// named `sourceName` in messages: what Core Data's lightweight migration infers from a
  /// store's cached model to an app's current one.
  ///
  /// A hop follows the mapping file's rules for it, or the mapping models in `models` that
  /// cover it (``MappingModel/covers(from:to:)``), or else what Core Data would infer.
  /// - Throws: ``MigrationError`` (``MigrationError/Kind/refused``) when the archive's version
  ///   is newer than the target, a hop cannot be migrated (naming the entity or property no
  ///   inferred mapping covers), or a mapping model names custom policy classes no stage
  ///   stands in for (naming every one).
  package static func make(
    source: ObjectModel, sourceName: String = "the archive's model", schema: SchemaSnapshot,
    set: ModelVersionSet,
    targetVersion: String? = nil, mapping: MappingFile? = nil, models: [MappingModel] = [],
    stages: [MigrationStage] = []
  ) throws(MigrationError) -> MigrationPlan {
    var versions = set.versions
    if let order = mapping?.order {
      var ordered: [ObjectModel] = []
      for name in order {
        guard let version = set.version(named: name) else {
          throw MigrationError(
            .refused,
            "the mapping file's order names \(name), which is not a version of \(set.name) (versions: \(names(set.versions)))"
          )
        }
        ordered.append(version)
      }
      versions = ordered
    }
    let targetName = targetVersion ?? set.currentVersionName
    guard let targetIndex = versions.firstIndex(where: { versionName(of: $0) == targetName }) else {
      throw MigrationError(
        .refused,
        "\(set.name) has no version \(targetName) (versions: \(names(versions)))")
    }
    let located: ObjectModel?
    if let same = versions.first(where: { $0.isSameVersion(as: source) }) {
      located = same
    } else {
      located = try? VersionDetector.detect(
        hashes: source.versionHashes, schema: schema,
        identifiers: source.versionIdentifiers,
        in: ModelVersionSet(name: set.name, versions: versions, currentVersionName: targetName),
        path: sourceName)
    }
    guard let located else {
      // Not a version of the set: one hop inferred from the source's own model (its
      // descriptor or model cache) to the target, as Core Data's lightweight migration infers
      // one from a store's cached model.
      let from = source.withVersionName(sourceName)
      let to = versions[targetIndex]
      var builder = HopBuilder(mapping: mapping, models: models, stages: stages)
      let hop = try builder.hop(from: from, to: to)
      try builder.checkPolicies()
      return MigrationPlan(
        sourceVersion: sourceName, targetVersion: targetName, target: to, hops: [hop],
        stages: stages.filter { $0.policy == nil } + builder.bound)
    }
    let locatedName = versionName(of: located)
    let sourceIndex = versions.firstIndex { versionName(of: $0) == locatedName }!
    guard sourceIndex <= targetIndex else {
      throw MigrationError(
        .refused,
        "\(sourceName) is version \(locatedName), newer than the target version \(targetName) (order: \(names(versions))); restore it with a model that has \(locatedName) as its target"
      )
    }
    for hop in mapping?.hops ?? [] {
      guard let from = versions.firstIndex(where: { versionName(of: $0) == hop.from }),
        let to = versions.firstIndex(where: { versionName(of: $0) == hop.to })
      else {
        throw MigrationError(
          .refused,
          "the mapping file has a hop \(hop.from) → \(hop.to), but \(set.name) has versions \(names(versions))"
        )
      }
      guard to == from + 1 else {
        throw MigrationError(
          .refused,
          "the mapping file's hop \(hop.from) → \(hop.to) does not join consecutive versions (order: \(names(versions)))"
        )
      }
    }
    var builder = HopBuilder(mapping: mapping, models: models, stages: stages)
    var hops: [MigrationHop] = []
    if sourceIndex < targetIndex {
      for index in sourceIndex..<targetIndex {
        let from = (index == sourceIndex ? source : versions[index]).withVersionName(
          versionName(of: versions[index]))
        hops.append(try builder.hop(from: from, to: versions[index + 1]))
      }
    }
    try builder.checkPolicies()
    for stage in stages
    where stage.policy == nil
      && !hops.contains(where: {
        versionName(of: $0.source) == stage.from && versionName(of: $0.destination) == stage.to
      })
    {
      throw MigrationError(
        .refused,
        "a custom stage runs with \(stage.from) → \(stage.to), which is not a hop of this migration (\(locatedName) → \(targetName))"
      )
    }
    return MigrationPlan(
      sourceVersion: locatedName, targetVersion: targetName, target: versions[targetIndex],
      hops: hops, stages: stages.filter { $0.policy == nil } + builder.bound)
  }

  /// Builds hops: by the mapping file's rules for a hop, else the mapping models that cover
  /// it, else what Core Data infers; binds the custom stages that stand in for the mapping
  /// models' policies.
  private struct HopBuilder {
    let mapping: MappingFile?
    let models: [MappingModel]
    let stages: [MigrationStage]
    /// Stages bound to a policy of a hop's mapping models.
    var bound: [MigrationStage] = []
    /// Policies no stage stands in for, with their hop.
    var missing: [(policy: MappingModel.Policy, hop: String)] = []

    init(mapping: MappingFile?, models: [MappingModel], stages: [MigrationStage]) {
      self.mapping = mapping
      self.models = models
      self.stages = stages
    }

    mutating func hop(from: ObjectModel, to: ObjectModel) throws(MigrationError) -> MigrationHop {
      let hopName = "\(versionName(of: from)) → \(versionName(of: to))"
      var rules = mapping?.hops.first {
        $0.from == versionName(of: from) && $0.to == versionName(of: to)
      }
      let covering = models.filter { $0.covers(from: from, to: to) }
      if !covering.isEmpty {
        guard rules == nil else {
          throw MigrationError(
            .refused,
            "both the mapping file and \(covering.map(\.path).joined(separator: ", ")) map \(hopName); give one of them"
          )
        }
        let translated = try MappingModel.rules(for: covering, from: from, to: to)
        rules = translated.hop
        for policy in translated.policies {
          let standing = stages.filter {
            $0.standsIn(
              for: policy.className, from: versionName(of: from), to: versionName(of: to))
          }
          guard !standing.isEmpty else {
            missing.append((policy, hopName))
            continue
          }
          for var stage in standing {
            stage.from = versionName(of: from)
            stage.to = versionName(of: to)
            stage.entities = Set(policy.entities)
            bound.append(stage)
          }
        }
      }
      return try MigrationHop(from: from, to: to, mapping: rules)
    }

    /// Refuses when a mapping model's policy has no stage standing in for it, naming every one.
    func checkPolicies() throws(MigrationError) {
      guard missing.isEmpty else {
        let named = missing.map { policy, hop in
          "\(policy.className) (entity mappings \(policy.mappings.joined(separator: ", ")), \(hop))"
        }
        throw MigrationError(
          .refused,
          "the mapping models name custom migration policies, whose code graphvault does not have: \(named.joined(separator: "; ")). Register a MigrationStage(policy:) under each class name (Swift), or map the hop in a JSON mapping file instead"
        )
      }
    }
  }

  private static func names(_ versions: [ObjectModel]) -> String {
    versions.map { versionName(of: $0) }.joined(separator: ", ")
  }

  /// What `entity` of hop `hop`'s destination version (-1: of the source) becomes at the
  /// target version, or nil when a later hop removes it.
  func finalEntity(_ entity: String, after hop: Int) -> String? {
    var name: String? = entity
    for later in hops.dropFirst(hop + 1) { name = name.flatMap { later.entityMap[$0] } }
    return name
  }
}

extension MigrationPlan {
  /// The custom stages that run with `hop` (named by its versions).
  func stages(of hop: MigrationHop) -> [MigrationStage] {
    stages.filter {
      $0.from == versionName(of: hop.source) && $0.to == versionName(of: hop.destination)
    }
  }
}

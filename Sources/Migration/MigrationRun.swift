import ObjectModel
import ObjectStore

/// What a migration did (or, in a dry run, would do).
public struct MigrationReport: Codable, Sendable, Equatable {
  /// One hop's changes and counts.
  public struct Hop: Codable, Sendable, Equatable {
    /// The version migrated from.
    public let from: String
    /// The version migrated to.
    public let to: String
    /// Each change, in words.
    public let changes: [String]
    /// Counts by entity (destination entities; dropped objects under their source entity).
    public var objects: [String: MigrationHop.Counts]
  }

  /// The archive's version.
  public let from: String
  /// The target version.
  public let to: String
  /// The hops.
  public var hops: [Hop]
  /// What else the migration changes (history rows, columns the model does not describe).
  public var notes: [String]
}

/// One pass of objects through a plan's hops and custom stages.
package final class MigrationRun {
  package let plan: MigrationPlan
  var states: [MigrationHop.State] = []
  /// The highest primary key by root entity of the target version.
  package private(set) var maxima: [String: Int64] = [:]
  /// Values of columns the archive's model does not describe, dropped, by table.column.
  var droppedColumns: [String: Int] = [:]
  let sourceModel: ObjectModel
  /// The archive's model mapped onto its archived schema.
  package let sourceLayout: StoreLayout

  /// Prepares a run of objects of `archiveModel` (laid out in `schema`), with primary keys
  /// allocated above the archive's `Z_PRIMARYKEY` maxima.
  package init(
    plan: MigrationPlan, archiveModel: ObjectModel, schema: SchemaSnapshot,
    entityRows: [CoreDataStore.EntityRow]
  ) throws(MigrationError) {
    self.plan = plan
    sourceModel = archiveModel
    do {
      sourceLayout = try StoreLayout(
        model: archiveModel, schema: schema, entityRows: entityRows)
    } catch {
      throw MigrationError(wrapping: error)
    }
    let numbers = CoreDataStore.entityNumbers(for: archiveModel, rows: entityRows)
    for root in archiveModel.rootEntities {
      let maximum = entityRows.first { $0.number == numbers[root.name] }?.maxPrimaryKey ?? 0
      for entity in archiveModel.hierarchy(from: root.name) {
        guard let final = plan.finalEntity(entity.name, after: -1),
          let finalRoot = plan.target.root(of: final)?.name
        else { continue }
        maxima[finalRoot] = max(maxima[finalRoot] ?? 0, maximum)
      }
    }
    for index in plan.hops.indices {
      states.append(MigrationHop.State { [unowned self] entity in allocate(entity, hop: index) })
    }
  }

  /// A new primary key for an object of `entity` made in hop `hop`, in its target hierarchy.
  func allocate(_ entity: String, hop: Int) -> Int64 {
    let final = plan.finalEntity(entity, after: hop) ?? entity
    let root = plan.target.root(of: final)?.name ?? "\(hop)/\(entity)"
    let next = (maxima[root] ?? 0) + 1
    maxima[root] = next
    return next
  }

  /// Runs every custom stage's `before`.
  package func start() throws(MigrationError) {
    for hop in plan.hops {
      for stage in plan.stages(of: hop) {
        do { try stage.before?(hop) } catch {
          throw MigrationError(
            .refused,
            "the custom stage \(stage.from) → \(stage.to) failed before: \(error)")
        }
      }
    }
  }

  private var sourceShapes: [String: StoredShape] = [:]

  /// What the columns of `entity`'s archived rows mean.
  func sourceShape(_ entity: String) -> StoredShape {
    if let known = sourceShapes[entity] { return known }
    let shape = StoredShape(entity: entity, layout: sourceLayout)
    sourceShapes[entity] = shape
    return shape
  }

  /// The archived object as a migrating object (``StoredShape/value(of:manyToMany:)``), the
  /// values of columns the archive's model does not describe counted as dropped.
  package func migrating(_ record: ObjectRecord, manyToMany: [String: [(Int64, Int64?)]])
    -> MigratingObject
  {
    let shape = sourceShape(record.entity)
    var object = shape.value(of: record, manyToMany: manyToMany)
    for column in object.unmodelled.keys {
      droppedColumns["\(shape.table).\(column)", default: 0] += 1
    }
    object.unmodelled = [:]
    return object
  }

  /// Migrates one archived object through every hop: the objects and loose links it becomes
  /// at the target version.
  package func migrate(_ object: MigratingObject) throws(MigrationError) -> (
    objects: [MigratingObject], links: [LooseLink]
  ) {
    var objects = [object]
    var links: [LooseLink] = []
    for (index, hop) in plan.hops.enumerated() {
      var output = MigrationHop.Output()
      let stages = plan.stages(of: hop).filter { $0.perObject != nil }
      for object in objects {
        guard !stages.isEmpty else {
          try hop.apply(object, into: &output, state: states[index])
          continue
        }
        var produced = MigrationHop.Output()
        try hop.apply(object, into: &produced, state: states[index])
        // The object itself comes first when the hop keeps it; what it made follows.
        let keeps =
          produced.objects.first.map {
            $0.primaryKey == object.primaryKey && hop.entityMap[object.entity] == $0.entity
          } ?? false
        for stage in stages {
          produced.objects = try run(
            stage, on: produced.objects, source: keeps ? object : nil, hop: index)
        }
        output.objects += produced.objects
        output.links += produced.links
      }
      output.links += links.flatMap { hop.map($0) }
      objects = output.objects
      links = output.links
    }
    return (objects, links)
  }

  /// Runs `stage`'s per-object code on the objects one source object became (`source`, the
  /// first of them when kept): those it keeps and those it makes.
  private func run(
    _ stage: MigrationStage, on objects: [MigratingObject], source: MigratingObject?, hop: Int
  ) throws(MigrationError) -> [MigratingObject] {
    var kept: [MigratingObject] = []
    var emitter = MigrationEmitter(
      allocate: { [unowned self] entity in allocate(entity, hop: hop) },
      destination: plan.hops[hop].destination)
    for (position, var object) in objects.enumerated() {
      guard stage.applies(to: object.entity) else {
        kept.append(object)
        continue
      }
      emitter.source = position == 0 ? source : nil
      let keep: Bool
      do { keep = try stage.perObject!(&object, &emitter) } catch {
        throw MigrationError(
          .refused,
          "the custom stage \(stage.policy ?? "\(stage.from) → \(stage.to)") failed on \(object.reference): \(error)"
        )
      }
      if keep { kept.append(object) }
      kept += emitter.objects
      for made in emitter.objects {
        states[hop].counts[made.entity, default: .init()].created += 1
      }
      emitter.objects.removeAll()
    }
    return kept
  }

  /// The report so far.
  package func report(notes: [String]) -> MigrationReport {
    var allNotes = notes
    for (column, count) in droppedColumns.sorted(by: { $0.key < $1.key }) {
      allNotes.append(
        "\(column): \(count) values in a column the model does not describe were dropped")
    }
    return plan.report(counts: states.map(\.counts), notes: allNotes)
  }
}

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

  /// What an archived record of one entity needs to become a migrating object, worked out once.
  struct SourceShape {
    /// Per to-one relationship: whether the inverse is to-one too, and the order-key column of
    /// an ordered inverse.
    var toOne: [String: (isMirrored: Bool, orderColumn: String?)] = [:]
    /// The destination entity of each to-many relationship.
    var toManyDestinations: [String: String] = [:]
    /// The attribute stored in each column.
    var attributeColumns: [String: String] = [:]
    /// The columns keeping owners of a to-many relationship without an inverse: the entity
    /// declaring it, its name, and its order column when ordered.
    var ownerColumns: [String: (entity: String, name: String, orderColumn: String?)] = [:]
    /// What the order and owner columns among a record's stored values are for (a migration by
    /// columns reads them by meaning).
    var linkColumns: [String: ColumnObjects.Meaning] = [:]
    var table = ""
  }
  private var sourceShapes: [String: SourceShape] = [:]

  func sourceShape(_ entity: String) -> SourceShape {
    if let known = sourceShapes[entity] { return known }
    var shape = SourceShape()
    let table = sourceLayout.table(for: entity)
    shape.table = table?.name ?? entity
    for relationship in sourceModel.relationships(of: entity) {
      guard !relationship.isToMany else {
        shape.toManyDestinations[relationship.name] = relationship.destination
        continue
      }
      let inverse = sourceModel.inverse(of: relationship)
      let orderColumn = sourceLayout.orderColumn(ofToOne: relationship, in: entity)
      shape.toOne[relationship.name] = (inverse.map { !$0.isToMany } ?? false, orderColumn)
      if let orderColumn { shape.linkColumns[orderColumn] = .order(relationship.name) }
    }
    for columns in table.map({ Array($0.attributes.values) }) ?? [] {
      for column in columns { shape.attributeColumns[column.column] = column.attribute.name }
    }
    for (key, column) in table?.ownerKeys ?? [:] {
      let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
      guard parts.count == 2 else { continue }
      shape.ownerColumns[column] = (parts[0], parts[1], table?.ownerOrderKeys[key])
      shape.linkColumns[column] = .owner(parts[0], parts[1])
      if let order = table?.ownerOrderKeys[key] {
        shape.linkColumns[order] = .ownerOrder(parts[0], parts[1])
      }
    }
    sourceShapes[entity] = shape
    return shape
  }

  /// The archived object as a migrating object: its to-one links (with the order key of an
  /// ordered inverse), its many-to-many rows, its values kept as stored.
  package func migrating(_ record: ObjectRecord, manyToMany: [String: [(Int64, Int64?)]])
    -> MigratingObject
  {
    var object = MigratingObject(
      entity: record.entity, primaryKey: record.primaryKey, version: record.version,
      attributes: record.attributes)
    let shape = sourceShape(record.entity)
    var columns = record.extraColumns
    for (name, target) in record.toOne {
      var link = MigrationLink(target: target)
      if let known = shape.toOne[name] {
        link.isMirrored = known.isMirrored
        if let column = known.orderColumn,
          case .integer(let order)? = columns.removeValue(forKey: column)
        {
          link.order = order
        }
      }
      object.relationships[name] = [link]
    }
    for (name, rows) in manyToMany {
      // Join rows hold only primary keys: the destination is named by the relationship's
      // entity (one hierarchy shares one key sequence, so the key finds the row).
      let destination = shape.toManyDestinations[name] ?? ""
      object.relationships[name] = rows.map { key, order in
        MigrationLink(target: ObjectReference(entity: destination, primaryKey: key), order: order)
      }
    }
    for (column, owner) in shape.ownerColumns {
      let key = columns.removeValue(forKey: column)
      let order = owner.orderColumn.flatMap { columns.removeValue(forKey: $0) }
      guard case .integer(let primaryKey)? = key else { continue }
      var order64: Int64?
      if case .integer(let place)? = order { order64 = place }
      object.owners.append(
        MigratingObject.OwnerLink(
          owner: ObjectReference(entity: owner.entity, primaryKey: primaryKey),
          relationship: owner.name, order: order64))
    }
    for (column, value) in columns {
      if let attribute = shape.attributeColumns[column] {
        object.storedAsIs[attribute] = value
      } else {
        droppedColumns["\(shape.table).\(column)", default: 0] += 1
      }
    }
    return object
  }

  /// Migrates one archived object through every hop: the objects and loose links it becomes
  /// at the target version.
  package func migrate(_ object: MigratingObject) throws(MigrationError) -> (
    objects: [MigratingObject], links: [MigrationHop.LooseLink]
  ) {
    var objects = [object]
    var links: [MigrationHop.LooseLink] = []
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

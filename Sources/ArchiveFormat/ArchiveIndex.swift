import PropertyList

/// The archive's last member, `index.plist`: every other member's path, size and SHA-256 in
/// order, object counts per entity, row counts per table, totals. An archive without it is
/// incomplete.
package enum ArchiveIndex {
  /// The index of `members` (in the order written) and the counts.
  package static func make(
    formatVersion: Int64 = ArchiveLayout.formatVersion, members: [MemberWriter.Entry],
    counts: [String: Int], rows: [String: Int]
  )
    -> PropertyListValue
  {
    return [
      "format": .integer(formatVersion),
      "members": .array(
        members.map {
          var member: [String: PropertyListValue] = [
            "path": .string($0.path), "size": .integer(Int64($0.size)),
            "sha256": .string($0.sha256),
          ]
          if let place = $0.place {
            member["offset"] = .integer(place.offset)
            member["length"] = .integer(place.length)
          }
          if let ranges = $0.ranges { member["ranges"] = ranges.propertyList }
          if let frames = $0.frames { member.merge(frames.entries) { $1 } }
          return .dictionary(member)
        }),
      "objects": .dictionary(counts.mapValues { .integer(Int64($0)) }),
      "tables": .dictionary(rows.mapValues { .integer(Int64($0)) }),
      "totals": [
        "objects": .integer(Int64(counts.values.reduce(0, +))),
        "rows": .integer(Int64(rows.values.reduce(0, +))),
        "members": .integer(Int64(members.count)),
      ],
    ]
  }

  /// The index must list exactly the members read, with their sizes and checksums, and the
  /// counts read.
  /// - Throws: ``ArchiveFormatError`` naming the first member or count that differs.
  package static func check(
    _ index: PropertyListValue, against seen: [(path: String, size: Int, sha256: String)],
    objects: [String: Int], tables: [String: Int]
  ) throws(ArchiveFormatError) {
    try checkMembers(index, against: seen)
    try checkCounts(index, objects: objects, tables: tables)
  }

  /// The index must count the objects and rows read: every entity and table it names, and
  /// every one that has objects or rows.
  /// - Throws: ``ArchiveFormatError`` naming the first count that differs.
  package static func checkCounts(
    _ index: PropertyListValue, objects: [String: Int], tables: [String: Int]
  ) throws(ArchiveFormatError) {
    func bad(_ detail: String) -> ArchiveFormatError {
      ArchiveFormatError(member: ArchiveLayout.index, detail)
    }
    let counted = index["objects"]?.dictionaryValue ?? [:]
    if let entity = objects.keys.sorted().first(where: { counted[$0] == nil && objects[$0]! > 0 }) {
      throw bad("the index does not count the objects of \(entity)")
    }
    let rowsCounted = index["tables"]?.dictionaryValue ?? [:]
    if let table = tables.keys.sorted().first(where: { rowsCounted[$0] == nil && tables[$0]! > 0 })
    {
      throw bad("the index does not count the rows of \(table)")
    }
    for (entity, count) in index["objects"]?.dictionaryValue ?? [:]
    where Int(count.integerValue ?? -1) != objects[entity, default: 0] {
      throw bad(
        "the index counts \(count.integerValue ?? -1) objects of \(entity); the archive holds \(objects[entity, default: 0])"
      )
    }
    for (table, count) in index["tables"]?.dictionaryValue ?? [:]
    where Int(count.integerValue ?? -1) != tables[table, default: 0] {
      throw bad(
        "the index counts \(count.integerValue ?? -1) rows of \(table); the archive holds \(tables[table, default: 0])"
      )
    }
  }

  /// The index must list exactly the members read, in order, with their sizes and checksums.
  /// - Throws: ``ArchiveFormatError`` naming the first member that differs.
  package static func checkMembers(
    _ index: PropertyListValue, against seen: [(path: String, size: Int, sha256: String)]
  ) throws(ArchiveFormatError) {
    if let first = mismatches(index, against: seen).first { throw first }
  }

  /// Every chunk whose ranges in the index (``ChunkRanges``) are not what it was read to hold
  /// (`read`: by path, the ranges of each chunk of objects read, nil for one that can have
  /// none), and every member given ranges that is no chunk of objects read; each named by its
  /// path.
  package static func rangeProblems(
    _ index: PropertyListValue, against read: [String: ChunkRanges?]
  ) -> [ArchiveFormatError] {
    var found: [ArchiveFormatError] = []
    for entry in index["members"]?.arrayValue ?? [] {
      guard let path = entry["path"]?.stringValue else { continue }
      let given: ChunkRanges?
      do {
        given = try ChunkRanges(reading: entry, member: path)
      } catch {
        found.append(error)
        continue
      }
      guard let given else { continue }
      guard case .some(.some(var held)) = read[path] else {
        found.append(
          ArchiveFormatError(
            member: ArchiveLayout.index, "it gives ranges to \(path), which can have none"))
        continue
      }
      // An archive written before chunks had bounds of their values gives none.
      if given.values == nil { held.values = nil }
      if held != given { found.append(ChunkRanges.mismatch(path)) }
    }
    return found
  }

  /// Where a framed archive's index says its members' frames are must be a chain: the first
  /// at 0, each where the one before ends (an index without places has nothing to check); a
  /// member in several frames must have frames that fill its place and hold its size
  /// (``MemberFrames``).
  /// - Returns: the first member whose place breaks the chain, or whose frames are damaged, as
  ///   a problem.
  package static func framingProblem(_ index: PropertyListValue) -> ArchiveFormatError? {
    let members = index["members"]?.arrayValue ?? []
    guard members.contains(where: { $0["offset"] != nil || $0["length"] != nil }) else {
      return nil
    }
    var end: Int64 = 0
    for member in members {
      let path = member["path"]?.stringValue ?? "?"
      guard let offset = member["offset"]?.integerValue,
        let length = member["length"]?.integerValue,
        offset == end, length > 0
      else {
        return ArchiveFormatError(
          member: ArchiveLayout.index,
          "the place the index gives \(path) does not follow the member before it (damaged)")
      }
      do {
        _ = try MemberFrames(
          reading: member, member: path, place: FramedStream.Place(offset: offset, length: length),
          size: Int(member["size"]?.integerValue ?? 0))
      } catch {
        return error
      }
      end = offset + length
    }
    return nil
  }

  /// Where the index's own frame must begin in a framed archive: where its last member ends.
  package static func framedIndexOffset(_ index: PropertyListValue) -> Int64? {
    guard let last = index["members"]?.arrayValue?.last,
      let offset = last["offset"]?.integerValue, let length = last["length"]?.integerValue
    else { return nil }
    return offset + length
  }

  /// Every way the members read differ from the index: a count, a member out of place, a
  /// member whose size or SHA-256 differs (each named by its path).
  package static func mismatches(
    _ index: PropertyListValue, against seen: [(path: String, size: Int, sha256: String)]
  ) -> [ArchiveFormatError] {
    func bad(_ detail: String) -> ArchiveFormatError {
      ArchiveFormatError(member: ArchiveLayout.index, detail)
    }
    let listed = index["members"]?.arrayValue ?? []
    var found: [ArchiveFormatError] = []
    if listed.count != seen.count {
      found.append(
        bad("the index lists \(listed.count) members but the archive holds \(seen.count)"))
    }
    for (entry, member) in zip(listed, seen) {
      guard entry["path"]?.stringValue == member.path else {
        found.append(
          bad(
            "the index lists \(entry["path"]?.stringValue ?? "?") where the archive holds \(member.path)"
          ))
        return found
      }
      if entry["size"]?.integerValue != Int64(member.size)
        || entry["sha256"]?.stringValue != member.sha256
      {
        found.append(
          ArchiveFormatError(
            member: member.path, "damaged: its size or SHA-256 differs from the index"))
      }
    }
    return found
  }
}

import ArchiveFormat
import Foundation
import ObjectModel
import PropertyList

/// What `graphvault verify` found.
public struct VerifyReport: Codable, Sendable {
  /// The archive.
  public let archive: String
  /// Whether the archive passed every check.
  public let ok: Bool
  /// Whether the index is present and last.
  public let complete: Bool
  /// The number of members read.
  public let members: Int
  /// Objects per entity read.
  public let objects: [String: Int]
  /// The first problems found (at most ``VerifyService/problemLimit``), each naming a member,
  /// object or reference.
  public let problems: [String]
  /// Entities all of whose members are intact (their objects could still be extracted).
  public let intactEntities: [String]
}

/// `graphvault verify`: checks an archive without restoring it.
public enum VerifyService {
  /// How many problems a report lists.
  public static let problemLimit = 20

  /// Checks the archive: complete (index present and last), every member's size and SHA-256
  /// as indexed, every record decodes and names an entity of the archived model, every
  /// reference points at an object in the archive, counts as indexed.
  ///
  /// Holds one primary key per object in memory, to check references.
  ///
  /// A sealed archive is opened with the password from `password`; each of its members must
  /// also pass authentication.
  /// - Throws: ``VaultError``: the archive is missing, or its password is missing or wrong
  ///   (every other problem is in the report).
  public static func verify(archivePath: String, password: PasswordSource? = nil)
    throws(VaultError) -> VerifyReport
  {
    try vault {
      try ArchiveAccess.requireInput(archivePath)
      var problems: [String] = []
      func problem(_ text: String) { if problems.count < problemLimit { problems.append(text) } }
      var seen: [(path: String, size: Int, sha256: String)] = []
      var model: ObjectModel?
      var index: PropertyListValue?
      var objects: [String: Int] = [:]
      var damagedEntities = Set<String>()
      var keys: [String: Set<Int64>] = [:]  // by root entity
      var references: [(from: String, root: String, key: Int64)] = []
      var headerFirst = false
      var memberCount = 0
      var readToTheEnd = false
      do {
        let stream = try ArchiveAccess.members(archivePath, password: password)
        while let member = try stream.next(hash: true, wantBytes: { _ in true }) {
          memberCount += 1
          guard let bytes = member.bytes else { continue }
          if memberCount == 1 { headerFirst = member.path == ArchiveLayout.header }
          if index != nil { problem("\(member.path) follows index.plist, which must be last") }
          if member.path == ArchiveLayout.index {
            index = try? PropertyListValue(binaryPropertyList: bytes)
            if index == nil { problem("index.plist is not a valid property list") }
            continue
          }
          seen.append((member.path, bytes.count, member.sha256 ?? ""))
          if member.path == ArchiveLayout.header {
            let format = (try? PropertyListValue(binaryPropertyList: bytes))
              .map { ArchiveHeader(reading: $0).formatVersion }
            if let format, !ArchiveLayout.formatVersions.contains(format) {
              problem("graphvault.plist: \(ArchiveLayout.unsupportedFormat(format, verb: "reads"))")
            }
          }
          if member.path == ArchiveLayout.modelDescriptor {
            do {
              model = try ModelDescriptor.decode(PropertyListValue(binaryPropertyList: bytes))
            } catch {
              problem("model/descriptor.plist: \(error)")
            }
          }
          let parts = member.path.split(separator: "/").map(String.init)
          guard parts.count == 3, parts[0] == "objects" else { continue }
          guard let model else {
            problem("\(member.path) comes before a readable model descriptor")
            continue
          }
          do {
            let items = try RecordDecoder(model: model, member: member.path).decodeChunk(bytes)
            for (record, manyToMany) in items {
              let root = model.root(of: record.entity)?.name ?? record.entity
              keys[root, default: []].insert(record.primaryKey)
              for (name, target) in record.toOne {
                references.append(
                  (
                    "\(record.reference).\(name)",
                    model.root(of: target.entity)?.name ?? target.entity, target.primaryKey
                  ))
              }
              for (name, rows) in manyToMany {
                guard
                  let destination = model.relationships(of: record.entity).first(where: {
                    $0.name == name
                  })?.destination
                else { continue }
                let destinationRoot = model.root(of: destination)?.name ?? destination
                for (key, _) in rows {
                  references.append(("\(record.reference).\(name)", destinationRoot, key))
                }
              }
            }
            objects[parts[1], default: 0] += items.count
          } catch {
            damagedEntities.insert(parts[1])
            problem("\(member.path): \(error)")
          }
        }
        readToTheEnd = true
      } catch {
        let failure = VaultError(wrapping: error)
        if failure.kind == .accessDenied || failure.kind == .inputMissing { throw failure }
        problem(
          "the archive cannot be read past member \(memberCount): \(VaultError(wrapping: error).detail)"
        )
      }
      if !headerFirst {
        problem(
          "the archive does not start with graphvault.plist: it is not a graphvault archive, or it is damaged"
        )
      }
      let complete = index != nil
      if let index {
        let listed = index["members"]?.arrayValue ?? []
        var indexed: [String: (Int64, String)] = [:]
        for entry in listed {
          if let path = entry["path"]?.stringValue {
            indexed[path] = (entry["size"]?.integerValue ?? -1, entry["sha256"]?.stringValue ?? "")
          }
        }
        for member in seen {
          guard let expected = indexed[member.path] else {
            problem("\(member.path) is not in the index")
            continue
          }
          if expected.0 != Int64(member.size) || expected.1 != member.sha256 {
            problem("\(member.path) is damaged: its size or SHA-256 differs from the index")
            let parts = member.path.split(separator: "/").map(String.init)
            if parts.count == 3 { damagedEntities.insert(parts[1]) }
          }
        }
        let present = Set(seen.map(\.path))
        for entry in listed where !present.contains(entry["path"]?.stringValue ?? "") {
          problem(
            "\(entry["path"]?.stringValue ?? "?") is in the index but missing from the archive")
        }
        for (entity, count) in index["objects"]?.dictionaryValue ?? [:]
        where Int(count.integerValue ?? -1) != objects[entity, default: 0] {
          problem(
            "the index counts \(count.integerValue ?? -1) objects of \(entity); the archive holds \(objects[entity, default: 0])"
          )
        }
      } else {
        problem(
          "the archive is incomplete: it has no index.plist (the backup was interrupted, or the file is truncated)"
        )
      }
      // References are judged only when every object was read: a cut archive lacks the rest.
      for reference in references
      where readToTheEnd && complete && !(keys[reference.root]?.contains(reference.key) ?? false) {
        problem(
          "\(reference.from) points at \(reference.root) p\(reference.key), which is not in the archive"
        )
      }
      let entities = Set(objects.keys).union(damagedEntities)
      return VerifyReport(
        archive: archivePath, ok: problems.isEmpty, complete: complete, members: memberCount,
        objects: objects,
        problems: problems, intactEntities: entities.subtracting(damagedEntities).sorted())
    }
  }
}

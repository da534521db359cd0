import ArgumentParser
import Foundation
import GraphVault

/// `graphvault find LOCATION --entity NAME [--where PREDICATE] [--history KEY]`: which
/// archives still hold the objects asked for.
struct FindCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "find",
    abstract: "Find which archives hold the objects asked for, or follow one object's history.",
    discussion: """
      For every archive in LOCATION (a folder, s3://BUCKET/PREFIX/, or one archive), each \
      store's newest first, prints the objects of --entity (its sub-entities included) that \
      --where matches. Of a plain zstd archive only the index, the header, the model and the \
      entity's own chunks are read (ranged reads on S3), each checked against the index; other \
      archives (encrypted, other compressions, older ones) are read whole. The predicate may \
      test the entity's own attributes only. --history KEY follows one object (by primary key, \
      or with --key by its key attribute's value) through each store's archives, oldest first: \
      when it appeared, each change, when it was gone. Followed by primary key, an object whose \
      entity has a uniqueness constraint on one attribute is found in archives of another store \
      (another store UUID: the app rebuilt its store) by that attribute's value in the first \
      archive that held it, and the line says so. Names are the store's newest archive's: an \
      entity or property its model renamed (renaming identifier) is looked for under its older \
      name in older archives. Exits 0 when something was found, 1 when \
      nothing was; when an archive could not be read (after reporting the others), 65 if one is \
      damaged, else 77 if a password is missing or wrong, else that archive's status.
      """
  )

  @Argument(help: "A folder of archives, s3://BUCKET/PREFIX/, or one archive.")
  var location: String

  @Option(
    help: ArgumentHelp(
      "The entity whose objects are looked for (sub-entities included).", valueName: "name"))
  var entity: String

  @Option(
    name: .customLong("where"),
    help: ArgumentHelp(
      "Only the objects matching this Core Data predicate on the entity's own attributes.",
      valueName: "predicate"))
  var predicate: String?

  @Option(
    help: ArgumentHelp(
      "Follow one object across the archives: its primary key (12 or p12), or its --key value.",
      valueName: "key"))
  var history: String?

  @Option(
    help: ArgumentHelp(
      "The attribute --history gives the value of, as ENTITY.ATTRIBUTE.",
      valueName: "ENTITY.ATTRIBUTE"))
  var key: String?

  @OptionGroup var display: DisplayOptions
  @OptionGroup var reading: ReadingOptions
  @OptionGroup var options: GlobalOptions

  func validate() throws {
    if key != nil && history == nil {
      throw ValidationError("--key names what --history gives; use it with --history")
    }
  }

  func run() throws {
    var status: Int32 = 0
    try Failure.exitOnError(json: options.json) {
      var settings = FindService.Options(entity: entity)
      settings.predicate = predicate
      settings.history = history
      settings.key = key
      settings.password = reading.password.source
      settings.allowUnencrypted = reading.allowUnencrypted
      let printsNow = history == nil && !options.json && !options.quiet
      let shown = ValueDisplay(display)
      let results = try StatusLine(command: "find", options: options, printsAsItGoes: printsNow)
        .showing { meter in
          settings.meter = meter
          return try FindService.find(in: Location.given(location), options: settings) { result in
            // Written unbuffered, so that the summary on standard error comes after it.
            if printsNow {
              FileHandle.standardOutput.write(Data(Self.lines(result, shown).utf8))
            }
          }
        }
      let read = results.reduce(Int64(0)) { $0 + $1.bytesRead }
      let total = results.reduce(Int64(0)) { $0 + $1.bytes }
      let story = history.map { _ in Self.history(results) }
      if options.json {
        try Output.json(
          FindReport(archives: results, history: story, bytesRead: read, bytes: total))
      } else if !options.quiet {
        if let story {
          FileHandle.standardOutput.write(Data(Self.lines(story, shown).utf8))
        }
        let share = total > 0 ? String(format: " (%.1f%%)", Double(read) * 100 / Double(total)) : ""
        FileHandle.standardError.write(
          Data(
            "read \(read) of \(total) bytes\(share) in \(results.count) archives\n".utf8))
      }
      for result in results {
        guard let error = result.error else { continue }
        // Most problems name their archive already.
        let named = error.contains(result.archive) ? error : "\(result.archive): \(error)"
        FileHandle.standardError.write(Data("graphvault: \(named)\n".utf8))
      }
      if let worst = ExitStatus.worst(of: results.compactMap(\.failure)) {
        status = worst.rawValue
      } else if !results.contains(where: { !$0.objects.isEmpty }) {
        status = 1
      }
    }
    if status != 0 { throw ExitCode(status) }
  }

  /// What `--json` prints.
  struct FindReport: Encodable {
    let archives: [FindService.ArchiveResult]
    let history: [Event]?
    let bytesRead: Int64
    let bytes: Int64
  }

  /// One step of an object's history.
  struct Event: Encodable {
    /// `absent`, `appeared`, `changed`, `unchanged` or `gone`.
    let event: String
    let archive: String
    let created: String?
    let store: String?
    /// For `appeared`, its values; for `changed`, `NAME: OLD -> NEW` per changed value.
    let details: [String]
    /// In an archive of another store than the one the object was first found in: the
    /// uniqueness constraint's value it was found by (`id='A1'`).
    let matchedBy: String?
    /// For `gone`: the object there most like it, which may be it re-created under another
    /// key (`Book p900, 9 of 10 values equal`); pointed at, never decided.
    let likelySuccessor: String?
  }

  /// An object's values as `NAME=VALUE`, key attributes first, then by name.
  static func pairs(_ object: FindService.Object) -> [String] {
    KeyAttributes.ordered(object.values.keys, keys: object.keys).map {
      "\($0)=\(object.values[$0]!)"
    }
  }

  static func lines(_ result: FindService.ArchiveResult, _ display: ValueDisplay) -> String {
    let when = result.created.map { "  \($0)" } ?? ""
    guard result.error == nil else { return "\(result.archive)\(when)  could not be read\n" }
    var text =
      "\(result.archive)\(when)  \(result.objects.isEmpty ? "none" : result.objects.count == 1 ? "1 object" : "\(result.objects.count) objects")\n"
    for object in result.objects {
      text +=
        "  \(object.entity) p\(object.primaryKey)  \(display.line(object.values, keys: object.keys))\n"
    }
    return text
  }

  /// Each store's archives oldest first, with what happened to the object in each.
  static func history(_ results: [FindService.ArchiveResult]) -> [Event] {
    var events: [Event] = []
    var byStore: [String: [FindService.ArchiveResult]] = [:]
    for result in results { byStore[result.store ?? "", default: []].append(result) }
    for store in byStore.keys.sorted() {
      var previous: FindService.Object?
      var seen = false
      for result in byStore[store]!.reversed() where result.error == nil {
        let object = result.objects.first
        let event: String
        var details: [String] = []
        switch (previous, object) {
        case (nil, nil): event = seen ? "gone" : "absent"
        case (nil, let now?):
          event = "appeared"
          details = pairs(now)
        case (_?, nil): event = "gone"
        case (let before?, let now?):
          let names = KeyAttributes.ordered(
            Set(before.values.keys).union(now.values.keys), keys: now.keys)
          details = names.compactMap { name in
            before.values[name] == now.values[name]
              ? nil : "\(name): \(before.values[name] ?? "nil") -> \(now.values[name] ?? "nil")"
          }
          event = details.isEmpty ? "unchanged" : "changed"
        }
        if object != nil { seen = true }
        let successor = result.likelySuccessor.map {
          "\($0.object.entity) p\($0.object.primaryKey), \($0.equal) of \($0.compared) values equal"
        }
        events.append(
          Event(
            event: event, archive: result.archive, created: result.created, store: result.store,
            details: details, matchedBy: result.matchedBy, likelySuccessor: successor))
        previous = object
      }
    }
    return events
  }

  static func lines(_ events: [Event], _ display: ValueDisplay) -> String {
    var text = ""
    for event in events {
      text += "\(event.created ?? event.archive)  \(event.event)"
      if event.event == "appeared" {
        text += "  \(display.line(event.details))"
      }
      text += "  \(event.archive)"
      if let matchedBy = event.matchedBy { text += "  (another store: found by \(matchedBy))" }
      if let successor = event.likelySuccessor {
        text += "  (most like it there, not decided: \(successor))"
      }
      text += "\n"
      if event.event == "changed" { for detail in event.details { text += "    \(detail)\n" } }
    }
    return text.isEmpty ? "no archives\n" : text
  }
}

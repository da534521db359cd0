import Foundation
import Migration
import ObjectModel
import PropertyList
import TestSupport
import Testing

/// A mapping model is untrusted input, like an archive: its expressions are decoded as data,
/// never evaluated or sent as messages, and anything malformed is refused naming the file.
@Suite("Forged mapping models")
struct ForgedMappingModelTests {
  /// An archived `FUNCTION(operand, selector, arguments…)`.
  static func function(
    _ builder: inout KeyedArchiveBuilder, operand variable: String, selector: String,
    arguments: [KeyedArchiveBuilder.Value]
  ) -> KeyedArchiveBuilder.Value {
    let operand = builder.makeObject(classes: ["NSVariableExpression", "NSExpression", "NSObject"])
    builder.set(.value(.string(variable)), forKey: "NSVariable", of: operand)
    builder.set(.inline(.integer(2)), forKey: "NSExpressionType", of: operand)
    let call = builder.makeObject(classes: ["NSFunctionExpression", "NSExpression", "NSObject"])
    builder.set(.value(.object(operand)), forKey: "NSOperand", of: call)
    builder.set(.value(.string(selector)), forKey: "NSSelectorName", of: call)
    builder.set(.value(builder.array(arguments)), forKey: "NSArguments", of: call)
    builder.set(.inline(.integer(4)), forKey: "NSExpressionType", of: call)
    return .object(call)
  }

  static func constant(_ builder: inout KeyedArchiveBuilder, _ text: String)
    -> KeyedArchiveBuilder.Value
  {
    let object = builder.makeObject(
      classes: ["NSConstantValueExpression", "NSExpression", "NSObject"])
    builder.set(.value(.string(text)), forKey: "NSConstantValue", of: object)
    builder.set(.inline(.integer(0)), forKey: "NSExpressionType", of: object)
    return .object(object)
  }

  /// Xcode's document for one entity mapping Post → Post whose attribute `title` has the
  /// archived expression `expression` (base64).
  static func document(expression: String?) -> String {
    let value = expression.map {
      #"<attribute name="valueexpressiondata" type="binary">\#($0)</attribute>"#
    }
    return """
      <?xml version="1.0" standalone="yes"?>
      <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
      <database>
        <object type="XDDEVMAPPINGMODEL" id="z1">
          <attribute name="sourcemodelpath" type="string">App/App.xcdatamodeld/App.xcdatamodel</attribute>
          <attribute name="destinationmodelpath" type="string">App/App.xcdatamodeld/App 2.xcdatamodel</attribute>
          <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z2"></relationship>
        </object>
        <object type="XDDEVENTITYMAPPING" id="z2">
          <attribute name="sourcename" type="string">Post</attribute>
          <attribute name="destinationname" type="string">Post</attribute>
          <attribute name="mappingtypename" type="string">Undefined</attribute>
          <attribute name="mappingnumber" type="int16">1</attribute>
          <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z3"></relationship>
        </object>
        <object type="XDDEVATTRIBUTEMAPPING" id="z3">
          <attribute name="name" type="string">title</attribute>
          \(value ?? "")
        </object>
      </database>
      """
  }

  static func write(_ text: String, in directory: TemporaryDirectory) throws -> String {
    let folder = directory.path("App.xcmappingmodel")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data(text.utf8).write(to: folder.appendingPathComponent("xcmapping.xml"))
    return folder.path
  }

  static let post = EntityDescription(
    name: "Post",
    attributes: [AttributeDescription(name: "title", type: .string, isOptional: true)])

  static func models() throws -> (ObjectModel, ObjectModel) {
    (
      try ObjectModel(name: "App", versionName: "App", entities: [post]),
      try ObjectModel(name: "App", versionName: "App 2", entities: [post])
    )
  }

  @Test func aSelectorCallInAValueExpressionIsRefusedQuotedAndNeverSent() throws {
    var builder = KeyedArchiveBuilder()
    let call = Self.function(
      &builder, operand: "source", selector: "removeItemAtPath:error:",
      arguments: [Self.constant(&builder, "/"), Self.constant(&builder, "x")])
    let bytes = builder.archive(root: call)
    let directory = try TemporaryDirectory()
    let path = try Self.write(
      Self.document(expression: Base64.encode(bytes, lineLength: 76)), in: directory)
    let model = try MappingModel.load(path: path)
    let expression = try #require(model.entityMappings.first?.attributes.first?.expression)
    #expect(expression.description == #"FUNCTION($source, "removeItemAtPath:error:", "/", "x")"#)
    let (source, destination) = try Self.models()
    #expect(model.covers(from: source, to: destination))
    #expect {
      _ = try MappingModel.rules(for: [model], from: source, to: destination)
    } throws: { error in
      let detail = (error as? MigrationError)?.detail ?? ""
      return detail.contains(
        "gives Post.title the value FUNCTION($source, \"removeItemAtPath:error:\"")
        && detail.contains("does not evaluate")
    }
  }

  @Test func anExpressionNestedTooDeeplyIsRefused() throws {
    var builder = KeyedArchiveBuilder()
    var value = Self.constant(&builder, "leaf")
    for _ in 0..<200 {
      value = Self.function(&builder, operand: "source", selector: "self", arguments: [value])
    }
    let bytes = builder.archive(root: value)
    #expect {
      _ = try MappingExpression.decode(archive: bytes)
    } throws: { error in
      (error as? MigrationError)?.detail.contains("deeper than") == true
    }
  }

  @Test(arguments: [
    ("<database><object type=", "is malformed"),
    ("<plist></plist>", "not <database>"),
    ("<database></database>", "holds 0 mapping models"),
  ])
  func aMalformedDocumentIsRefusedNamingTheFile(text: String, says: String) throws {
    let directory = try TemporaryDirectory()
    let path = try Self.write(text, in: directory)
    #expect {
      _ = try MappingModel.load(path: path)
    } throws: { error in
      guard let error = error as? MigrationError else { return false }
      return error.kind == .refused && error.detail.contains(path) && error.detail.contains(says)
    }
  }

  @Test func garbageInAValueExpressionIsRefusedNotDecodedAsSomethingElse() throws {
    let directory = try TemporaryDirectory()
    let path = try Self.write(
      Self.document(expression: Base64.encode(Array("bplist00 not really".utf8))), in: directory)
    #expect {
      _ = try MappingModel.load(path: path)
    } throws: { error in
      (error as? MigrationError)?.detail.contains("malformed") == true
    }
  }

  @Test func aCompiledModelWhoseRootIsAnotherClassIsRefused() throws {
    var builder = KeyedArchiveBuilder()
    let root = Self.constant(&builder, "x")
    let bytes = builder.archive(root: root)
    let directory = try TemporaryDirectory()
    let path = directory.path("Forged.cdm").path
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    #expect {
      _ = try MappingModel.load(path: path)
    } throws: { error in
      (error as? MigrationError)?.detail.contains("not NSMappingModel") == true
    }
  }

  @Test func aMissingMappingModelIsUnreadableNotRefused() throws {
    let directory = try TemporaryDirectory()
    #expect {
      _ = try MappingModel.load(path: directory.path("Nothing.cdm").path)
    } throws: { error in
      (error as? MigrationError)?.kind == .unreadableMapping
    }
  }
}

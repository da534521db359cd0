import Foundation
import ObjectStore
import TestSupport
import Testing

@Suite("Store loader")
struct StoreLoaderTests {
  @Test func theSorterMayUseEveryOtherCoreWhenTheIndexesAreBuilt() throws {
    let directory = try TemporaryDirectory()
    let loader = try StoreLoader(path: directory.path("new.sqlite").path)
    let others = ProcessInfo.processInfo.activeProcessorCount - 1
    #expect(loader.sorterThreads == min(others, 3))
  }
}
